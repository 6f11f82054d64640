"""The deck workflow end to end against the fake OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

from decimal import Decimal
from html import unescape

import pytest
from django.test import Client

from agents.deck.outputs import DeckOutput, DraftOutput
from agents.deck.spec import display
from agents.llm.config import load_llm_settings
from memos.models import AgentStep, ArtefactVersion, FactRecord, Run
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm
from tests.memos.pipeline_support import fake_llm

pytestmark = pytest.mark.django_db(transaction=True)


def _deck(run: Run) -> DeckOutput:
    return DeckOutput.model_validate(AgentStep.objects.get(run=run, kind="deck").output)


def _why(run: Run) -> str:
    drafts = AgentStep.objects.filter(run=run, kind="draft", status="done").values_list("output", flat=True)
    gates = [g for d in drafts for g in DraftOutput.model_validate(d).r1.gates if not g.passed]
    mism = [m for d in drafts for m in DraftOutput.model_validate(d).candidate.mismatches]
    return f"{run.status_message}: {[g.reason for g in gates]} {mism[:8]}"


def test_a_quick_deck_is_drafted_gated_refined_and_frozen_with_every_figure_from_the_fact_store() -> None:
    run = deck_run("quick")
    with fake_deck_llm() as server:
        driver.run_inline(str(run.pk))
        roles = [request["role"] for request in server.requests]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, _why(run)
    statuses = dict(AgentStep.objects.filter(run=run).values_list("key", "status"))
    assert statuses["scope"] == statuses["figures"] == statuses["draft-1"] == statuses["deck"] == "done"
    assert statuses["draft-2"] == "skipped"  # the first draft cleared R1
    assert {"scope_builder", "rubric_builder", "drafter", "scorer", "planner", "reviser"} <= set(roles)

    draft = DraftOutput.model_validate(AgentStep.objects.get(run=run, key="draft-1").output)
    assert draft.r1.passed and all(gate.passed for gate in draft.r1.gates)
    assert draft.candidate.mismatches == [] and draft.candidate.pages == len(draft.candidate.deck.slides)

    deck = _deck(run).deck
    placed = deck.figures()
    assert placed, "a deck with no figure"
    stored = {f.fact_id: f for f in FactRecord.objects.filter(fact_id__in=placed)}
    for fact_id, figure in placed.items():
        assert Decimal(figure.value) == stored[fact_id].value
        assert figure.display == display(stored[fact_id].value, stored[fact_id].unit, fact_id=fact_id)

    version = ArtefactVersion.objects.get(run=run)
    assert version.kind == "deck" and version.evaluated and version.score_label == "R2"
    assert version.content["deck"]["title"] == deck.title
    assert {source["id"] for source in version.sources} == set(placed)  # each figure frozen with its citation


def test_the_step_documents_of_a_deck_run_render_for_its_analyst(client: Client) -> None:
    run = deck_run("quick")
    with fake_deck_llm():
        driver.run_inline(str(run.pk))
    client.force_login(run.brief.owner)
    assert client.get(f"/runs/{run.pk}/").status_code == 200
    for step in AgentStep.objects.filter(run=run, status="done"):
        page = client.get(f"/runs/{run.pk}/steps/{step.pk}/")
        assert page.status_code == 200, step.key
        assert "not finished" not in page.content.decode().lower(), step.key


def test_the_run_page_badges_the_judge_of_the_writers_family(client: Client) -> None:
    run = deck_run("quick", started_with=load_llm_settings({}))  # one model for every role
    with fake_llm():
        driver.run_inline(str(run.pk))
    client.force_login(run.brief.owner)
    page = unescape(client.get(f"/runs/{run.pk}/").content.decode())
    assert "Same family as the work it judges: the judge's scores (family qwen) judge the drafts" in page
