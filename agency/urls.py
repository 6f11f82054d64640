from django.contrib import admin
from django.urls import include, path, register_converter

from memos import views, views_runs
from memos.converters import EvidenceIdConverter

register_converter(EvidenceIdConverter, "evidence")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", views.home, name="home"),
    path("briefs/new/", views_runs.new_brief, name="new_brief"),
    path("runs/<uuid:run_id>/", views_runs.run_page, name="run"),
    path("runs/<uuid:run_id>/steps/<int:step_id>/", views_runs.step_document, name="run_step"),
    path("facts/<evidence:fact_id>/", views_runs.fact_detail, name="fact"),
    path("documents/<evidence:doc_id>/", views_runs.document_detail, name="document"),
]
