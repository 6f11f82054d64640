"""The admin: companies, fact records with citations, source documents, briefs, runs, the LLM ledger, and the
versioned prompts and rubrics (memos.services.governance).

The admin is for the admin group (superusers). What code produced with its provenance (facts, source
documents, data loads, the LLM ledger) is read here, never written: a correction is a new load from its
source. Runs start only through the product's service, which checks the brief, the user and the profile.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, ClassVar, TypeVar

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponseBase
from django.urls import URLPattern, reverse
from django.utils.html import format_html
from django_rq.admin import QueueAdmin
from django_rq.models import Dashboard

from agents.data.formatting import format_value
from memos import (
    admin_calibration,  # noqa: F401  # registers the judge's calibration pages (memos/admin_calibration.py)
    admin_review,  # noqa: F401  # registers the review's pages (memos/admin_review.py)
    admin_schedules,  # noqa: F401  # registers the schedules' page (memos/admin_schedules.py)
)
from memos.admin_governance import PromptVersionAdmin, RubricVersionAdmin
from memos.models import (
    Brief,
    Company,
    DataLoad,
    FactRecord,
    LLMCall,
    PromptVersion,
    RubricVersion,
    Run,
    SourceDocument,
)
from memos.pipeline.jobs import enqueue_fact_refresh


def _link(url: str, text: str) -> str:
    if not url.startswith(("https://", "http://")):
        return text
    return format_html('<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>', url, text)


@admin.register(Company)
class CompanyAdmin(admin.ModelAdmin[Company]):
    list_display = ("ticker", "name", "cik", "taxonomy", "sector", "fact_count")
    list_filter = ("sector", "taxonomy")
    search_fields = ("ticker", "name")
    actions = ("refresh_facts",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Company]:
        # One query for the whole list, not one count per row.
        return super().get_queryset(request).annotate(_fact_count=Count("facts"))

    @admin.display(description="facts", ordering="_fact_count")
    def fact_count(self, obj: Company) -> int:
        return int(getattr(obj, "_fact_count", 0))

    @admin.action(description="Refresh SEC facts in the background")
    def refresh_facts(self, request: HttpRequest, queryset: QuerySet[Company]) -> None:
        queued = enqueue_fact_refresh(queryset.values_list("ticker", flat=True))
        self.message_user(
            request, f"Queued a refresh of SEC facts for {', '.join(queued)}; the worker stores them shortly."
        )


M = TypeVar("M", bound=models.Model)


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    """Rows that code wrote with their provenance: listed and opened, never added, changed or deleted
    (Django drops the bulk delete action along with the permission)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: M | None = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: M | None = None) -> list[str]:
        # Shown as text, not as disabled inputs: no form field is built for a page that saves nothing.
        return [*model_fields(self.model), *super().get_readonly_fields(request, obj)]


def model_fields(model: type[models.Model]) -> list[str]:
    """Every stored field of a model, read from it so a field added later is covered too."""
    return [f.name for f in model._meta.get_fields() if f.concrete and not f.auto_created]


@admin.register(FactRecord)
class FactRecordAdmin(ReadOnlyAdmin[FactRecord]):
    list_display = ("fact_id", "display_value", "period_end", "fiscal_period", "filed", "citation")
    list_filter = ("source", "fiscal_period", "metric", "company")
    search_fields = ("fact_id", "concept", "accession")
    list_select_related = ("company",)
    readonly_fields = ("citation",)
    ordering: ClassVar = ["company__ticker", "metric", "-period_end"]

    @admin.display(description="value", ordering="value")
    def display_value(self, obj: FactRecord) -> str:
        return format_value(obj.value, obj.unit)

    @admin.display(description="citation")
    def citation(self, obj: FactRecord) -> str:
        text = f"{obj.form} {obj.accession}".strip() or obj.label or obj.source
        return _link(obj.url, text)


@admin.register(SourceDocument)
class SourceDocumentAdmin(ReadOnlyAdmin[SourceDocument]):
    list_display = ("doc_id", "kind", "title", "published", "source", "open_url")
    list_filter = ("kind", "source")
    search_fields = ("doc_id", "title", "text")

    @admin.display(description="URL")
    def open_url(self, obj: SourceDocument) -> str:
        return _link(obj.url, "open")


@admin.register(Brief)
class BriefAdmin(admin.ModelAdmin[Brief]):
    list_display = ("company", "question", "audience", "owner", "created_at")
    list_select_related = ("company", "owner")


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin[Run]):
    """Runs start through memos.services.runs (which checks the user, the brief and the profile) and move
    only through the pipeline: here a run is read, with no "add" and no "save" (a save would write back the
    whole row over the pipeline's own updates). A superuser may still delete one that has no ledger rows."""

    list_display = ("id", "brief", "status", "stage", "profile", "tokens_spent", "created_at", "finished_at")
    list_filter = ("status", "stage")

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return admin.ModelAdmin.has_delete_permission(self, request, obj)


@admin.register(LLMCall)
class LLMCallAdmin(ReadOnlyAdmin[LLMCall]):
    """The ledger is evidence: it is read here, never edited."""

    list_display = (
        "created_at",
        "run",
        "stage",
        "role",
        "prompt_name",
        "model",
        "outcome",
        "attempt",
        "tokens_in",
        "tokens_out",
        "duration_ms",
    )
    list_filter = ("outcome", "role", "stage", "model")
    search_fields = ("request_hash", "prompt_name", "error")


@admin.register(DataLoad)
class DataLoadAdmin(ReadOnlyAdmin[DataLoad]):
    """Which snapshot (by content hash) was loaded when; written by ``manage.py bootstrap_demo``."""

    list_display = ("data_version", "loaded_at", "source", "counts")


# Prompts and rubrics: an edit is a new version, an action activates one (memos/admin_governance.py).
admin.site.register(PromptVersion, PromptVersionAdmin)
admin.site.register(RubricVersion, RubricVersionAdmin)


def _is_superuser(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_superuser)


def _superusers_only(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not _is_superuser(request):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return guarded


class SuperuserQueueAdmin(QueueAdmin):
    """django-rq's dashboard lists every job's arguments and can empty queues, delete and requeue jobs;
    django-rq lets any staff user in. Here every one of its URLs, including the JSON stats that it would
    otherwise open to staff or an API token, is for superusers only."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return _is_superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return _is_superuser(request)

    def get_urls(self) -> list[URLPattern]:
        urls: list[URLPattern] = super().get_urls()  # type: ignore[no-untyped-call]  # django_rq is untyped
        return [
            URLPattern(url.pattern, _superusers_only(url.callback), url.default_args, url.name)
            for url in urls
            if _works_here(url)
        ]


# The Dashboard "model" has no table, so the object pages ModelAdmin adds for it (history, change, delete and
# the catch-all redirect to them) can only fail; the scheduler page needs rq-scheduler, not installed here.
_UNUSABLE_RQ_PAGES = {
    "django_rq_dashboard_history",
    "django_rq_dashboard_delete",
    "django_rq_dashboard_change",
    "django_rq_scheduler_jobs",
}


def _works_here(url: URLPattern) -> bool:
    if url.name in _UNUSABLE_RQ_PAGES:
        return False
    return not (url.name is None and "object_id" in str(url.pattern))


# django_rq (earlier in INSTALLED_APPS) registered its own QueueAdmin; this one replaces it.
if admin.site.is_registered(Dashboard):
    admin.site.unregister(Dashboard)
admin.site.register(Dashboard, SuperuserQueueAdmin)
