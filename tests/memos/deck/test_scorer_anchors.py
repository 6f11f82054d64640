"""The deck's judge reads every level 0-5 of each dimension with its quoted example, from the governed rubric;
a level whose anchor a model wrote (adopted from a run, not since saved by an admin) is only pointed to."""

from __future__ import annotations

from agents.deck.rubrics import DECK_R2
from memos.pipeline.deck.judging import ADOPTED_IN_USER, dimensions_text
from memos.pipeline.prompts import rubric


def test_the_scorer_reads_each_level_zero_to_five_with_its_quoted_example() -> None:
    r2 = rubric(DECK_R2)
    text = dimensions_text(r2, protected=False, model_written=())
    line = next(row for row in text.splitlines() if row.startswith("- actionability"))
    for score in range(6):
        assert f"{score}: " in line
    assert line.count(', e.g. "') == 6
    assert '0: Neither the sections nor the deck end in a takeaway, e.g. "Services revenue by year.' in line
    adopted = dimensions_text(r2, protected=False, model_written=("actionability",))
    line = next(row for row in adopted.splitlines() if row.startswith("- actionability"))
    assert f"5: {ADOPTED_IN_USER}" in line and line.count(', e.g. "') == 5
