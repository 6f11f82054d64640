"""Layer 1: F1 (financial inference, from the figures) and F2 (trend and sentiment, from the documents), in
parallel. Each claim must cite ids that resolve; a claim that types a figure is withheld and code says so. A
side with nothing to read is not asked: its output declares the gap (silence beats filler).

Each claim is read against every figure it cites (agents.text.figure_claims, the reading the memo and the
deck share): a trend word must hold at each step of the cited series, the metric it names must be one it
cites, and advice with no finding in it is no inference. Where every claim F2 wrote was withheld as advice,
F2 says what its cited documents report, one line of code's quoting each, or that they report nothing the
desk can state: never an empty finding, never advice.

F2 is shown no promotion or spam (agents.agency.findings.screened, the screen's reading): a post selling a
trading course is no document to infer a move from, and its output lists each one left out and counts them.
A claim that repeats an earlier one (the same sentence once case, punctuation and the company's name are set
aside, or the same claim citing the same documents) is merged into it with both citations, before the moves
stage reads them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from agents.agency.checks import NOTHING_REPORTED, cited_figures, reported, shown
from agents.agency.findings import Screened, left_out_note, merge, names, same_as, screened
from agents.agency.narrowing import inference_schema
from agents.agency.outputs import Claim, InferenceOutput, Source, SourcesOutput
from agents.agency.schemas import Inference
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.text.figure_claims import CitedFigure, read_claim
from agents.text.scripts import Language
from agents.text.sentences import trim_cut
from memos.pipeline.agency.breadths import INFERENCES
from memos.pipeline.agency.plan import F1, F2, INFERENCE
from memos.pipeline.agency.reads import sources
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.evidence import fact_lines
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block, kept_numbers, language
from memos.pipeline.prompts import template


def run_inference(ctx: StageContext) -> None:
    gathered = sources(ctx)
    shown_f2 = screened(gathered.documents)
    gw = gateway()
    work: dict[str, Callable[[], InferenceOutput]] = {
        F1: partial(financial, gw, ctx, gathered) if gathered.facts else partial(silent, F1, gathered),
        F2: partial(trend, gw, ctx, gathered, shown_f2)
        if shown_f2.kept
        else partial(silent, F2, gathered, shown_f2),
    }
    done = ctx.fan_out(work, InferenceOutput, limit=gw.settings.max_concurrency, breadth=INFERENCES)
    # Code's line that the documents report nothing is no finding to propose a move from.
    if not any(c.statement != NOTHING_REPORTED for output in done.values() for c in output.claims):
        raise StageFailed(
            "neither F1 nor F2 found anything the data supports: no findings to propose moves from"
        )


def silent(name: str, gathered: SourcesOutput, screen: Screened | None = None) -> InferenceOutput:
    what = "figures" if name == F1 else "documents"
    gap = f"The desk holds no {what} for {gathered.ticker}: nothing to infer from."
    if screen is not None and screen.left_out:
        gap = (
            f"Every document the desk holds for {gathered.ticker} was left out as promotion or spam: "
            "nothing to infer from."
        )
    return InferenceOutput(
        name=name,
        claims=[],
        gaps=[gap, *gathered.gaps],
        asked_model=False,
        **_promotion(screen),
    )


def _promotion(screen: Screened | None) -> dict[str, Any]:
    if screen is None:
        return {}
    return {"promotional": screen.left_out, "promotional_note": left_out_note(screen)}


def financial(gw: LLMGateway, ctx: StageContext, gathered: SourcesOutput) -> InferenceOutput:
    facts = tuple(item.evidence_id for item in gathered.facts)
    values = {"facts": fact_lines(gathered.facts)}
    return _infer(
        gw,
        ctx,
        name=F1,
        prompt_name="agency_inference_financial",
        values=values,
        untrusted={},
        ids=facts,
        facts=facts,
        gathered=gathered,
    )


def trend(gw: LLMGateway, ctx: StageContext, gathered: SourcesOutput, screen: Screened) -> InferenceOutput:
    """F2 over the documents that are not promotion or spam: what it is shown is all it may cite."""
    ids = tuple(document.doc_id for document in screen.kept)
    values = {"peers": ", ".join(gathered.peers) or "none named"}
    untrusted = {"documents": document_block(screen.kept)}
    output = _infer(
        gw,
        ctx,
        name=F2,
        prompt_name="agency_inference_trend",
        values=values,
        untrusted=untrusted,
        ids=ids,
        facts=(),
        gathered=gathered,
        documents=screen.kept,
    )
    return output.model_copy(update=_promotion(screen))


def document_block(documents: list[Source]) -> str:
    """Each document with its id, kind, source, date and whom it is about; stale ones marked."""
    return "\n\n".join(
        f"[{d.doc_id}] {d.kind} · {d.source} · {d.published or 'undated'}{' · STALE' if d.stale else ''}"
        f" · about {d.about}\n{d.title}\n{d.text if d.text != d.title else ''}".rstrip()
        for d in documents
    )


def _infer(
    gw: LLMGateway,
    ctx: StageContext,
    *,
    name: str,
    prompt_name: str,
    values: dict[str, str],
    untrusted: dict[str, str],
    ids: tuple[str, ...],
    facts: tuple[str, ...],
    gathered: SourcesOutput,
    documents: list[Source] | None = None,
) -> InferenceOutput:
    company = ctx.company
    ctx.check()
    prompt = template(prompt_name, ctx.run).render(
        {
            "company": company.name,
            "ticker": company.ticker,
            "as_of": str(gathered.as_of or "unknown"),
            **values,
        },
        {"brief": brief_block(ctx), **untrusted},
        nonce=ctx.run.nonce,
    )
    context = CallContext(run_id=ctx.run_id, stage=INFERENCE, role=Role.INFERENCE)
    answer, _ = trim_cut(gw.complete(prompt, inference_schema(ids, facts), context=context))
    return checked(
        name,
        answer,
        set(ids),
        cited_figures(gathered.facts),
        kept_numbers(ctx),
        said_in=language(ctx),
        documents={document.doc_id: document for document in documents or []},
        company=(company.name, company.ticker),
    )


def checked(
    name: str,
    answer: Inference,
    ids: set[str],
    figures: Mapping[str, CitedFigure],
    keep: frozenset[str],
    *,
    said_in: Language | None = None,
    documents: Mapping[str, Source] | None = None,
    company: tuple[str, str] = ("", ""),
) -> InferenceOutput:
    """The claims that cite only ids the role was shown, type no figure and stand against every figure they
    cite, numbered F1.1, F1.2, ..., each that repeats an earlier one merged into it; where F2's were all
    advice, code's lines on what its documents report. ``company``: its name and ticker, set aside when
    claims are compared."""
    claims: list[Claim] = []
    dropped: list[str] = []
    merged: list[str] = []
    company_names = names(*company)
    advised: list[str] = []  # the ids the claims withheld as advice cite, in order
    facts = frozenset(figures)
    for index, claim in enumerate(answer.claims, start=1):
        unknown = [ref for ref in claim.citations if ref not in ids]
        text = shown(claim.statement, facts, keep, language=said_in)
        verdict = read_claim(
            claim.statement, [figures[r] for r in claim.citations if r in figures], finding=True
        )
        if unknown:
            dropped.append(f"claim {index} cited ids the run does not hold ({', '.join(unknown)})")
        elif not verdict.kept:
            dropped.append(f"claim {index} withheld: {verdict.reason}")
            advised += claim.citations if verdict.rule == "advice" else []
        elif text.withheld or text.empty:
            dropped.append(f"claim {index}: {text.note or 'nothing left to show'}")
        elif (same := same_as(text.text, claim.citations, claims, company_names)) is not None:
            at, why = same
            claims[at] = merge(claims[at], claim.citations)
            merged.append(f"claim {index} merged into {claims[at].claim_id} ({why}): \u201c{text.text}\u201d")
        else:
            claims.append(
                Claim(claim_id=f"{name}.{len(claims) + 1}", statement=text.text, citations=claim.citations)
            )
    gaps = [
        shown(gap, facts, keep, language=said_in).text or "(a gap stated with a figure, withheld)"
        for gap in answer.gaps
    ]
    if name == F2 and advised and not claims:
        claims = _reported(list(dict.fromkeys(advised)), documents or {}, keep, said_in, dropped)
    return InferenceOutput(name=name, claims=claims, gaps=gaps, dropped=dropped, merged=merged)


def _reported(
    cited: list[str],
    documents: Mapping[str, Source],
    keep: frozenset[str],
    said_in: Language | None,
    dropped: list[str],
) -> list[Claim]:
    """One line of code's per document the advice cited, quoting what it says; a document with no sentence
    code may quote is listed in ``dropped``."""
    lines: list[tuple[str, str]] = []
    for ref in cited:
        document = documents.get(ref)
        line = reported(document, keep, language=said_in) if document is not None else ""
        if line:
            lines.append((ref, line))
        elif document is not None:
            dropped.append(
                f"{ref} holds no sentence code may quote (each types a figure, is advice or is cut)"
            )
    if not lines:
        return [Claim(claim_id=f"{F2}.1", statement=NOTHING_REPORTED, citations=cited, by_code=True)]
    return [
        Claim(claim_id=f"{F2}.{number}", statement=line, citations=[ref], by_code=True)
        for number, (ref, line) in enumerate(lines, start=1)
    ]
