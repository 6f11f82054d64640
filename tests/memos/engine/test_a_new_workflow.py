"""A workflow is the one unit of extension: a workflow declared in one place (here, in this test) is offered
by the brief form, configured and started by the one service every caller uses, run by the engine with its
resumable step, frozen as its own line of versions, and described on its run page, with nothing else of the
desk edited."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from agents.deck.schemas import Framing
from agents.llm.prompts import parse_prompt
from agents.llm.types import CallContext
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver, registry
from memos.pipeline.context import StageContext
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import brief_block
from memos.pipeline.workflows import (
    Artefact,
    ConfigurationError,
    Ending,
    PlannedStep,
    RunRequest,
    Stage,
    StepKind,
    Workflow,
)
from memos.services.errors import ServiceError
from memos.services.runs import ask
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = parse_prompt(
    b"""---
name: headline_writer
version: 1
temperature: 0
max_tokens: 120
output_schema: agents.deck.schemas:Framing
role: drafter
---
## System
Write a title and a one-sentence thesis for the question. Never type a number.

## User
{brief}
""",
    origin=Path("headline_writer (a test's workflow)"),
)


def write(ctx: StageContext) -> None:
    def ask_model() -> Framing:
        prompt = PROMPT.render({}, {"brief": brief_block(ctx)}, nonce=ctx.run.nonce)
        context = CallContext(run_id=ctx.run_id, stage="write", role="drafter")
        return gateway().complete(prompt, Framing, context=context)

    ctx.once("headline", Framing, ask_model)


def configure(request: RunRequest) -> dict[str, Any]:
    if request.profile != "one":
        raise ConfigurationError(f"Unknown profile {request.profile!r}; choose one.")
    return {"name": "one"}


def artefact(ctx: StageContext) -> Artefact:
    headline = ctx.output("write", "headline", Framing)
    assert headline is not None
    return Artefact(
        kind="headline",
        title=headline.title,
        content=headline.model_dump(),
        sections={"Title": headline.title, "Thesis": headline.thesis},
        evaluated=False,
    )


HEADLINE = Workflow(
    name="headline",
    choice="A headline: one title and thesis, declared by a test",
    subject="company",
    stages=(Stage("write", "Write", "One call writes the headline", write),),
    kinds={
        "headline": StepKind("headline", Framing, "memos/step_documents/unfinished.html", lambda o: o.title)
    },
    plan=lambda config: [PlannedStep("write", "headline", "headline", "The headline", "drafter")],
    ending=lambda ctx: Ending(Run.Status.DONE, "headline written"),
    profiles=lambda: {"one": "a single call"},
    configure=configure,
    describe=lambda config: f"{config.get('name')} · a single call",
    artefact=artefact,
)


@pytest.fixture
def headline_workflow(monkeypatch: pytest.MonkeyPatch) -> Workflow:
    workflows: Mapping[str, Workflow] = {**registry.WORKFLOWS, HEADLINE.name: HEADLINE}
    monkeypatch.setattr(registry, "WORKFLOWS", workflows)
    return HEADLINE


def test_a_workflow_declared_once_is_offered_started_run_frozen_and_described(
    headline_workflow: Workflow, client: Client
) -> None:
    load_desk_data("AAPL")
    owner = analyst()
    client.force_login(owner)
    form = client.get("/briefs/new/").content.decode()
    assert headline_workflow.choice in form and "a single call" in form

    run = ask(
        owner=owner, ticker="AAPL", question="Keep it?", workflow="headline", profile="one", enqueue=False
    )
    with fake_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()

    assert (run.status, run.status_message) == (Run.Status.DONE, "headline written")
    step = AgentStep.objects.get(run=run, key="headline")
    assert step.status == AgentStep.Status.DONE and step.summary
    version = ArtefactVersion.objects.get(run=run)
    assert (version.kind, version.number, version.title) == ("headline", 1, step.summary)
    assert "one · a single call" in client.get(f"/runs/{run.pk}/").content.decode()


def test_its_own_profiles_are_the_only_ones_it_accepts(headline_workflow: Workflow) -> None:
    load_desk_data("AAPL")
    with pytest.raises(ServiceError, match="Unknown profile 'quick'; choose one"):
        ask(owner=analyst(), ticker="AAPL", question="Keep it?", workflow="headline", profile="quick")
    assert not Run.objects.exists()
