"""A deck's bullets read against the figures they carry, end to end on the fake server: the drafter writes
what the embedded agency wrote for Apple (issue 32), "operating cash flow has been increasing" over a year it
fell, and "cash flow" over the cash balance. Code keeps the figures, withholds the words, and the draft's page
says why (agents.text.figure_claims, through agents.deck.resolve); a true bullet keeps its words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from django.test import Client

from agents.deck.fakes import deck_answer
from agents.deck.outputs import DraftOutput
from memos.models import AgentStep, Run
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)

RISING = "Operating cash flow has been increasing."
CASH_FLOW = "Apple's cash flow has been increasing."
TRUE = "Revenue has been increasing."
OFFERED = ("AAPL:operating_cash_flow:FY2024", "AAPL:operating_cash_flow:FY2025", "AAPL:cash:FY2025")
TRUE_IDS = ("AAPL:revenue:FY2024", "AAPL:revenue:FY2025")


def _offered(schema: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(str(value) for value in node.get("enum", []))
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(schema)
    return found


def drafter(schema: Mapping[str, Any], messages: list[Any]) -> Any:
    """The fake drafter's slide; on a slide offered Apple's operating cash flow and cash, its bullets are the
    embedded model's misreadings and one true claim."""
    slide = deck_answer("drafter", schema, messages)
    offered = _offered(schema)
    if slide is None or "takeaway" not in slide or not set(OFFERED) <= offered:
        return slide
    bullets = [
        {"text": RISING, "figures": list(OFFERED[:2])},
        {"text": CASH_FLOW, "figures": [OFFERED[2]]},
    ]
    if set(TRUE_IDS) <= offered:
        bullets.append({"text": TRUE, "figures": list(TRUE_IDS)})
    return slide | {"bullets": bullets}


def test_bullets_their_figures_do_not_bear_out_lose_their_words_and_the_page_says_why(client: Client) -> None:
    run = deck_run("quick")
    with fake_deck_llm({"deck_drafter": [drafter] * 12}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    step = AgentStep.objects.get(run=run, key="draft-1")
    candidate = DraftOutput.model_validate(step.output).candidate
    [slide] = [
        s for s in candidate.deck.slides if {f.fact_id for b in s.bullets for f in b.figures} >= set(OFFERED)
    ]
    rising, cash_flow, *rest = slide.bullets
    assert rising.text == "" and [f.fact_id for f in rising.figures] == list(OFFERED[:2])
    assert cash_flow.text == "" and [f.fact_id for f in cash_flow.figures] == [OFFERED[2]]
    assert all(bullet.text == TRUE for bullet in rest)
    why = [c for c in candidate.contradicted if c.startswith(f"slide {slide.number}: ")]
    assert len(why) == 2
    assert "it says operating cash flow rose at each step" in why[0] and "fell 5.7% in FY2025" in why[0]
    assert "it names cash flow, but the figures it cites are the cash balance (AAPL:cash:FY2025)" in why[1]

    client.force_login(run.brief.owner)
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "fell 5.7% in FY2025 (the latest change)" in page
    assert "Words withheld because their own figures do not bear them out" in page
