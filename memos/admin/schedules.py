"""The admin's pages for the schedules a brief can have (a deck's refinement cycles, a memo's weekly
position); importing this module registers them (memos/admin/__init__.py imports it).

A schedule is set on the deck's page (memos.views.schedules), where the service checks that the brief is a
deck and who sets it; here superusers list and open schedules, switch them off, or delete them (a brief's
deletion takes its schedule along). A switch-off here holds, like an admin's on the deck's page: the brief's
analyst cannot switch it back on, only an admin (memos.pipeline.deck.desk.schedule.set_schedule). Nothing is
added or edited here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from memos.admin.base import RecordAdmin, superuser
from memos.models import MemoSchedule, RefineSchedule


@admin.register(RefineSchedule)
class RefineScheduleAdmin(RecordAdmin[RefineSchedule]):
    list_display = (
        "brief",
        "cadence",
        "next_due",
        "last_outcome_at",
        "last_outcome",
        "last_run_link",
        "set_by",
    )
    list_filter = ("enabled", "held_off_by_admin", "cycles_per_day")
    search_fields = ("brief__company__ticker", "brief__question", "last_outcome")
    list_select_related = ("brief__company", "set_by")
    actions = ("switch_off",)

    readonly_fields = ("next_due",)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)

    @admin.display(description="next cycle (UTC)")
    def next_due(self, obj: RefineSchedule) -> str:
        due = obj.next_due(timezone.now())
        return f"{due:%Y-%m-%d %H:%M}" if due is not None else "-"

    @admin.display(description="run")
    def last_run_link(self, obj: RefineSchedule) -> SafeString | str:
        if obj.last_run_id is None:
            return "-"
        return format_html(
            '<a href="{}">{}</a>', reverse("run", args=[obj.last_run_id]), str(obj.last_run_id)[:8]
        )

    @admin.action(description="Switch off the selected schedules (only an admin switches them back on)")
    def switch_off(self, request: HttpRequest, queryset: QuerySet[RefineSchedule]) -> None:
        # Held off: the brief's analyst cannot switch it back on; an admin does, on the deck's page.
        switched = queryset.exclude(enabled=False, held_off_by_admin=True).update(
            enabled=False, held_off_by_admin=True, set_by=request.user, set_at=timezone.now()
        )
        self.message_user(request, f"Switched off {switched} schedule{'' if switched == 1 else 's'}.")


@admin.register(MemoSchedule)
class MemoScheduleAdmin(RecordAdmin[MemoSchedule]):
    """Weekly memos: set on the memo's page (memos.pipeline.memo.desk.schedule); here superusers list them and
    switch them off, and the switch-off holds against the brief's analyst."""

    list_display = ("brief", "enabled", "weekday", "at", "last_outcome_at", "last_outcome", "set_by")
    list_filter = ("enabled", "held_off_by_admin", "weekday")
    search_fields = ("brief__company__ticker", "brief__question", "last_outcome")
    list_select_related = ("brief__company", "set_by")
    actions = ("switch_off",)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)

    @admin.action(description="Switch off the selected weekly memos (only an admin switches them back on)")
    def switch_off(self, request: HttpRequest, queryset: QuerySet[MemoSchedule]) -> None:
        switched = queryset.exclude(enabled=False, held_off_by_admin=True).update(
            enabled=False, held_off_by_admin=True, set_by=request.user, set_at=timezone.now()
        )
        self.message_user(request, f"Switched off {switched} weekly memo{'' if switched == 1 else 's'}.")
