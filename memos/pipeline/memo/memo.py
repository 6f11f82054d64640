"""Stage 5, memo: code repairs the final iteration's prose before a reader sees it (a typed number a fact
backs becomes that fact; the synthesizer is asked once per section about the sentences still at fault; a
falsifier nothing of which can be shown is written from its binding: memos.pipeline.reader_text), applies
the LOW-tier firewall, keeps the catalysts dated inside the window, keeps the falsifier bindings the register
can watch (agents.memo.falsifiers.check: the metric has a fact for the company, the index names a
falsifier), and lists the sentences it still withholds for stating figures no fact backs or for slipping
into another script than the brief's.

When the evaluation failed, the memo is still delivered, marked not evaluated (``MemoOutput.evaluated`` is
False and ``not_evaluated`` says why): a later evaluation of the same run replaces it.
"""

from __future__ import annotations

from dataclasses import replace

from agents.evidence import EvidenceCatalog
from agents.memo import catalysts
from agents.memo import falsifiers as bindings
from agents.memo.audit import firewall
from agents.memo.outputs import EvaluationOutput, IterationOutput, MemoOutput, Withheld
from agents.memo.schemas import Analysis, FalsifierBinding, MemoDraft
from agents.text.figures import removed_count, withheld_sentences
from agents.text.patterns import Prose
from agents.text.reader import paragraph, without_citation_notes
from agents.text.repair import SectionRepair, Writer
from agents.text.scripts import Language
from agents.text.sentences import within_bounds
from memos.models import AgentStep
from memos.pipeline.context import StageContext
from memos.pipeline.errors import StageFailed
from memos.pipeline.evidence import fact_line, printed
from memos.pipeline.inputs import kept_numbers, language
from memos.pipeline.memo.plan import EVALUATION, ITERATION, MEMO, SYNTHESIS
from memos.pipeline.memo.reads import audit_output, catalog_of, catalyst_window, evidence
from memos.pipeline.memo.watches import latest_readings
from memos.pipeline.reader_text import Asking, Section, repair_sections

# What the evaluation stage hands on, drafted while its evaluator's call is in flight.
DRAFT = "memo-draft"


def run_memo(ctx: StageContext) -> None:
    ctx.once(MEMO, MemoOutput, lambda: delivered_memo(ctx))


def delivered_memo(ctx: StageContext) -> MemoOutput:
    """The last iteration's memo as a reader gets it (``memo_draft``), with the evaluator's verdict attached
    (or why there is none)."""
    draft = ctx.prepared(DRAFT, MemoOutput) or memo_draft(ctx)
    evaluation = ctx.output(EVALUATION, EVALUATION, EvaluationOutput)
    if evaluation is None:
        return draft.model_copy(update={"verdict": None, "not_evaluated": _why_not_evaluated(ctx)})
    return draft.model_copy(update={"verdict": evaluation.verdict, "not_evaluated": ""})


def memo_draft(ctx: StageContext) -> MemoOutput:
    """The last iteration's memo with its prose made whole where code can (typed numbers a fact backs
    resolved, the writer asked once per section about the rest, a withheld falsifier written from its
    binding), the firewall applied and the falsifiers bound to their readings; no verdict yet. It reads
    nothing of the evaluation, so the evaluation stage drafts it while its evaluator is asked."""
    catalog = catalog_of(evidence(ctx))
    done = list(ctx.outputs(SYNTHESIS, IterationOutput, kind=ITERATION).values())
    if not done:
        raise StageFailed("no synthesis iteration finished: there is no memo to deliver")
    final = done[-1].final
    fact_ids = frozenset(i for i, item in catalog.items.items() if item.kind == "fact")
    keep = kept_numbers(ctx)
    window = catalyst_window(ctx)
    writer = Writer(fact_ids, printed(catalog.items.values()), keep, language(ctx))
    written_memo, written_analysis = final.memo, final.analysis
    bound = latest_readings(ctx.company, (binding.metric for binding in written_memo.falsifier_bindings))
    kept_bindings, dropped_bindings = bindings.check(written_memo, bound)
    memo, analysis, repairs = _repaired(ctx, catalog, (written_memo, written_analysis), writer, kept_bindings)
    shown = catalysts.kept(memo, window)
    sections = reader_sections(memo, analysis, [c.event for c in shown])
    escape = done[-1].escape
    audited = audit_output(ctx)
    return MemoOutput(
        memo=memo,
        analysis=analysis,
        firewall=firewall(memo, catalog, audited.report),
        verdict=None,
        tiers={cid: catalog.items[cid].tier for cid in memo.load_bearing if cid in catalog.items},
        numbers_removed=sum(removed_count(text, fact_ids, keep) for _, texts in sections for text in texts),
        catalysts=shown,
        dropped_catalysts=catalysts.outside(memo, window),
        window=window,
        withheld=_withheld(sections, fact_ids, keep, language(ctx)),
        iterations=len(done),
        stopped_early=escape.reason if escape is not None and escape.stop else "",
        falsifier_bindings=kept_bindings,
        dropped_bindings=dropped_bindings,
        repairs=repairs,
        # Frozen with the memo: its contradiction flags, and the claims a later brief's memo is read against.
        claims=audited.directed,
        contradictions=audited.claim_contradictions,
        compared_with=audited.compared_with,
    )


def _repaired(
    ctx: StageContext,
    catalog: EvidenceCatalog,
    written_texts: tuple[MemoDraft, Analysis],
    writer: Writer,
    kept: list[FalsifierBinding],
) -> tuple[MemoDraft, Analysis, list[SectionRepair]]:
    """The memo and analysis with their prose repaired (memos.pipeline.reader_text), and what each section
    had repaired."""
    memo, analysis = written_texts
    company = ctx.company
    # Every fact a reference may name: the writer may reach for one the specialists did not cite.
    cited = sorted(
        (item for item in catalog.items.values() if item.kind == "fact"), key=lambda item: item.evidence_id
    )
    example = cited[0].evidence_id if cited else "TICKER:revenue:FY2024"
    ids = tuple(item.evidence_id for item in cited)
    asking = Asking(
        role="synthesizer",
        stage=MEMO,
        what=f"an investment memo on {company.name} ({company.ticker})",
        how="Mention a figure only as its fact id in double brackets, chosen from the list below, for "
        f"example [[{example}]]; the desk renders its value.",
        prose=Prose(refs=ids),
    )
    # Every section's re-ask shows the whole list (the writer may reach for any figure): asked one after
    # another, the embedded model reads it once (repair_sections).
    facts = "Fact ids you may reference (values rendered by code):\n" + (
        "\n".join(fact_line(item) for item in cited) or "(none)"
    )
    written = [
        Section("headline_thesis", "Headline thesis", [memo.headline_thesis], facts),
        Section("risk_budget", "Risk budget", [memo.risk_budget], facts),
        Section("sizing_rationale", "Sizing", [memo.sizing_rationale], facts),
        Section("catalysts", "Catalysts", [catalyst.event for catalyst in memo.catalysts], facts),
        Section("falsifiers", "Falsifiers", list(memo.falsifiers), facts),
        Section("macro", "Macro", [analysis.macro], facts),
        Section("meso", "Meso", [analysis.meso], facts),
        Section("micro", "Micro", [analysis.micro], facts),
    ]
    # The synthesizer copies code's "(cites ...)" lists into its prose: the memo's citations are its own.
    written = [
        replace(section, texts=[without_citation_notes(t) for t in section.texts]) for section in written
    ]
    repaired = repair_sections(ctx, written, writer, asking)
    texts = repaired.texts
    falsifier_texts, from_bindings = _bound_falsifiers(texts["falsifiers"], kept, writer)
    repairs = [
        repair
        if repair.section != "Falsifiers"
        else repair.recounted(falsifier_texts, writer, bound=from_bindings)
        for repair in repaired.repairs
    ]
    # A reference is longer than the figure it replaced: a text past its bound is cut back to its whole
    # sentences (model_copy would not check the bound; the stored memo must pass it).
    memo = MemoDraft.model_validate(
        within_bounds(
            MemoDraft,
            memo.model_dump()
            | {
                "headline_thesis": _one(texts["headline_thesis"], memo.headline_thesis),
                "risk_budget": _one(texts["risk_budget"], memo.risk_budget),
                "sizing_rationale": _one(texts["sizing_rationale"], memo.sizing_rationale),
                "catalysts": [
                    catalyst.model_dump() | {"event": event or catalyst.event}
                    for catalyst, event in zip(memo.catalysts, texts["catalysts"], strict=True)
                ],
                "falsifiers": [
                    text or original for text, original in zip(falsifier_texts, memo.falsifiers, strict=True)
                ],
            },
        )
    )
    analysis = Analysis.model_validate(
        within_bounds(
            Analysis, {key: _one(texts[key], getattr(analysis, key)) for key in ("macro", "meso", "micro")}
        )
    )
    return memo, analysis, repairs


def _one(texts: list[str], original: str) -> str:
    return texts[0] if texts and texts[0].strip() else original


def _bound_falsifiers(
    texts: list[str], kept: list[FalsifierBinding], writer: Writer
) -> tuple[list[str], int]:
    """Each falsifier nothing of which can be shown, written by code from its binding where it has one
    ("If revenue growth over the year turns negative, the thesis is wrong."): the model chose what is
    watched, code writes it, with no figure of the model's. How many were written so."""
    by_number = {binding.falsifier: binding for binding in kept}
    out: list[str] = []
    written = 0
    for number, text in enumerate(texts, start=1):
        binding = by_number.get(number)
        shown = paragraph(text, writer.known, writer.keep, writer.language)
        if binding is not None and shown.empty:
            out.append(bindings.sentence(binding))
            written += 1
        else:
            out.append(text)
    return out, written


def _why_not_evaluated(ctx: StageContext) -> str:
    failed = (
        AgentStep.objects.filter(
            run_id=ctx.run.pk, stage=EVALUATION, key=EVALUATION, status=AgentStep.Status.FAILED
        )
        .values_list("error", flat=True)
        .first()
    )
    if failed is None:
        raise StageFailed("the evaluator's report is missing: the evaluation stage did not finish")
    return failed or "the evaluation failed"


def reader_sections(memo: MemoDraft, analysis: Analysis, events: list[str]) -> list[tuple[str, list[str]]]:
    """The memo's prose by the section a reader finds it in."""
    return [
        ("Headline thesis", [memo.headline_thesis]),
        ("Risk budget", [memo.risk_budget]),
        ("Sizing", [memo.sizing_rationale]),
        ("Catalysts", events),
        ("Falsifiers", list(memo.falsifiers)),
        ("Macro", [analysis.macro]),
        ("Meso", [analysis.meso]),
        ("Micro", [analysis.micro]),
    ]


def _withheld(
    sections: list[tuple[str, list[str]]], fact_ids: frozenset[str], keep: frozenset[str], said_in: Language
) -> list[Withheld]:
    out = []
    for title, texts in sections:
        found = [kinds for text in texts for kinds in withheld_sentences(text, fact_ids, keep, said_in)]
        if found:
            kinds = list(dict.fromkeys(kind for sentence in found for kind in sentence))
            out.append(Withheld(section=title, sentences=len(found), kinds=kinds))
    return out
