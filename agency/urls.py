from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from memos.converters import EvidenceIdConverter
from memos.views import (
    accounts,
    briefs,
    decks,
    downloads,
    evidence,
    home,
    ledger,
    rerun,
    review,
    rubric_proposals,
    runs,
    schedules,
    versions,
)

register_converter(EvidenceIdConverter, "evidence")

urlpatterns = [
    path("admin/", admin.site.urls),
    # django.contrib.auth.urls, spelled out: its password reset is replaced by one whose link is SITE_URL's
    # (never the request's Host) and whose requests are throttled (memos.views.accounts).
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password_change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password_reset/", accounts.SitePasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password_reset/done/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("", home.home, name="home"),
    path("briefs/new/", briefs.new_brief, name="new_brief"),
    path("briefs/<int:brief_id>/schedule/", schedules.set_brief_schedule, name="brief_schedule"),
    path("briefs/<int:brief_id>/refine-now/", schedules.refine_now, name="brief_refine_now"),
    path(
        "briefs/<int:brief_id>/memo-schedule/", schedules.set_brief_memo_schedule, name="brief_memo_schedule"
    ),
    path("runs/<uuid:run_id>/", runs.run_page, name="run"),
    path("runs/<uuid:run_id>/steps/<int:step_id>/", runs.step_document, name="run_step"),
    path(
        "runs/<uuid:run_id>/steps/<int:step_id>/adopt-rubric/",
        rubric_proposals.adopt_rubric_view,
        name="adopt_rubric",
    ),
    path(
        "runs/<uuid:run_id>/steps/<int:step_id>/slides/<int:number>.png",
        decks.step_slide,
        name="run_step_slide",
    ),
    path("runs/<uuid:run_id>/ledger/", ledger.run_ledger, name="run_ledger"),
    path("runs/<uuid:run_id>/rerun-evaluation/", rerun.rerun_evaluation_view, name="rerun_evaluation"),
    path("versions/<int:version_id>/", versions.version_page, name="version"),
    path("versions/<int:version_id>/pdf/", downloads.version_pdf, name="version_pdf"),
    path("versions/<int:version_id>/report.html", downloads.version_report, name="version_report"),
    path("versions/<int:version_id>/slides/<int:number>.png", downloads.version_slide, name="version_slide"),
    path("versions/<int:version_id>/deck.pdf", downloads.version_deck_pdf, name="version_deck_pdf"),
    path("versions/<int:version_id>/deck.pptx", downloads.version_deck_pptx, name="version_deck_pptx"),
    path("versions/<int:version_id>/deck.json", decks.version_deck_json, name="version_deck_json"),
    path("versions/<int:version_id>/scores.json", decks.version_scores_json, name="version_scores_json"),
    path("versions/<int:version_id>/vote/", review.vote, name="version_vote"),
    path("versions/<int:version_id>/recuse/", review.recuse, name="version_recuse"),
    path("versions/<int:version_id>/score/", review.score, name="version_score"),
    path("versions/<int:version_id>/approve/", review.approve, name="version_approve"),
    path(
        "versions/<int:version_id>/request-changes/", review.request_changes, name="version_request_changes"
    ),
    path("versions/<int:version_id>/publish/", review.publish, name="version_publish"),
    path("notices/", versions.notices_page, name="notices"),
    path("facts/<evidence:fact_id>/", evidence.fact_detail, name="fact"),
    path("sources/<evidence:doc_id>/", evidence.source_document, name="source_document"),
]
