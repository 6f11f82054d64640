"""The R2 loop and refinement cycles against the fake server with a scripted judge (seed 001 sections 4-5):
code accepts +0.20 and rejects +0.10, rejects a protected drop beyond tau and any figure that does not trace
whatever the composite, blocks a lap on judge drift, stops on a plateau, and a later cycle costs nothing
when the deck is already at the ship bar with no new data."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from agents.deck.outputs import BaselineOutput, DeckOutput, LapOutput
from memos.models import AgentStep, ArtefactVersion, FactRecord, Notice, Run
from memos.pipeline import driver
from memos.pipeline.deck.data import deck_facts
from memos.pipeline.deck.desk.cycles import start_cycle
from memos.services.errors import ServiceError
from memos.services.runs import create_brief
from tests.memos.deck_support import deck_run, fake_deck_llm
from tests.memos.pipeline_support import person
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

IMPROVEMENT = (
    "actionability",
    "executive_altitude",
    "visual_digestibility",
    "clean_concise_story",
    "metric_traceability",
)
PROTECTED = ("scope_adherence", "story_integrity", "visual_integrity")


def judged(a: int, e: int, v: int, s: int, t: int, *, story: int = 4) -> dict[str, Any]:
    """An R2 judgement: the five improvement scores (R2 = .25a + .2e + .2v + .2s + .15t), protected at 4."""
    values = dict(zip(IMPROVEMENT, (a, e, v, s, t), strict=True)) | dict.fromkeys(PROTECTED, 4)
    values["story_integrity"] = story
    return {
        "scores": [
            {"dimension": k, "score": n, "evidence": "supports holding the position"}
            for k, n in values.items()
        ],
        "weakest": [{"slide": 1, "dimension": "actionability", "problem": "The takeaway is not a decision."}],
    }


def gate(score: int) -> dict[str, Any]:
    dims = ("thesis_clarity", "coverage_depth", "narrative_flow", "visual_baseline", "actionability")
    return {
        "scores": [
            {"dimension": d, "score": score, "evidence": "supports holding the position"} for d in dims
        ],
        "weakest": [{"slide": 1, "dimension": "thesis_clarity", "problem": "The thesis comes late."}],
    }


def revision(lap: int, chart: list[str], *, figures: list[str] | None = None) -> dict[str, Any]:
    """A replacement for slide 3 (the Thesis section's: slide 1 is code's title slide, slide 2 the executive
    summary) with words of its own per lap (so each candidate is a new deck), keeping a
    chart of as many figures as the draft's (removing one would break visual integrity)."""
    slide = {
        "section": "Thesis",
        "title": f"The filed figures, said plainly (draft {chr(64 + lap)})",
        "takeaway": "Keep the position while growth holds.",
        "bullets": [{"text": f"Revision {chr(64 + lap)} of the opening", "figures": figures or []}],
        "table": None,
        "chart": {"title": "Revenue by fiscal year", "kind": "bar", "points": chart},
    }
    return {"slides": [{"number": 3, "slide": slide}], "remove": [], "add": [], "reason": "Plainer."}


def revenue_series(run: Run) -> list[str]:
    assert run.brief.company is not None
    annual = [
        f.fact_id for f in deck_facts(run.brief.company) if f.metric == "revenue" and f.fiscal_period == "FY"
    ]
    return annual[-3:]


BASE = judged(3, 3, 3, 3, 3)  # R2 3.00
LAP2 = judged(3, 4, 3, 3, 3)  # R2 3.20


def test_code_accepts_and_rejects_each_lap_by_the_rubric_and_stops_on_a_plateau() -> None:
    run = deck_run("full")
    chart = revenue_series(run)
    script = {
        "deck_gate": [gate(4)],
        "deck_scorer": [
            BASE,
            judged(4, 3, 3, 3, 2),  # lap 1: +0.10, rejected
            LAP2,  # lap 2: +0.20, accepted
            judged(4, 4, 3, 3, 3, story=3),  # lap 3: +0.25 but story integrity fell by 1 > tau, rejected
            judged(4, 4, 4, 4, 4),  # lap 4: +0.80 but a figure that does not trace, rejected
            judged(3, 4, 4, 3, 3),  # lap 5: +0.20 but the judge drifted on the unchanged best, rejected
        ],
        "deck_rescore": [BASE, BASE, LAP2, LAP2, judged(5, 4, 3, 3, 3)],
        "deck_reviser": [
            revision(1, chart),
            revision(2, chart),
            revision(3, chart),
            revision(4, chart, figures=["AAPL:revenue:FY1999"]),
            revision(5, chart),
        ],
    }
    with fake_deck_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message

    laps = [
        LapOutput.model_validate(s.output)
        for s in AgentStep.objects.filter(run=run, kind="lap", status="done").order_by("position")
    ]
    assert [lap.decision.accepted for lap in laps] == [False, True, False, False, False], [
        (lap.decision.reasons, lap.error) for lap in laps
    ]
    assert [lap.decision.margin for lap in laps] == [0.10, 0.20, 0.25, 0.80, 0.20], [
        lap.scored.ceilings for lap in laps if lap.scored
    ]
    assert any("less than the +0.15 required" in r for r in laps[0].decision.reasons)
    assert any("protected regression: story_integrity" in r for r in laps[2].decision.reasons)
    assert any(r.startswith("truth") for r in laps[3].decision.reasons)
    assert laps[4].drift == ["actionability 3 -> 5"] and any(
        "judge drift" in r for r in laps[4].decision.reasons
    )
    assert [lap.best for lap in laps] == [3.0, 3.2, 3.2, 3.2, 3.2]
    assert laps[-1].stop == "plateau"
    skipped = AgentStep.objects.filter(run=run, kind="lap", status="skipped").count()
    assert skipped == 3  # laps 6-8 were not needed

    # Only slide 3 (the work order's) changed in the accepted candidate; every other slide is the draft's.
    output = DeckOutput.model_validate(AgentStep.objects.get(run=run, kind="deck").output)
    baseline = BaselineOutput.model_validate(AgentStep.objects.get(run=run, key="baseline").output)
    before = baseline.model_dump(mode="json")["deck"]["slides"]
    after = output.model_dump(mode="json")["deck"]["slides"]
    assert after[2] != before[2] and after[:2] == before[:2]
    # The sources slide lists what the slides cite: the revised slide's chart changed it too.
    assert after[3:-1] == before[3:-1]
    assert laps[1].changed == [3]

    version = ArtefactVersion.objects.get(run=run)
    assert version.score == 3.2
    assert [entry["accepted"] for entry in version.content["changelog"]] == [False, True, False, False, False]


def _at_ship_bar() -> Run:
    run = deck_run("quick")
    with fake_deck_llm({"deck_gate": [gate(5)], "deck_scorer": [judged(5, 5, 5, 5, 5)]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert "reached the ship bar" in run.status_message
    return run


def test_a_cycle_at_the_ship_bar_with_no_new_data_makes_no_call_and_freezes_nothing() -> None:
    first = _at_ship_bar()
    cycle = start_cycle(brief=first.brief, enqueue=False)
    with fake_deck_llm() as server:
        driver.run_inline(str(cycle.pk))
        assert server.request_count == 0
    cycle.refresh_from_db()
    assert cycle.status == Run.Status.DONE and "nothing new to freeze" in cycle.status_message
    assert ArtefactVersion.objects.filter(brief=first.brief).count() == 1


def test_fresh_data_opens_a_new_epoch_and_the_cycle_rebaselines_and_freezes_a_new_version() -> None:
    first = _at_ship_bar()
    # A restated filing: the fact store's revenue for the latest year changes.
    deck = DeckOutput.model_validate(AgentStep.objects.get(run=first, kind="deck").output).deck
    placed = next(iter(deck.figures()))
    FactRecord.objects.filter(fact_id=placed).update(
        value=FactRecord.objects.get(fact_id=placed).value + 1_000_000
    )
    cycle = start_cycle(brief=first.brief, enqueue=False)
    with fake_deck_llm({"deck_scorer": [judged(4, 4, 4, 4, 4)]}) as server:
        driver.run_inline(str(cycle.pk))
        asked = {request["prompt_name"] for request in server.requests}
    cycle.refresh_from_db()
    assert cycle.status == Run.Status.DONE, cycle.status_message
    baseline = BaselineOutput.model_validate(AgentStep.objects.get(run=cycle, key="baseline").output)
    assert baseline.previous_epoch is not None and not baseline.carried
    assert "deck_scorer" in asked and "deck_drafter" not in asked and "deck_scope" not in asked
    versions = ArtefactVersion.objects.filter(brief=first.brief).order_by("number")
    assert [v.number for v in versions] == [1, 2]
    before, after = versions[0].score, versions[1].score
    assert before is not None and after is not None and after < before  # truth over a prettier score


def test_a_second_cycle_while_one_runs_is_refused_and_a_brief_without_a_deck_has_none() -> None:
    first = _at_ship_bar()
    refined_now = start_cycle(brief=first.brief, asked_by=first.brief.owner, enqueue=False)
    assert not refined_now.scheduled  # a person's "refine now" is a person's run
    with pytest.raises(ServiceError, match="already queued or running"):
        start_cycle(brief=first.brief, enqueue=False)
    never_ran = create_brief(owner=first.brief.owner, ticker="AAPL", question="A deck brief that never ran")
    with pytest.raises(ServiceError, match="no deck version yet"):
        start_cycle(brief=never_ran, enqueue=False)


def test_the_cycle_token_budget_stops_the_loop_cleanly_before_a_lap() -> None:
    with changed("memos.pipeline.deck", cycle_budget_tokens=1):
        run = deck_run("full")
    with fake_deck_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert "token budget" in run.status_message
    assert not AgentStep.objects.filter(run=run, kind="lap", status="done").exists()
    assert ArtefactVersion.objects.filter(run=run).exists()  # the best so far is still frozen for review


def test_a_deck_that_cannot_clear_the_entry_bar_is_escalated_frozen_unevaluated_and_announced() -> None:
    committee = person("cora", "committee")
    run = deck_run("quick")  # one rebuild at most
    with fake_deck_llm({"deck_gate": [gate(2), gate(3)]}) as server:
        driver.run_inline(str(run.pk))
        drafted = [r for r in server.requests if r["prompt_name"] == "deck_drafter"]
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW and "can't clear the entry bar" in run.status_message
    # Every section's slide drafted for the first draft and again for its one rebuild, which was told why
    # (the fake scope's five sections less "Risks", which code's risks slide answers).
    assert len(drafted) == 2 * 4
    assert all("did not clear the entry bar" in r["body"]["messages"][1]["content"] for r in drafted[5:])
    assert set(AgentStep.objects.filter(run=run, stage="refine").values_list("status", flat=True)) == {
        "skipped"
    }
    version = ArtefactVersion.objects.get(run=run)
    assert not version.evaluated and version.content["escalated"]
    notice = Notice.objects.get(recipient=committee, version=version)
    assert "can't clear the entry bar" in notice.body


def test_a_humanize_work_order_hands_the_reviser_the_slides_tells_and_its_rewrite_clears_them() -> None:
    """T12: every section's slide is drafted with an em-dash and a hedge (the slides are drafted in parallel,
    so each gets the same answer); code orders humanize_text on the first three such slides, whatever the
    planner would pick (seed 001: T12's tells are fixed whenever found); the reviser is shown code's findings
    for them, and its rewrite of slide 3 has none."""
    tells: dict[str, Any] = {
        "section": "Thesis",
        "title": "Thesis — what the filed figures say",
        "takeaway": "It's worth noting that the position holds.",
        "bullets": [],
        "table": None,
        "chart": None,
    }
    script: dict[str, list[Any]] = {"deck_drafter": [tells] * 5, "deck_scorer": [BASE, LAP2]}
    run = deck_run("quick")
    with fake_deck_llm(script) as server:
        driver.run_inline(str(run.pk))
        revised = [r for r in server.requests if r["prompt_name"] == "deck_reviser"]
        planned = [r for r in server.requests if r["prompt_name"] == "deck_planner"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    baseline = BaselineOutput.model_validate(AgentStep.objects.get(run=run, key="baseline").output)
    before = [f for f in baseline.findings if f.slide == 3 and f.rule in ("em_dash", "hedging")]
    assert {f.rule for f in before} == {"em_dash", "hedging"}
    shown = revised[0]["body"]["messages"][1]["content"]
    assert "em_dash" in shown and "hedging" in shown
    lap = LapOutput.model_validate(AgentStep.objects.get(run=run, key="lap-1").output)
    assert lap.work_order is not None and lap.work_order.action == "humanize_text"
    assert lap.work_order.slides == [3, 4, 5] and "desk's humanizer found" in lap.work_order.instruction
    assert len(planned) <= 1  # lap 1 was code's order; only a later lap may ask the planner
    assert lap.candidate is not None and lap.changed == [3]
    assert not [f for f in lap.candidate.humanizer if f.slide == 3 and f.rule in ("em_dash", "hedging")]


def test_an_uncalibrated_judge_is_named_on_the_run_page_and_may_be_required(client: Client) -> None:
    run = deck_run("quick")
    with fake_deck_llm():
        driver.run_inline(str(run.pk))
    baseline = BaselineOutput.model_validate(AgentStep.objects.get(run=run, key="baseline").output)
    assert baseline.calibrated is False  # no gold scores on this desk
    client.force_login(run.brief.owner)
    assert "not calibrated against human gold scores" in client.get(f"/runs/{run.pk}/").content.decode()

    with changed("memos.pipeline.deck", require_calibration=True):
        strict = deck_run("quick", user=run.brief.owner, question="Keep it, under a calibrated judge only?")
        with fake_deck_llm():
            driver.run_inline(str(strict.pk))
    strict.refresh_from_db()
    assert strict.status == Run.Status.DONE, strict.status_message
    laps = AgentStep.objects.filter(run=strict, kind="lap")
    assert {lap.status for lap in laps} == {"skipped"} and "not calibrated" in laps[0].summary
    assert ArtefactVersion.objects.filter(run=strict).exists()  # the accepted draft is frozen for review
