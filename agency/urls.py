from django.contrib import admin
from django.urls import include, path, register_converter

from memos.converters import EvidenceIdConverter
from memos.views import briefs, evidence, home, ledger, rerun, runs

register_converter(EvidenceIdConverter, "evidence")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", home.home, name="home"),
    path("briefs/new/", briefs.new_brief, name="new_brief"),
    path("runs/<uuid:run_id>/", runs.run_page, name="run"),
    path("runs/<uuid:run_id>/steps/<int:step_id>/", runs.step_document, name="run_step"),
    path("runs/<uuid:run_id>/ledger/", ledger.run_ledger, name="run_ledger"),
    path("runs/<uuid:run_id>/rerun-evaluation/", rerun.rerun_evaluation_view, name="rerun_evaluation"),
    path("facts/<evidence:fact_id>/", evidence.fact_detail, name="fact"),
    path("sources/<evidence:doc_id>/", evidence.source_document, name="source_document"),
]
