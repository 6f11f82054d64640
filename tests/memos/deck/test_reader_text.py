"""A deck's words on the fake server, end to end: a figure the drafter typed that one of the run's figures
backs is printed as that figure and passes the fact-check; one no figure backs is asked about once and the
drafter's rewrite replaces it; ``manage.py reader_report`` counts both."""

from __future__ import annotations

from collections.abc import Mapping
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from agents.deck.fakes import deck_answer
from agents.deck.outputs import DraftOutput
from memos.models import AgentStep, FactRecord, Run
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)

UNBACKED = "Demand rose 9% on the quarter."
# The drafter's rewrite states no trend: one period of a figure cannot carry one (agents.text.figure_claims).
REWRITE = "Demand is discussed in the quarter's filing."


def drafter_types(schema: Mapping[str, Any], messages: list[Any]) -> Any:
    """The fake drafter's slide for whichever section asks first, its first bullet typing two figures: the
    latest revenue (one of the run's figures, though maybe not one this section was offered) and one no
    figure backs."""
    slide = deck_answer("drafter", schema, messages)
    try:  # on the fake server's thread: its connection is closed, or the test database cannot be dropped
        revenue = (
            FactRecord.objects.filter(metric="revenue", fiscal_period="FY").order_by("-fiscal_year").first()
        )
    finally:
        connection.close()
    assert revenue is not None
    millions = f"{revenue.value / 1_000_000:,.0f}"
    text = f"Revenue came to USD {millions} million in FY{revenue.fiscal_year}. {UNBACKED}"
    assert slide is not None and slide["bullets"]
    slide["bullets"][0] = slide["bullets"][0] | {"text": text}
    return slide


def test_a_backed_figure_is_printed_as_itself_and_an_unbacked_one_is_rewritten_by_the_drafter() -> None:
    run = deck_run("quick")
    script: dict[str, list[Any]] = {
        "deck_drafter": [drafter_types],
        "reask": [{"rewrites": [{"number": 1, "text": REWRITE}]}],
    }
    with fake_deck_llm(script) as server:
        driver.run_inline(str(run.pk))
        reasks = [entry for entry in server.requests if entry["prompt_name"] == "reask"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    draft = DraftOutput.model_validate(AgentStep.objects.get(run=run, key="draft-1").output)
    candidate = draft.candidate
    [slide] = [s for s in candidate.deck.slides if any(REWRITE in b.text for b in s.bullets)]
    bullet = slide.bullets[0]
    [revenue] = bullet.inline
    assert bullet.text == f"Revenue came to {revenue.display} in {revenue.period}. {REWRITE}"
    assert candidate.mismatches == [] and candidate.withheld == []
    assert candidate.resolved == [f"slide {slide.number}: bullet 1"]
    # One re-ask, for that slide only, quoting the sentence no figure backs (not the one code resolves).
    assert len(reasks) == 1
    quoted = next(m["content"] for m in reasks[0]["body"]["messages"] if m["role"] == "user")
    assert f"1. {UNBACKED}" in quoted and "Revenue came to" not in quoted
    [repair] = [r for r in draft.repairs if r.asked]
    assert (repair.section, repair.reasked, repair.withheld) == (f"slide {slide.number}", 1, 0)

    out = StringIO()
    call_command("reader_report", str(run.pk), "--json", stdout=out)
    report = out.getvalue()
    assert '"withheld": 0' in report and '"resolved": 1' in report and '"reasked": 1' in report
    assert '"reask_calls": 1' in report
