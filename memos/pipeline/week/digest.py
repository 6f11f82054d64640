"""The week's digest, written by code from its steps: the market's week in code's numbers, the flags with
their reasons, each flagged name's recommendation and drift against the week before, every new version,
what did not finish, and what the week cost. Frozen as the week's version (kind ``week``): its page is the
digest, and the committee votes on each new version from it (memos.pipeline.week.desk)."""

from __future__ import annotations

from django.utils import timezone

from agents.week.outputs import (
    DeckOut,
    DecksOutput,
    DigestOutput,
    LookOutput,
    NamesOutput,
    Part,
    ScreenOutput,
    Unfinished,
)
from memos.models import Run
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.week.plan import DECKS, DIGEST, LOOKS, NAMES, SCREEN, look_key, max_names
from memos.pipeline.workflows import Artefact, Ending

PART_WORDS = {"screen": "the week's screen", "memo": "the closer look", "deck": "the deck cycle"}


def run_digest(ctx: StageContext) -> None:
    ctx.once(DIGEST, DigestOutput, lambda: digest_of(ctx))


def digest_of(ctx: StageContext) -> DigestOutput:
    screen = ctx.output(SCREEN, SCREEN, ScreenOutput) or ScreenOutput(
        part=None, problem="the screen step did not finish"
    )
    names = ctx.output(NAMES, NAMES, NamesOutput)
    looks = [
        found
        for rank in range(1, max_names(ctx.config) + 1)
        if (found := ctx.output(LOOKS, look_key(rank), LookOutput)) is not None
    ]
    decks = ctx.output(DECKS, DECKS, DecksOutput)
    unfinished = unfinished_of(screen, names, looks, decks)
    started = ctx.run.started_at or ctx.run.created_at
    everything = [
        p
        for p in [
            screen.part,
            *(look.part for look in looks),
            *(d.part for d in (decks.decks if decks else [])),
        ]
        if p
    ]
    return DigestOutput(
        as_of=screen.as_of,
        screen=screen,
        names=names,
        looks=looks,
        decks=decks.decks if decks else [],
        unfinished=unfinished,
        llm_calls=sum(p.calls for p in everything),
        paid_calls=sum(p.paid_calls for p in everything),
        tokens=sum(p.tokens for p in everything),
        budget_tokens=ctx.run.budget_tokens,
        wall_s=round((timezone.now() - started).total_seconds(), 1),
    )


def _part_problem(part: Part, what: str, *, may_freeze_nothing: bool = False) -> Unfinished | None:
    """A part that froze no whole version: failed, froze nothing (unless it ``may_freeze_nothing``: a deck's
    cycle with nothing to change), or froze a partial version."""
    if part.finished:
        return None
    ended = part.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW)
    if may_freeze_nothing and ended and part.version_id is None:
        return None
    if part.partial:
        return Unfinished(what=what, reason=f"{part.version_label} is partial: {part.message}")
    return Unfinished(what=what, reason=f"its run ended {part.status.replace('_', ' ')}: {part.message}")


def unfinished_of(
    screen: ScreenOutput, names: NamesOutput | None, looks: list[LookOutput], decks: DecksOutput | None
) -> list[Unfinished]:
    """Every part of the week that did not finish, with the reason: a screen, a look or a cycle that failed
    or needs review, a name whose memo could not start, a step of the week that failed."""
    found: list[Unfinished] = []
    if screen.problem:
        found.append(Unfinished(what="the week's screen", reason=screen.problem))
    elif screen.part is not None and (problem := _part_problem(screen.part, "the week's screen")):
        found.append(problem)
    looked = {look.symbol for look in looks}
    for pick in names.chosen if names else []:
        if pick.name.symbol not in looked:
            found.append(
                Unfinished(what=f"the closer look at {pick.name.symbol}", reason="its step did not finish")
            )
    for look in looks:
        if look.skipped:
            found.append(Unfinished(what=f"the closer look at {look.symbol}", reason=look.skipped))
        elif look.part is not None and (
            problem := _part_problem(look.part, f"the closer look at {look.symbol}")
        ):
            found.append(problem)
    for deck in decks.decks if decks else []:
        if deck.part is not None and (
            problem := _part_problem(deck.part, f"the cycle of {deck.title}", may_freeze_nothing=True)
        ):
            found.append(problem)
    return found


def ending(ctx: StageContext) -> Ending:
    digest = ctx.output(DIGEST, DIGEST, DigestOutput)
    if digest is None:
        return Ending(Run.Status.FAILED, "the digest was not written")
    looks = sum(1 for look in digest.looks if look.part is not None)
    said = (
        f"the week ending {digest.as_of}: {looks} closer look{'' if looks == 1 else 's'}, "
        f"{sum(1 for d in digest.decks if d.part)} deck cycle(s), digest written"
    )
    if digest.unfinished:
        return Ending(
            Run.Status.NEEDS_REVIEW,
            f"{said}; not finished: " + "; ".join(f"{u.what} ({u.reason})" for u in digest.unfinished),
        )
    return Ending(Run.Status.DONE, said)


def _money(n: int) -> str:
    return f"{n:,}"


def sections(digest: DigestOutput) -> dict[str, str]:
    """The digest as plain text, section by section: the version's text, its diff and its e-mail."""
    screen = digest.screen
    market = screen.market or screen.problem or "No screen was read this week."
    if screen.part is not None and screen.part.badges:
        market += "\n" + "\n".join(screen.part.badges)
    flags = ", ".join(f"{screen.flags.get(flag, 0)} {flag}" for flag in ("RED", "YELLOW", "GREEN"))
    flagged = [
        f"{n.symbol} ({n.sector}): {n.flag}"
        + (f", its own move {n.alpha_1w.text}" if n.alpha_1w else "")
        + (f". {n.reason}" if n.reason else "")
        for n in screen.flagged
    ]
    looks = []
    for look in digest.looks:
        if look.skipped:
            looks.append(f"{look.symbol}: no memo ({look.skipped})")
            continue
        part = look.part
        head = f"{look.symbol}: {look.recommendation or 'no recommendation'}"
        head += f", sizing {look.sizing}" if look.sizing else ""
        head += f" ({part.version_label})" if part and part.version_label else ""
        head += f" [{part.message}]" if part and part.status == Run.Status.NEEDS_REVIEW else ""
        against = f" against {look.previous}" if look.previous else ""
        drift = (
            "; ".join(look.drift)
            if look.drift
            else (f"no drift{against}" if look.previous else "a first memo")
        )
        looks.append(f"{head}. Drift{against}: {drift}." if look.previous else f"{head}. {drift}.")
        looks += [f"  gap: {gap}" for gap in look.gaps]
        looks += [f"  {badge}" for badge in (part.badges if part else [])]
    skipped = [f"{s.symbol}: {s.reason}" for s in (digest.names.skipped if digest.names else [])]
    decks = [_deck_line(deck) for deck in digest.decks]
    cost = (
        f"{digest.llm_calls} LLM calls ({digest.paid_calls} asked of a model, the rest answered by the "
        "ledger), "
        f"{_money(digest.tokens)} tokens"
        + (f" of the week's budget of {_money(digest.budget_tokens)}" if digest.budget_tokens else "")
        + f", {digest.wall_s:.0f} s of wall time."
    )
    return {
        "The market's week": market,
        "Flags": f"{flags}.\n" + "\n".join(flagged) if flagged else f"{flags}. No name was flagged.",
        "Closer looks": "\n".join(looks) or "No name got a closer look this week.",
        "Left for another week": "\n".join(skipped) or "No flagged name was left out.",
        "Decks followed": "\n".join(decks) or "No deck the committee follows was on a flagged name.",
        "Not finished": "\n".join(f"{u.what}: {u.reason}" for u in digest.unfinished)
        or "Everything finished.",
        "What the week cost": cost,
    }


def _deck_line(deck: DeckOut) -> str:
    if deck.skipped:
        return f"{deck.title}: no cycle ({deck.skipped})"
    if deck.part is None:
        return f"{deck.title}: no cycle"
    return f"{deck.title}: {deck.line or 'the cycle froze nothing new'}"


def digest_artefact(ctx: StageContext) -> Artefact:
    digest = ctx.output(DIGEST, DIGEST, DigestOutput)
    if digest is None:
        raise StageFailed("the digest did not finish, so there is nothing to freeze")
    cited = [f.fact_id for f in digest.screen.market_figures]
    cited += [n.alpha_1w.fact_id for n in digest.screen.flagged if n.alpha_1w is not None]
    return Artefact(
        kind="week",
        title=f"The desk's week ending {digest.as_of or 'the last session'}"[:300],
        content=digest.model_dump(mode="json"),
        sections=sections(digest),
        evaluated=False,  # a digest is read, not voted on: the committee votes on the versions it links
        scores={"flags": digest.screen.flags, "llm_calls": digest.llm_calls, "tokens": digest.tokens},
        cited=tuple(dict.fromkeys(cited)),
    )
