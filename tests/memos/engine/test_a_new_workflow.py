"""A workflow is the one unit of extension: a workflow written as a package of its own (here, by this test)
and named by one line of the registry is offered by the brief form, configured and started by the one
service every caller uses, run by the engine with its resumable step, frozen as its own line of versions,
described on its run page; its finished step has a page that shows its document, its version a page, a PDF
and an export, and ``manage.py run`` starts it: with nothing else of the desk edited."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape

from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver, registry
from memos.pipeline.packages import PACKAGES
from memos.pipeline.workflows import Workflow
from memos.services.errors import ServiceError
from memos.services.runs import ask
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = '''"""A workflow of one step, written as a package of its own by a test: the registry line is the
only other thing that makes it part of the desk."""

from pathlib import Path
from typing import Any

from agents.deck.schemas import Framing
from agents.llm.prompts import parse_prompt
from agents.llm.types import CallContext
from memos.models import Run
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


WORKFLOW = Workflow(
    name="headline",
    choice="A headline: one title and thesis, declared by a test",
    subject="company",
    stages=(Stage("write", "Write", "One call writes the headline", write),),
    kinds={"headline": StepKind("headline", Framing, "", lambda o: o.title)},
    plan=lambda config: [PlannedStep("write", "headline", "headline", "The headline", "drafter")],
    ending=lambda ctx: Ending(Run.Status.DONE, "headline written"),
    profiles=lambda: {"one": "a single call"},
    configure=configure,
    describe=lambda config: f"{config.get('name')} · a single call",
    artefact=artefact,
)
'''


@pytest.fixture
def headline_workflow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Workflow:
    """The package written to disk, and the registry's one line for it: its package's name in PACKAGES."""
    package = tmp_path / "headline_workflow"
    package.mkdir()
    (package / "__init__.py").write_text('"""A test\'s workflow."""\n', encoding="utf-8")
    (package / "workflow.py").write_text(PACKAGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    packages = (*PACKAGES, "headline_workflow")
    monkeypatch.setattr(registry, "WORKFLOWS", {w.name: w for w in map(registry.load, packages)})
    return registry.WORKFLOWS["headline"]


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


def test_its_step_version_files_and_export_need_no_declaration_of_their_own(
    headline_workflow: Workflow, client: Client, tmp_path: Path
) -> None:
    load_desk_data("AAPL")
    owner = analyst()
    client.force_login(owner)
    run = ask(
        owner=owner, ticker="AAPL", question="Keep it?", workflow="headline", profile="one", enqueue=False
    )
    with fake_llm():
        driver.run_inline(str(run.pk))
    step = AgentStep.objects.get(run=run, key="headline")
    assert step.output is not None
    title, thesis = step.output["title"], step.output["thesis"]

    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "Not written yet" not in page and "doc-output" in page
    assert escape(title) in page and escape(thesis) in page

    version = ArtefactVersion.objects.get(run=run)
    shown = client.get(f"/versions/{version.pk}/").content.decode()
    assert escape(title) in shown and "The headline as frozen" in shown and "Download PDF" in shown
    pdf = client.get(f"/versions/{version.pk}/pdf/")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF")

    out = tmp_path / "export"
    call_command("export_versions", str(run.brief_id), "--out", str(out), stdout=StringIO())
    written = {path.name for path in (out / "versions" / "v001").iterdir()}
    assert {"headline.json", "text.md", "render.pdf", "changelog.jsonl", "audit.jsonl"} <= written


def test_manage_py_run_starts_it_with_the_options_every_workflow_has(headline_workflow: Workflow) -> None:
    load_desk_data("AAPL")
    analyst()
    out, err = StringIO(), StringIO()
    with fake_llm():
        call_command(
            "run", "headline", "AAPL", "--brief", "Keep it?", "--profile", "one", "--user", "ana",
            "--inline", stdout=out, stderr=err,
        )  # fmt: skip
    assert "headline done" in out.getvalue(), err.getvalue()
    assert Run.objects.get(workflow="headline").status == Run.Status.DONE
    with pytest.raises(SystemExit) as refused:
        call_command(
            "run", "headline", "AAPL", "--brief", "Keep?", "--profile", "two", "--user", "ana", stderr=err
        )
    assert refused.value.code == 2 and "Unknown profile 'two'" in err.getvalue()
