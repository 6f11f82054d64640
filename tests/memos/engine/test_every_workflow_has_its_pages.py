"""Every registered workflow, run to its end on the fake server, has every page a person opens: each finished
step's page shows its document (never "Not written yet"), and its run, its version, every file frozen with
the version and the export answer. Nothing here names a workflow: a workflow added to the registry is
tested by the same code, and a declaration it misses fails here."""

from __future__ import annotations

from html import unescape
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.template.loader import get_template
from django.test import Client

from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver, fanout
from memos.pipeline.registry import WORKFLOWS, rehearsal
from memos.pipeline.workflows import Workflow
from memos.services.runs import ask, ask_watchlist
from memos.services.surfaces import RENDER_PDF, files_of, surface_of
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

NOT_WRITTEN = "Not written yet"
WATCHLIST = ["XOM", "CVX", "JPM"]  # three stocknet symbols in two sectors: a small screen


def cheapest_profile(workflow: Workflow) -> str:
    profiles = list(workflow.profiles())
    return "quick" if "quick" in profiles else profiles[0]


def finished(workflow: Workflow) -> Run:
    """A run of ``workflow`` on its cheapest profile, run inline on the fake server to its end."""
    owner = analyst()
    question = f"What should the committee know? ({workflow.name})"
    profile = cheapest_profile(workflow)
    if workflow.subject == "watchlist":
        run = ask_watchlist(
            owner=owner,
            symbols=WATCHLIST,
            question=question,
            workflow=workflow.name,
            profile=profile,
            enqueue=False,
        )
    else:
        load_desk_data("AAPL")
        run = ask(
            owner=owner,
            ticker="AAPL",
            question=question,
            workflow=workflow.name,
            profile=profile,
            enqueue=False,
        )
    with fake_llm(rehearsal(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    return run


@pytest.mark.parametrize("name", list(WORKFLOWS))
def test_a_finished_run_of_every_workflow_has_every_page(name: str, tmp_path: Path) -> None:
    workflow = WORKFLOWS[name]
    fanout.started.clear()
    run = finished(workflow)
    reader = Client()
    reader.force_login(run.brief.owner)

    run_page = reader.get(f"/runs/{run.pk}/")
    assert run_page.status_code == 200
    # Every fan-out the run started was declared on one of its stages, and the run page says why it may.
    # A run that starts other runs as its parts (the desk's week) runs their fan-outs too: each declared on
    # its own workflow's stage and shown on that part's run page.
    pages = [(workflow, run_page)] + [
        (WORKFLOWS[part.workflow], reader.get(f"/runs/{part.pk}/"))
        for part in Run.objects.filter(part_of=run)
    ]
    declared = {breadth.name for flow, _ in pages for stage in flow.stages for breadth in stage.fan_outs}
    assert fanout.started, f"{name}: no call ran side by side"
    assert set(fanout.started) <= declared, f"{name}: undeclared fan-outs"
    for flow, shown in pages:
        for breadth in (b for stage in flow.stages for b in stage.fan_outs):
            assert f"Side by side: {breadth.name}." in unescape(shown.content.decode()), breadth.name
    done = list(AgentStep.objects.filter(run=run, status=AgentStep.Status.DONE))
    assert done and {step.kind for step in done} <= set(workflow.kinds)
    for step in done:
        page = reader.get(f"/runs/{run.pk}/steps/{step.pk}/")
        body = page.content.decode()
        assert page.status_code == 200, step.title
        assert NOT_WRITTEN not in body and "doc-unfinished" not in body, f"{name}: {step.title}"
        assert f'data-step="{step.pk}"' in body and 'data-status="done"' in body

    version = ArtefactVersion.objects.get(run=run)
    assert version.kind == name
    page = reader.get(f"/versions/{version.pk}/")
    assert page.status_code == 200
    for file in files_of(version).files:
        url = f"/versions/{version.pk}/" + ("pdf/" if file.name == RENDER_PDF else f"files/{file.name}")
        download = reader.get(url)
        assert download.status_code == 200, file.name
        assert download["Content-Disposition"].startswith("attachment;"), file.name
        assert file.label in page.content.decode(), f"the page offers {file.name} for download"

    out = tmp_path / "export"
    call_command("export_versions", str(run.brief_id), "--out", str(out), stdout=StringIO())
    folder = out / "versions" / "v001"
    written = {path.name for path in folder.iterdir()}
    assert {f"{name}.json", "text.md", "scores.json", "changelog.jsonl", "audit.jsonl"} <= written
    assert {file.name for file in files_of(version).files} <= written
    changelog = surface_of(workflow).export.changelog(version)
    assert len((folder / "changelog.jsonl").read_text().splitlines()) == len(changelog)


@pytest.mark.parametrize("name", list(WORKFLOWS))
def test_every_kind_of_step_has_a_template_that_loads(name: str) -> None:
    """Kinds a cheap run does not reach (the agency's jury) still have a page to show."""
    for kind in WORKFLOWS[name].kinds.values():
        assert get_template(kind.page), kind.name
