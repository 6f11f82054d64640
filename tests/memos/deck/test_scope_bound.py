"""The scope builder may ask for at most the profile's body sections: four for a quick deck (each is a
drafter's call, a re-ask, a slide every judge reads), six for a full one. The bound is the schema's, so a
constrained decoder cannot exceed it, and code refuses a scope past it from any endpoint."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agents.deck.narrowing import scope_schema
from agents.deck.outputs import ScopeOutput
from agents.deck.profile import deck_config
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)


def sections(count: int) -> list[dict[str, str]]:
    return [{"name": f"Part {n}", "purpose": "What the committee needs."} for n in range(count)]


def scope(count: int) -> dict[str, Any]:
    return {
        "audience": "The committee.",
        "decision": "Whether to hold.",
        "required_sections": sections(count),
        "key_questions": ["Is growth holding up?", "What would change it?"],
    }


def test_each_profile_bounds_the_scopes_sections() -> None:
    quick = deck_config("quick", max_rebuilds=4, max_iterations=8, budget=None)
    full = deck_config("full", max_rebuilds=4, max_iterations=8, budget=None)
    assert (quick.max_sections, full.max_sections) == (4, 6)
    scope_schema(4).model_validate(scope(4))
    with pytest.raises(ValidationError):
        scope_schema(4).model_validate(scope(5))
    scope_schema(6).model_validate(scope(6))


@pytest.mark.parametrize(("profile", "bound"), [("quick", 4), ("full", 6)])
def test_a_decks_scope_is_asked_within_its_profiles_bound(profile: str, bound: int) -> None:
    run = deck_run(profile)
    with fake_deck_llm() as server:
        driver.run_inline(str(run.pk))
        [asked] = [r for r in server.requests if r["prompt_name"] == "deck_scope"]
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    schema = asked["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["required_sections"]["maxItems"] == bound
    frozen = ScopeOutput.model_validate(AgentStep.objects.get(run=run, key="scope").output)
    assert 3 <= len(frozen.scope.required_sections) <= bound


def test_a_scope_past_the_bound_from_an_endpoint_that_ignores_the_schema_is_refused() -> None:
    run = deck_run("quick")
    with fake_deck_llm({"deck_scope": [scope(6), scope(6)]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "did not fit its schema" in run.status_message
    errors = LLMCall.objects.filter(run=run, prompt_name="deck_scope").values_list("error", flat=True)
    assert all("required_sections" in (error or "") for error in errors) and len(errors) == 2
