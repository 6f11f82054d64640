from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from memos.converters import EvidenceIdConverter
from memos.services.surfaces import workflow_urls
from memos.views import accounts, briefs, downloads, evidence, facts, home, ledger, review, runs, versions

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
    path("runs/<uuid:run_id>/", runs.run_page, name="run"),
    path("runs/<uuid:run_id>/steps/<int:step_id>/", runs.step_document, name="run_step"),
    path("runs/<uuid:run_id>/ledger/", ledger.run_ledger, name="run_ledger"),
    path("runs/<uuid:run_id>/retry/", runs.retry, name="run_retry"),
    path("versions/<int:version_id>/", versions.version_page, name="version"),
    path("versions/<int:version_id>/pdf/", downloads.version_pdf, name="version_pdf"),
    path("versions/<int:version_id>/files/<str:name>", downloads.version_file, name="version_file"),
    path("versions/<int:version_id>/vote/", review.vote, name="version_vote"),
    path("versions/<int:version_id>/recuse/", review.recuse, name="version_recuse"),
    path("versions/<int:version_id>/approve/", review.approve, name="version_approve"),
    path(
        "versions/<int:version_id>/request-changes/", review.request_changes, name="version_request_changes"
    ),
    path("versions/<int:version_id>/publish/", review.publish, name="version_publish"),
    path("versions/<int:version_id>/accept-partial/", review.accept_partial, name="version_accept_partial"),
    path("notices/", versions.notices_page, name="notices"),
    path("facts/", facts.facts_page, name="facts"),
    path("facts/<evidence:fact_id>/", evidence.fact_detail, name="fact"),
    path("sources/<evidence:doc_id>/", evidence.source_document, name="source_document"),
    # Each workflow's own pages and actions, declared in its package (memos.services.surfaces).
    *workflow_urls(),
]
