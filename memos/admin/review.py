"""The admin's pages for frozen versions and their review; importing this module registers them
(memos/admin/__init__.py imports it).

Versions, the audit trail, votes, motions, the falsifier register and notices are read here, never written.
Votes, motions and notices move only through memos.services.review and memos.services.notifications, which
check who may do what and record it; a version's content and the audit trail are frozen in the database too
(migration 0008's triggers), and votes, motions and notices are guarded the same way (0013), so even a
careless admin class could not change them. The admin's pages show every vote's choice, the open ones'
too: the sealed ballot is the desk's pages' rule (memos.services.review), superusers hold the database
anyway, and so a superuser never votes. The review policy (the
quorum and threshold an approval needs) is the one row edited here. Superusers only, like the rest of the
admin: the votes' rationales and the audit trail are the committee's, and model permissions handed to a staff
member do not open these pages.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from memos.admin.base import RecordAdmin, SuperuserAdmin, superuser
from memos.models import ArtefactVersion, AuditEvent, FalsifierWatch, Motion, Notice, ReviewPolicy, Vote
from memos.services.accounts import Roles
from memos.services.notifications import members


def _short(digest: str) -> SafeString:
    return format_html('<code title="{}">{}</code>', digest, digest[:12])


class AuditInline(admin.TabularInline[AuditEvent, ArtefactVersion]):
    """The version's history on its own page, as the product's page shows it."""

    model = AuditEvent
    fields = ("created_at", "action", "actor", "detail", "content_hash")
    readonly_fields = fields
    ordering = ("created_at", "id")
    extra = 0
    can_delete = False
    show_change_link = True

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ArtefactVersion)
class ArtefactVersionAdmin(RecordAdmin[ArtefactVersion]):
    list_display = (
        "__str__",
        "kind",
        "status",
        "evaluated",
        "score_shown",
        "short_hash",
        "created_at",
        "published_at",
    )
    list_filter = ("status", "kind", "evaluated")
    search_fields = ("brief__company__ticker", "brief__question", "title", "content_hash")
    list_select_related = ("brief__company",)
    readonly_fields = ("on_the_desk",)
    inlines = (AuditInline,)

    @admin.display(description="score", ordering="score")
    def score_shown(self, obj: ArtefactVersion) -> str:
        if obj.score is None:
            return "not evaluated"
        moved = f" ({obj.score_delta:+g})" if obj.score_delta is not None else ""
        return f"{obj.score_label} {obj.score:g}{moved}"

    @admin.display(description="content hash")
    def short_hash(self, obj: ArtefactVersion) -> SafeString:
        return _short(obj.content_hash)

    @admin.display(description="page")
    def on_the_desk(self, obj: ArtefactVersion) -> SafeString:
        return format_html(
            '<a href="{}">open {} on the desk</a>', reverse("version", args=[obj.pk]), obj.label
        )


@admin.register(AuditEvent)
class AuditEventAdmin(RecordAdmin[AuditEvent]):
    """The audit trail: append-only in the database, read-only here."""

    list_display = ("created_at", "version", "action", "actor_shown", "short_hash")
    list_filter = ("action", "version__kind")
    search_fields = ("version__brief__company__ticker", "actor__username", "content_hash")
    list_select_related = ("version__brief__company", "actor")

    @admin.display(description="who", ordering="actor__username")
    def actor_shown(self, obj: AuditEvent) -> str:
        return obj.actor.username if obj.actor is not None else "the desk"

    @admin.display(description="content hash")
    def short_hash(self, obj: AuditEvent) -> SafeString:
        return _short(obj.content_hash)


@admin.register(Vote)
class VoteAdmin(RecordAdmin[Vote]):
    list_display = ("version", "member", "choice", "rationale", "cast_at", "changed_at")
    list_filter = ("choice",)
    search_fields = ("member__username", "version__brief__company__ticker", "rationale")
    list_select_related = ("version__brief__company", "member")


@admin.register(Motion)
class MotionAdmin(RecordAdmin[Motion]):
    list_display = (
        "version",
        "is_open",
        "opened_at",
        "min_votes",
        "approval_share",
        "closed_at",
        "closed_because",
    )
    list_filter = (("closed_at", admin.EmptyFieldListFilter),)
    search_fields = ("version__brief__company__ticker", "closed_because")
    list_select_related = ("version__brief__company",)

    @admin.display(description="open", boolean=True)
    def is_open(self, obj: Motion) -> bool:
        return obj.is_open


@admin.register(FalsifierWatch)
class FalsifierWatchAdmin(RecordAdmin[FalsifierWatch]):
    """The positions register: moved only by a version's freezing and by newer data (memos.services)."""

    list_display = ("version", "number", "metric", "condition", "baseline_fact_id", "status", "hit_fact_id")
    list_filter = ("status", "metric", "condition")
    search_fields = ("brief__company__ticker", "text", "baseline_fact_id", "hit_fact_id")
    list_select_related = ("version__brief__company",)


@admin.register(Notice)
class NoticeAdmin(RecordAdmin[Notice]):
    list_display = (
        "created_at",
        "recipient",
        "event",
        "version",
        "email_shown",
        "next_email_at",
        "read_at",
        "email_error",
    )
    list_filter = (
        "event",
        ("emailed_at", admin.EmptyFieldListFilter),
        ("email_failed_at", admin.EmptyFieldListFilter),
        ("read_at", admin.EmptyFieldListFilter),
    )
    search_fields = ("recipient__username", "recipient__email", "subject")
    list_select_related = ("recipient", "version__brief__company")

    @admin.display(description="e-mail")
    def email_shown(self, obj: Notice) -> str:
        """Sent, waiting for its next attempt, or given up (memos.services.notifications)."""
        if not obj.recipient.email:
            return "no address: in the app only"
        return obj.email_state or "not sent yet"


class ReviewPolicyForm(forms.ModelForm[ReviewPolicy]):
    class Meta:
        model = ReviewPolicy
        fields = ("min_votes", "approval_share")

    def clean_min_votes(self) -> int:
        value: int = self.cleaned_data["min_votes"]
        if value < 1:
            raise forms.ValidationError("At least one vote: with none, any reviewer could approve alone.")
        return value

    def clean_approval_share(self) -> float:
        value: float = self.cleaned_data["approval_share"]
        if not 0 <= value < 1:
            raise forms.ValidationError(
                "A share of the non-recused members, from 0 up to but not including 1: approvals must be "
                "more than it (0.5 means a majority), so 1 or more could never pass."
            )
        return value


@admin.register(ReviewPolicy)
class ReviewPolicyAdmin(SuperuserAdmin[ReviewPolicy]):
    """The quorum and threshold a reviewer's approval needs (memos.services.review): one row, edited here,
    never added beside it or deleted."""

    form = ReviewPolicyForm
    list_display = ("__str__", "min_votes", "approval_share", "updated_at")
    readonly_fields = ("updated_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # The migration made the row; add only brings it back should it ever be missing.
        return superuser(request) and not ReviewPolicy.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ReviewPolicy, form: Any, change: bool) -> None:
        obj.pk = 1  # the one row memos.services.review.policy() reads
        super().save_model(request, obj, form, change)
        committee = len(members(Roles.COMMITTEE))
        if obj.min_votes > committee:
            self.message_user(
                request,
                f"The committee has {committee} active member{'s' if committee != 1 else ''}, fewer than "
                f"the {obj.min_votes} votes the quorum needs: no version can be approved until it grows.",
                messages.WARNING,
            )
