"""The fact store in the admin: companies, fact records with their citations, source documents and data loads.

What code produced with its provenance is read here, never written: a correction is a new load from its
source (the companies' "refresh" action queues one).
"""

from __future__ import annotations

from typing import ClassVar

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from agents.data.formatting import format_value
from memos.admin.base import ReadOnlyAdmin
from memos.models import Company, DataLoad, FactRecord, SourceDocument
from memos.services.fact_refresh import enqueue_fact_refresh


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


@admin.register(DataLoad)
class DataLoadAdmin(ReadOnlyAdmin[DataLoad]):
    """Which snapshot (by content hash) was loaded when; written by ``manage.py bootstrap_demo``."""

    list_display = ("data_version", "loaded_at", "source", "counts")
