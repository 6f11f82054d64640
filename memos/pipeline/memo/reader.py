"""What a reader got of a finished memo's prose, section by section (``manage.py reader_report``): the
sentences the model wrote, those withheld, and those code repaired before withholding anything.

A memo delivered before the repairs existed has none recorded: its sections are counted as they stand.
"""

from __future__ import annotations

from agents.memo.outputs import EvidenceOutput, MemoOutput
from agents.text.figures import brief_numbers
from agents.text.repair import SectionRepair, Writer, tally
from memos.models import AgentStep, Run
from memos.pipeline.language import brief_language
from memos.pipeline.memo.memo import reader_sections
from memos.pipeline.memo.plan import EVIDENCE, MEMO


def memo_reader_text(run: Run) -> list[SectionRepair]:
    outputs = dict(
        AgentStep.objects.filter(
            run=run, kind__in=[MEMO, EVIDENCE], status=AgentStep.Status.DONE
        ).values_list("kind", "output")
    )
    if MEMO not in outputs or EVIDENCE not in outputs:
        return []
    memo = MemoOutput.model_validate(outputs[MEMO])
    facts = [
        item
        for items in EvidenceOutput.model_validate(outputs[EVIDENCE]).by_specialist().values()
        for item in items
        if item.kind == "fact"
    ]
    brief = run.brief
    writer = Writer(
        known=frozenset(item.evidence_id for item in facts),
        keep=brief_numbers(brief.question, brief.audience, brief.notes),
        language=brief_language(brief),
    )
    recorded = {repair.section: repair for repair in memo.repairs}
    shown = [catalyst.event for catalyst in memo.shown_catalysts]
    out = []
    for title, texts in reader_sections(memo.memo, memo.analysis, shown):
        repair = recorded.get(title)
        if repair is None:
            out.append(tally(title, texts, texts, writer))
            continue
        # The catalysts a reader sees are those dated inside the window: fewer than were written and repaired.
        written = repair.written if len(repair.written) == len(texts) else texts
        counted = tally(
            title,
            written,
            texts,
            writer,
            resolved=repair.resolved,
            reasked=repair.reasked,
            asked=repair.asked,
        )
        out.append(counted.model_copy(update={"bound": repair.bound}))
    return out
