"""The memo as a frozen version's artefact: its output as JSON, its sections as plain text, its scores.

Code only: each section is the memo's text as a reader is shown it (agents.text.reader.paragraph): a
sentence in which the model typed a figure, or slipped into another script than the brief's, is withheld
whole, with code's one line for the paragraph at its end; a reference the run was given stays
``[[fact id]]`` (the version page shows the fact's value beside it). The score is the
evaluator's calibrated J+ as code recalibrated it; what it cites is the memo's own load-bearing ids plus every
reference in its text.
"""

from __future__ import annotations

from collections.abc import Callable

from agents.memo.outputs import MemoOutput
from agents.memo.schemas import JMINUS_DIMENSIONS
from agents.text.figures import fact_ids_in
from agents.text.reader import paragraph
from agents.text.scripts import Language
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.inputs import kept_numbers, language
from memos.pipeline.memo.plan import MEMO
from memos.pipeline.memo.reads import catalog_of, evidence
from memos.pipeline.workflows import Artefact

KIND = "memo"


def memo_artefact(ctx: StageContext) -> Artefact:
    output = ctx.output(MEMO, MEMO, MemoOutput)
    if output is None:
        raise StageFailed("the memo step did not finish, so there is nothing to freeze")
    company = ctx.company
    catalog = catalog_of(evidence(ctx))
    fact_ids = frozenset(i for i, item in catalog.items.items() if item.kind == "fact")
    keep, said_in = kept_numbers(ctx), language(ctx)
    sections = memo_sections(
        output,
        lambda text: reader_text(text, fact_ids, keep, said_in),
        lambda texts: reader_items(texts, fact_ids, keep, said_in),
    )
    verdict = output.verdict
    scores: dict[str, object] = {"evaluated": output.evaluated}
    if verdict is not None:
        scores |= {
            "decision": verdict.decision,
            "calibrated_jplus": verdict.calibrated_jplus,
            "calibrated_jminus": verdict.calibrated_jminus,
            "jminus_dimensions": list(JMINUS_DIMENSIONS),
            "inflation": verdict.inflation,
        }
    cited = dict.fromkeys(
        [*output.memo.load_bearing, *(i for text in sections.values() for i in fact_ids_in(text))]
    )
    return Artefact(
        kind=KIND,
        title=f"{company.ticker} memo: {ctx.run.brief.question}"[:300],
        content=output.model_dump(mode="json"),
        sections=sections,
        evaluated=output.evaluated,
        score=float(verdict.calibrated_jplus) if verdict is not None else None,
        score_label="calibrated J+" if verdict is not None else "",
        scores=scores,
        cited=tuple(cited),
    )


def reader_text(text: str, fact_ids: frozenset[str], keep: frozenset[str], said_in: Language) -> str:
    """``text`` as the memo page shows it, in plain text."""
    shown = paragraph(text, fact_ids, keep, said_in)
    parts = [f"[[{part.fact_id}]]" if part.kind == "fact" else part.text for part in shown.parts]
    if shown.note:
        parts.append(f"{' ' if parts else ''}[({shown.note})]")
    return "".join(parts)


def reader_items(texts: list[str], fact_ids: frozenset[str], keep: frozenset[str], said_in: Language) -> str:
    """A list section (the falsifiers) as the memo page shows it, an item a line; a section none of whose
    items can be shown says so once, not once an item."""
    shown = [paragraph(text, fact_ids, keep, said_in) for text in texts]
    if shown and all(item.empty and item.withheld for item in shown):
        reasons = list(dict.fromkeys(reason for item in shown for reason in item.reasons))
        return f"[(Nothing of this section can be shown: {'; '.join(reasons)}.)]"
    return "\n".join(reader_text(text, fact_ids, keep, said_in) for text in texts)


def memo_sections(
    output: MemoOutput, said: Callable[[str], str], said_items: Callable[[list[str]], str]
) -> dict[str, str]:
    """The memo in reading order; ``said`` turns what the model wrote into what a reader is shown, and
    ``said_items`` a list of such texts (code's own words, ids and dates go in as they are)."""
    memo, firewall = output.memo, output.firewall
    moved = f"{firewall.stated} -> " if firewall.final != firewall.stated else ""
    # The verdict as code drew it, under the recommendation: a committee voting on a memo its evaluator (or
    # code's reading of its thesis) sent back must see so where it reads the memo, not only on the run's page.
    # Code's words alone: the reason holds scores, counts and code's findings, never the evaluator's prose.
    verdict = output.verdict
    judged = {"Verdict": f"{verdict.decision}: {verdict.reason}"} if verdict is not None else {}
    return {
        "Recommendation": f"{moved}{firewall.final} ({firewall.reason}); sizing {memo.sizing}: "
        f"{said(memo.sizing_rationale)}",
        **judged,
        "Headline thesis": said(memo.headline_thesis),
        "Risk budget": said(memo.risk_budget),
        "Catalysts": "\n".join(
            f"{c.date} ({c.expected_sign}) {said(c.event)}" for c in output.shown_catalysts
        ),
        "Falsifiers": said_items(list(memo.falsifiers)),
        "Macro": said(str(output.analysis.macro)),
        "Meso": said(str(output.analysis.meso)),
        "Micro": said(str(output.analysis.micro)),
        "Load-bearing evidence": "\n".join(memo.load_bearing),
    }
