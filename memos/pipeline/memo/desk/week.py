"""The memo's part in the desk's week (memos.pipeline.composition.LooksCloser): a quick memo on each name the
week's screen flagged, in one line per company (the same brief every week), so each week's memo is the
next version of that company's weekly memo and drift compares it with the week before."""

from __future__ import annotations

from django.contrib.auth.models import User
from pydantic import ValidationError

from agents.memo.outputs import MemoOutput
from agents.memo.roster import QUICK
from memos.models import ArtefactVersion, Company, FactRecord, Run
from memos.pipeline.composition import CloserLook, FlaggedName, LooksCloser, PartRefused
from memos.pipeline.memo.desk.drift import memo_drift
from memos.pipeline.memo.plan import NAME as MEMO
from memos.services.errors import ServiceError
from memos.services.holdings import STATEMENT_SOURCES
from memos.services.runs import ask

QUESTION = "The desk's weekly look at {symbol}: what moved it on its own this week, and does the case hold?"


def start_look(owner: User, name: FlaggedName, focus: str, week: Run, enqueue: bool) -> Run:
    """A quick memo on ``name`` as a part of the week's run, with code's ``focus`` beside its brief."""
    try:
        return ask(
            owner=owner,
            ticker=name.symbol,
            question=QUESTION.format(symbol=name.symbol),
            workflow=MEMO,
            profile=QUICK,
            options={"focus": focus},
            enqueue=enqueue,
            scheduled=True,
            part_of=week,
        )
    except ServiceError as exc:
        raise PartRefused(str(exc)) from exc


def gaps(symbol: str) -> tuple[str, ...]:
    """What the desk lacks for a memo on ``symbol``: the memo then rests on prices and documents alone."""
    company = Company.objects.filter(ticker=symbol.upper()).first()
    if company is None:
        return ()
    if not FactRecord.objects.filter(company=company, source__in=STATEMENT_SOURCES).exists():
        return (f"the desk holds no filed statements for {symbol}: its memo rests on prices and documents",)
    return ()


def previous_memo(version: ArtefactVersion) -> ArtefactVersion | None:
    return (
        ArtefactVersion.objects.filter(
            brief_id=version.brief_id, kind=version.kind, number__lt=version.number
        )
        .order_by("-number")
        .first()
    )


def read_look(version: ArtefactVersion) -> CloserLook:
    try:
        output = MemoOutput.model_validate(version.content)
    except ValidationError as exc:
        raise PartRefused(f"{version.label} is not a memo this desk can read: {exc}") from exc
    before = previous_memo(version)
    return CloserLook(
        recommendation=output.firewall.final,
        sizing=output.memo.sizing,
        drift=tuple(
            f"{item.what}: before \u201c{item.before}\u201d, now \u201c{item.after}\u201d"
            for item in memo_drift(before, version)
        ),
        previous=f"v{before.number}" if before is not None else "",
    )


WEEK_PART = LooksCloser(start=start_look, read=read_look, gaps=gaps)
