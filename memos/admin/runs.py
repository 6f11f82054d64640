"""Briefs, runs and the LLM ledger in the admin. Runs start only through the product's service, which checks
the brief, the user and the profile; here they are read."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from memos.admin.base import ReadOnlyAdmin
from memos.models import Brief, LLMCall, Run


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
