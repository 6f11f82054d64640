"""What a workflow offers the desk's week (memos.pipeline.week), declared on its surface
(``Surface.week``), so the week composes the other workflows without importing one of them.

A committee's week is one routine (issue 33): screen the watchlist after Friday's close, look closer at the
names that moved on their own, refresh the decks the committee follows, then read one digest. Each step is
a part some workflow plays:
- ``Screens``: starts the week's screen and reads a frozen screen as the flags the week acts on;
- ``LooksCloser``: starts a closer look (a quick memo) at one flagged name, and reads its recommendation and
  its drift against that name's memo before;
- ``FollowsUp``: starts the next refinement cycle of each deck the committee follows on a flagged name.

The week finds the workflow that plays each part among the surfaces (through the engine's hooks: the engine
never imports the services); a part nobody plays is a step the week skips, saying so. A part that cannot do
what it is asked (a memo that cannot start, a screen it cannot read) raises ``PartRefused`` with a person's
message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from memos.models import ArtefactVersion, Run

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class PartRefused(Exception):
    """A part of the week cannot start or be read; the message says why, for the digest."""


@dataclass(frozen=True)
class Figure:
    """A number as code states it, with the fact it comes from (the digest links it)."""

    text: str  # "-4.21%"
    fact_id: str
    value: float | None = None


@dataclass(frozen=True)
class FlaggedName:
    """One symbol of the week's screen under its final flag, with the protocol's reason."""

    symbol: str
    name: str
    sector: str
    flag: str  # GREEN, YELLOW, RED
    reason: str
    alpha_1w: Figure | None  # its own move of the week (the alpha residual), where the prices held one


@dataclass(frozen=True)
class ScreenedWeek:
    """A frozen screen, as the week reads it."""

    as_of: date
    flags: dict[str, int]  # flag -> symbols under it
    names: tuple[FlaggedName, ...]  # every symbol screened, in the screen's order
    market: str  # the market's week, written by code from its figures
    market_figures: tuple[Figure, ...] = ()


@dataclass(frozen=True)
class Screens:
    # The last week the desk's data holds for a watchlist (or its own, given none; snapshot: the last Friday
    # on or before the last price date; live: None, the last close): what the week screens unless a person
    # names a week. PartRefused says why there is none.
    latest_week: Callable[[Sequence[str]], date | None]
    # (owner, the watchlist or () for the desk's own, the week's last session or None for the latest, the
    # week run, enqueue) -> the screen's run; PartRefused says why it cannot start.
    start: Callable[[User, Sequence[str], date | None, Run, bool], Run]
    read: Callable[[ArtefactVersion], ScreenedWeek]


@dataclass(frozen=True)
class CloserLook:
    """A frozen closer look at one name, as the digest shows it."""

    recommendation: str  # "buy", "hold", ... as the memo froze it
    sizing: str
    drift: tuple[str, ...]  # what it now says that its memo before contradicts, one line each (by code)
    previous: str  # the label of the memo it was compared with ("v3"), or "" for a first memo
    gaps: tuple[str, ...] = ()  # what the desk lacked for it (no filed statements), declared


@dataclass(frozen=True)
class LooksCloser:
    # (owner, the flagged name, the question code wrote for it, the week run, enqueue) -> the run;
    # PartRefused says why it cannot start (the name is then skipped with that reason).
    start: Callable[[User, FlaggedName, str, Run, bool], Run]
    read: Callable[[ArtefactVersion], CloserLook]
    # What the desk holds for a name before it looks (no filed statements, no prices): the gaps its look
    # will declare, in words; empty when it holds everything a look reads.
    gaps: Callable[[str], tuple[str, ...]] = lambda symbol: ()


@dataclass(frozen=True)
class FollowUp:
    """A deck the committee follows on a flagged name: its cycle's run, or why none started."""

    symbol: str
    brief_id: int
    title: str
    run: Run | None
    skipped: str = ""


@dataclass(frozen=True)
class FollowsUp:
    # (the flagged symbols, the week run, enqueue) -> each followed deck on them: its cycle's run or why not.
    start: Callable[[Sequence[str], Run, bool], list[FollowUp]]
    # One line about a frozen cycle's version for the digest ("score 4.1 of 5, ships").
    read: Callable[[ArtefactVersion], str] = field(default=lambda version: version.score_label)


WeekPart = Screens | LooksCloser | FollowsUp
