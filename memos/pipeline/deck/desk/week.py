"""The deck's part in the desk's week (memos.pipeline.composition.FollowsUp): the next refinement cycle of
each deck the committee follows (a deck brief whose refinement schedule is on) on a name the week's screen
flagged, each a part of the week's run."""

from __future__ import annotations

from collections.abc import Sequence

from memos.models import ArtefactVersion, RefineSchedule, Run
from memos.pipeline.composition import FollowsUp, FollowUp
from memos.pipeline.deck.desk.cycles import start_cycle
from memos.services.errors import ServiceError


def follow_up(symbols: Sequence[str], week: Run, enqueue: bool) -> list[FollowUp]:
    """A cycle of every followed deck on ``symbols``, or why it did not start (a cycle already running, the
    day's two cycles spent, a deck that never cleared its entry bar)."""
    followed = (
        RefineSchedule.objects.filter(enabled=True, brief__company__ticker__in=list(symbols))
        .select_related("brief__company")
        .order_by("brief__company__ticker", "brief_id")
    )
    found = []
    for schedule in followed:
        brief = schedule.brief
        assert brief.company is not None  # filtered on its ticker
        symbol, title = brief.company.ticker, f"{brief.company.ticker} deck: {brief.question}"[:200]
        try:
            run = start_cycle(brief=brief, enqueue=enqueue, scheduled=True, part_of=week)
        except ServiceError as exc:
            found.append(FollowUp(symbol, brief.pk, title, None, skipped=str(exc)))
            continue
        found.append(FollowUp(symbol, brief.pk, title, run))
    return found


def deck_line(version: ArtefactVersion) -> str:
    if version.score is None:
        return f"{version.label}: not scored"
    return f"{version.label}: {version.score_label or 'score'} {version.score:.2f}"


WEEK_PART = FollowsUp(start=follow_up, read=deck_line)
