"""The admin: companies, fact records with citations, source documents, briefs, runs and the LLM ledger."""

from __future__ import annotations

from typing import ClassVar

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from memos.jobs import enqueue_fact_refresh
from memos.models import Brief, Company, DataLoad, FactRecord, LLMCall, Run, SourceDocument
from memos.templatetags.desk import format_value


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


@admin.register(FactRecord)
class FactRecordAdmin(admin.ModelAdmin[FactRecord]):
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
class SourceDocumentAdmin(admin.ModelAdmin[SourceDocument]):
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
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ("id", "brief", "status", "stage", "profile", "tokens_spent", "created_at", "finished_at")
    list_filter = ("status", "stage")
    readonly_fields = ("heartbeat_at", "started_at", "finished_at", "tokens_spent", "data_version")


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin[LLMCall]):
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

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(DataLoad)
class DataLoadAdmin(admin.ModelAdmin[DataLoad]):
    """Which snapshot (by content hash) was loaded when; written by ``manage.py bootstrap_demo``."""

    list_display = ("data_version", "loaded_at", "source", "counts")

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
