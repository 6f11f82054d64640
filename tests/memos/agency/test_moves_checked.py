"""Moves checked by code before the debate, on a run: the embedded model's "Acquisition of Google Inc." for
Apple is set aside as infeasible with the figures that show it, "Divestment from Apple Inc." as generic, and
neither is debated; a feasible acquisition and one of a company the desk holds no figures for are debated;
near-duplicates are merged with every persona credited; the run plans exactly the calls it makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from agents.agency.outputs import MovesOutput, RankingOutput
from agents.llm.fakes.reading import schema_enum
from memos.models import AgentStep, ArtefactVersion, FactRecord, LLMCall, Move, Run
from memos.pipeline import driver
from memos.services.runs import create_brief
from tests.memos.agency.support import start_agency
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)


def _proposing(moves: dict[str, tuple[str, str, str]]) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """A persona's answer with these (action, target, title) per risk, citing the claims it was shown."""

    def answer(schema: dict[str, Any], messages: Any) -> dict[str, Any]:
        cited = schema_enum(schema, "citations")[:2]
        return {
            risk: {
                "action": action,
                "target": target,
                "title": title,
                "move": f"The company should pursue this: {title.lower()}, within the year.",
                "reasoning": [
                    "The findings cited point to room for this move.",
                    "The step keeps the company's options open.",
                ],
                "risks": ["Execution could take longer than planned."],
                "citations": cited,
            }
            for risk, (action, target, title) in moves.items()
        }

    return answer


SCRIPT = {
    "agency_analyst_capital": [
        _proposing(
            {
                "low": ("divest", "Apple Inc.", "Divestment from Apple Inc."),
                "medium": ("acquire", "Tesla, Inc.", "Acquire Tesla"),
                "high": ("acquire", "Google Inc.", "Acquisition of Google Inc."),
            }
        )
    ],
    "agency_analyst_competition": [
        _proposing(
            {
                "low": ("acquire", "Shazam", "Buy Shazam"),
                "medium": ("acquire", "Shazam Ltd", "Acquisition of Shazam Ltd"),
                "high": ("acquire", "Google", "Acquire Google"),
            }
        )
    ],
}


def test_generic_and_infeasible_moves_are_set_aside_with_figures_and_the_others_debated() -> None:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question="Which moves should the company make next?")
    run = start_agency(brief, user, "quick", personas=("capital", "competition"))
    with fake_llm(SCRIPT) as server:
        driver.run_inline(str(run.pk))
        debated_titles = [
            entry
            for entry in server.requests
            if entry["role"] in ("critic", "board", "scoring")
            and ("Google" in str(entry["body"]) or "Divestment" in str(entry["body"]))
        ]
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    moves = MovesOutput.model_validate(AgentStep.objects.get(run=run, key="moves").output)
    titles = {move.title: move for move in moves.debated}
    aside = {move.title: move for move in moves.set_aside}
    # Debated: the acquisition within reach, and the merged Shazam (no figures held for it: not judged).
    assert set(titles) == {"Acquire Tesla", "Buy Shazam"}
    shazam = titles["Buy Shazam"]
    assert shazam.credited == ["competition"] and len(shazam.merged) == 1
    assert "not shown infeasible" in moves.not_judged[titles["Acquire Tesla"].move_id]
    assert "no company the desk can look up" in moves.not_judged[shazam.move_id]
    # Set aside: the company itself (generic), and Alphabet, with the figures, merged with "Acquire Google".
    assert set(aside) == {"Divestment from Apple Inc.", "Acquisition of Google Inc."}
    assert aside["Divestment from Apple Inc."].check.kind == "generic"
    google = aside["Acquisition of Google Inc."]
    assert google.check.kind == "infeasible" and google.credited == ["capital", "competition"]
    assert len(google.merged) == 1
    held = set(FactRecord.objects.values_list("fact_id", flat=True))
    cited = {figure.fact_id for figure in google.check.figures}
    assert cited <= held and any(f.startswith("GOOG:net_income") for f in cited)
    assert any(f.startswith("AAPL:cash") for f in cited) and "alphabet" in google.check.reason.lower()
    # Neither is debated: no debate call names them, their steps are skipped with the reason.
    assert debated_titles == []
    skipped = AgentStep.objects.get(run=run, key=f"debate-{google.move_id}")
    assert skipped.status == AgentStep.Status.SKIPPED and "infeasible" in skipped.summary
    assert Move.objects.get(run=run, move_id=google.move_id).debated_at is None
    ranking = RankingOutput.model_validate(AgentStep.objects.get(run=run, key="ranking").output)
    assert {row.title for row in ranking.ranked} == {"Acquire Tesla", "Buy Shazam"}
    merged_row = next(row for row in ranking.ranked if row.title == "Buy Shazam")
    assert merged_row.merged == 1
    # The plan now counts the calls the run makes: two debates, not four, and the jury on both.
    made = LLMCall.objects.filter(run=run).exclude(outcome=LLMCall.Outcome.CACHED).count()
    assert made == moves.planned_calls < moves.bound_calls
    # The page and the version show the set-aside moves with the reason and the figures.
    client = Client()
    client.force_login(user)
    step = AgentStep.objects.get(run=run, key="moves")
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "Set aside by code, not debated" in page and "infeasible" in page and "generic" in page
    version = ArtefactVersion.objects.get(brief=brief, kind="agency")
    assert "infeasible" in version.sections["Moves not debated"]
    shown = client.get(f"/versions/{version.pk}/").content.decode()
    assert "Set aside by code" in shown and google.check.figures[0].fact_id in shown
