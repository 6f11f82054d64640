"""The deck's own actions: its refinement schedule and "refine now" (the forms in
templates/memos/decks/_schedule.html, whose panel is memos.pipeline.deck.desk.schedule.schedule_panel), and a
committee member's scores of a deck for the judge's calibration (memos.pipeline.deck.desk.gold_scores).
Who may do what: memos.views.schedules and memos.services.review.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from memos.models.schedules import FIRST_SLOT, SECOND_SLOT
from memos.pipeline.deck.desk import gold_scores
from memos.pipeline.deck.desk.cycles import start_cycle
from memos.pipeline.deck.desk.schedule import CADENCES, set_schedule
from memos.services.errors import ServiceError
from memos.views.review import act
from memos.views.schedules import set_from_form, settable
from memos.views.versions import refused


class ScheduleForm(forms.Form):
    cycles = forms.TypedChoiceField(choices=[(str(n), label) for n, label in CADENCES], coerce=int)
    first_slot = forms.TimeField(required=False)
    second_slot = forms.TimeField(required=False)


@require_POST
@login_required
def set_brief_schedule(request: HttpRequest, brief_id: int) -> HttpResponse:
    return set_from_form(
        request,
        brief_id,
        kind="deck",
        who="sets when its deck is refined",
        form=ScheduleForm,
        what="The schedule",
        apply=lambda user, brief, data: set_schedule(
            brief=brief,
            user=user,
            cycles_per_day=data["cycles"],
            first_slot=data["first_slot"] or FIRST_SLOT,
            second_slot=data["second_slot"] or SECOND_SLOT,
        ),
    )


@require_POST
@login_required
def refine_now(request: HttpRequest, brief_id: int) -> HttpResponse:
    """Start a refinement cycle of the brief's deck now: its analyst or an admin, within the day's two."""
    user, version = settable(request, brief_id, "deck", "starts a refinement cycle")
    try:
        run = start_cycle(brief=version.brief, asked_by=user)
    except ServiceError as exc:
        return refused(request, version, f"No cycle was started: {exc}")
    return redirect("run", run_id=run.pk)


@require_POST
@login_required
def score(request: HttpRequest, version_id: int) -> HttpResponse:
    """A committee member's scores of a deck on the judge's rubrics (memos.pipeline.deck.desk.gold_scores)."""
    return act(
        request,
        version_id,
        lambda user, version, r: gold_scores.record_committee_scores(
            version=version, member=user, answers=r.POST
        ),
    )
