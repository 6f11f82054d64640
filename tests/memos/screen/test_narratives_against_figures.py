"""The screen's model prose is read against the figures it cites, as the memo's and the deck's are (issue 32,
5): a sentence that names one metric over another's figure is withheld with code's reason; a sentence that
reads its figure right stands as written."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agents.screen.fakes import _synthesis
from agents.screen.outputs import SynthesisOutput
from agents.text.figure_claims import cited_figure
from agents.text.scripts import ENGLISH
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.pipeline.screen.narratives import narrative
from tests.memos.pipeline_support import fake_llm
from tests.memos.screen.test_screen_run import _screen

pytestmark = pytest.mark.django_db(transaction=True)

ALPHA = re.compile(r"\[(XOM:alpha_1w:[0-9-]+)\]")


def _misreading(schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
    """The canned sector story, with one sentence that calls XOM's alpha its RSI."""
    user = str(messages[-1]["content"])
    answer = _synthesis(schema, user)
    found = ALPHA.search(user)
    if found is None:
        return answer
    answer["synthesis"] = (
        f"XOM's RSI was strong this week [[{found.group(1)}]]. XOM's alpha was its own [[{found.group(1)}]]."
    )
    return answer


def test_a_sector_story_that_calls_an_alpha_the_rsi_loses_that_sentence_with_the_reason() -> None:
    run = _screen(["XOM", "CVX"])  # one sector
    with fake_llm({"screen_senior_sector": [_misreading] * 4}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    stories = [
        SynthesisOutput.model_validate(step.output)
        for step in AgentStep.objects.filter(run=run, kind="synthesis", status="done").exclude(key="overall")
    ]
    story = next(s for s in stories if "XOM" in {call.symbol for call in s.calls})
    assert "RSI" not in story.synthesis
    assert "XOM's alpha was its own" in story.synthesis  # the sentence that reads its figure right stands
    assert any("RSI" in line and "alpha" in line for line in story.dropped), story.dropped


def test_the_reading_keeps_what_its_figures_bear_out() -> None:
    figure = cited_figure(
        fact_id="XOM:alpha_1w:2015-08-21",
        metric="alpha_1w",
        period="2015-08-21",
        value="-0.024",
        shown="-2.40%",
        unit="ratio",
    )
    assert figure is not None
    figures = {figure.fact_id: figure}
    kept = narrative(
        "XOM's alpha was negative [[XOM:alpha_1w:2015-08-21]].", {figure.fact_id}, ENGLISH, figures
    )
    assert kept.text and not kept.note
    wrong = narrative("XOM's RSI was low [[XOM:alpha_1w:2015-08-21]].", {figure.fact_id}, ENGLISH, figures)
    assert not wrong.text and "RSI" in wrong.note


def _overclaiming(schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
    """The canned sector story, with each symbol's reason claiming strong evidence of a transient driver
    (the embedded 1.5B's words, in a week whose news it had not been given)."""
    answer = _synthesis(schema, str(messages[-1]["content"]))
    for call in answer["symbols"]:
        call["flag_reason"] = "Its move is explained by strong evidence of a transient driver. It fell."
    answer["synthesis"] = "The market moved the sector. The news explains the rest of the move."
    return answer


def test_a_reason_claiming_more_evidence_than_the_news_holds_loses_that_sentence() -> None:
    run = _screen(["XOM", "CVX", "BP"])  # one sector, whose 2015 tweets are weak evidence at best
    with fake_llm({"screen_senior_sector": [_overclaiming] * 4}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    step = AgentStep.objects.filter(run=run, kind="synthesis", status="done").exclude(key="overall").first()
    assert step is not None
    story = SynthesisOutput.model_validate(step.output)
    assert story.calls
    for call in story.calls:
        assert call.flag_reason == "It fell."  # the claim withheld, the rest standing
    assert any("claims strong evidence where code graded" in line for line in story.dropped), story.dropped
    # The sector's news here is weak, not none: "the news explains" stands; strong evidence never does.
    assert story.synthesis.startswith("The market moved the sector.")
