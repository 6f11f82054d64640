"""The screen's dashboard as a reader meets it: the run page and the version page tell the story (summary,
sector themes, the symbol inspector with a chart drawn by code), and the standalone report and its PDF
embed nothing from outside."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from agents.kept import KeptInProcess
from memos.models import ArtefactVersion, Run, VersionFile
from memos.pipeline import driver
from memos.pipeline.screen.desk import dashboard as screen_dashboard
from memos.services.runs import ask_watchlist
from tests.memos.pipeline_support import analyst, fake_llm
from tests.memos.screen.test_screen_run import DEMO

pytestmark = pytest.mark.django_db(transaction=True)


def finished_screen() -> tuple[Run, ArtefactVersion, Client]:
    """A four-symbol screen finished on the fake server, its version, and its analyst signed in."""
    user = analyst()
    run = ask_watchlist(
        owner=user,
        symbols=["XOM", "CVX", "DUK", "NEE"],
        question="Which symbols moved on their own this week?",
        workflow="screen",
        profile="weekly",
        options={"strategy": DEMO.model_dump(mode="json")},
        enqueue=False,
    )
    with fake_llm():
        driver.run_inline(str(run.pk))
    client = Client()
    client.force_login(user)
    run.refresh_from_db()
    return run, ArtefactVersion.objects.get(run=run), client


def test_the_run_page_and_the_version_page_tell_the_story_in_order() -> None:
    run, version, client = finished_screen()
    for url in (f"/runs/{run.pk}/", f"/versions/{version.pk}/"):
        page = client.get(url, {"symbol": "XOM"}).content.decode()
        summary, themes, symbols = (
            page.index(h) for h in ("Executive summary", "Sector themes", "Symbols</h2>")
        )
        assert summary < themes < symbols
        inspector = page[page.index('id="inspect-XOM"') :]
        assert "<svg" in inspector and "50-day average" in inspector
        assert "is the market&#x27;s move" in inspector or "is the market's move" in inspector
        assert 'id="inspect-CVX"' not in page  # one symbol inspected at a time on a page
    waiting = client.get(f"/runs/{run.pk}/").content.decode()
    assert "data-reload-when-done" not in waiting  # the run ended: the dashboard, not the placeholder


def test_the_report_is_one_file_that_fetches_nothing_and_its_pdf_is_kept() -> None:
    _run, version, client = finished_screen()
    response = client.get(f"/versions/{version.pk}/report.html")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert "<link" not in html and "<script" not in html
    assert html.count('class="inspector panel"') == 4  # every symbol inspected in the report
    files = dict(VersionFile.objects.filter(version=version).values_list("name", "content_type"))
    assert files == {"report.html": "text/html; charset=utf-8", "render.pdf": "application/pdf"}
    pdf = VersionFile.objects.get(version=version, name="render.pdf").body
    assert bytes(pdf).startswith(b"%PDF")


def test_a_frozen_version_s_dashboard_is_built_once_for_every_page_that_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run page reloads, the version page, the report: a frozen version's content never changes, so
    the pages after the first read the dashboard already built from it."""
    run, version, client = finished_screen()
    built: list[str] = []
    original = screen_dashboard.build

    def counted(content: dict[str, object]) -> screen_dashboard.Dashboard:
        built.append(str(len(content)))
        return original(content)

    monkeypatch.setattr(screen_dashboard, "_BUILT", KeptInProcess(8))
    monkeypatch.setattr(screen_dashboard, "build", counted)
    for url in (f"/runs/{run.pk}/", f"/versions/{version.pk}/", f"/runs/{run.pk}/"):
        assert client.get(url, {"symbol": "XOM"}).status_code == 200
    assert len(built) == 1
