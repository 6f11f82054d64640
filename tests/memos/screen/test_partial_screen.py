"""A screen whose news reading of one sector never fits its schema (issue 31, 1): the sector is unread, never
"none"; its symbols are unassessed (held at YELLOW, never RED for unexplained alpha); the run needs review;
the version is frozen partial, says so above everything, and opens no vote until its analyst accepts it;
``screen --json`` says what did not finish; "Retry what failed" pays only for the calls not answered."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents.screen.config import load_strategy
from agents.screen.flags import UNASSESSED, UNEXPLAINED
from agents.screen.outputs import ScreenResult
from memos.models import (
    AgentStep,
    ArtefactVersion,
    AuditEvent,
    LLMCall,
    Motion,
    Notice,
    Run,
    VersionFile,
)
from memos.pipeline import driver
from memos.pipeline.screen.desk.command import screen_json
from memos.pipeline.screen.plan import FLAGS
from memos.services import review
from memos.services.errors import ServiceError
from memos.services.review import ReviewRefused
from memos.services.runs import ask_watchlist, retry_run
from tests.memos.pipeline_support import analyst, fake_llm, person

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]
# Two sectors with tweets in the demo week: Basic Materials and Utilities.
SYMBOLS = ["XOM", "CVX", "BP", "DUK", "NEE", "D"]
SECTORS = ("Basic Materials", "Utilities")
DEMO = load_strategy((ROOT / "data" / "screen" / "strategy.yaml").read_text(encoding="utf-8"))


class BreakOneSector:
    """A scripted answer for ``screen_news_sector``: broken (it fits no schema) for the first sector asked
    about while ``on``, the canned answer otherwise. The sector is chosen by the first request, so the test
    does not depend on which parallel call arrives first."""

    def __init__(self) -> None:
        self.on = True
        self.sector = ""

    def __call__(self, schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
        text = " ".join(str(m.get("content", "")) for m in messages)
        asked = next((sector for sector in SECTORS if f"sector: {sector}" in text or sector in text), "")
        self.sector = self.sector or asked
        return {"broken": True} if self.on and asked == self.sector else None


def _screen(owner: User) -> Run:
    return ask_watchlist(
        owner=owner,
        symbols=SYMBOLS,
        question="Which symbols moved on their own this week?",
        workflow="screen",
        profile="weekly",
        options={"strategy": DEMO.model_dump(mode="json")},
        enqueue=False,
    )


def _result(run: Run) -> ScreenResult:
    return ScreenResult.model_validate(AgentStep.objects.get(run=run, key=FLAGS).output)


def test_a_sector_whose_reading_failed_is_unread_and_the_version_waits_for_its_analyst() -> None:
    owner = analyst("ana")
    member = person("cleo", "committee")
    breaker = BreakOneSector()
    with fake_llm({"screen_news_sector": [breaker] * 40}) as server:
        run = _screen(owner)
        driver.run_inline(str(run.pk))
        run.refresh_from_db()

        # The run needs a person, and says which part did not finish.
        assert breaker.sector in SECTORS
        title = f"News analyst: {breaker.sector}"
        assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
        assert f"not finished: {title}" in run.status_message

        # The unread sector is "unread", never "none"; its symbols unassessed, never RED for unexplained
        # alpha; the other sector was read.
        result = _result(run)
        unread = [a for a in result.assessments if a.sector == breaker.sector]
        read = [a for a in result.assessments if a.sector != breaker.sector]
        assert unread and read
        assert {a.evidence_quality for a in unread} == {"unread"}
        assert {a.flag for a in unread} == {"YELLOW"}
        for a in unread:
            assert a.flag_reason.startswith(UNASSESSED)
            assert UNEXPLAINED.split("(")[0] not in a.flag_reason
        assert "unread" not in {a.evidence_quality for a in read}
        view = next(v for v in result.sectors if v.sector == breaker.sector)
        assert view.evidence_quality == "unread" and view.news_summary.startswith("Unread")

        # ``screen --json``: the status and what did not finish.
        report = screen_json(run)
        assert report is not None
        assert report["status"] == "needs_review"
        [part] = report["unfinished"]
        assert part["step"] == title and "schema" in part["reason"]
        assert {s["evidence_quality"] for s in report["symbols"] if s["sector"] == breaker.sector} == {
            "unread"
        }

        # Frozen partial: it says so above everything, and no vote opens by itself.
        version = ArtefactVersion.objects.get(run=run)
        assert version.partial and version.evaluated
        assert [p["step"] for p in version.unfinished] == [title]
        assert not Motion.objects.filter(version=version).exists()
        assert version.rendered_text.startswith("## Not finished\n")
        # The standalone report says so too: its PDF is this report, printed.
        printed = bytes(VersionFile.objects.get(version=version, name="report.html").body).decode()
        assert "Partial: parts of this screen" in printed and title in printed
        assert Notice.objects.filter(version=version, recipient=owner, event=Notice.Event.PARTIAL).exists()
        assert not Notice.objects.filter(version=version, event=Notice.Event.VOTE_NEEDED).exists()
        with pytest.raises(ReviewRefused, match="closed"):
            review.cast_vote(version=version, member=member, choice="approve", rationale="fine")

        client = Client()
        client.force_login(owner)
        page = client.get(f"/versions/{version.pk}/").content.decode()
        assert page.index('id="partial"') < page.index('class="panel version-head"')
        assert title in page and 'id="accept-partial"' in page and 'id="retry-partial"' in page
        client.force_login(member)
        page = client.get(f"/versions/{version.pk}/").content.decode()
        assert (
            'id="partial"' in page and 'id="accept-partial"' not in page and 'id="retry-partial"' not in page
        )

        # Only its analyst accepts it; the vote opens then, once.
        response = client.post(f"/versions/{version.pk}/accept-partial/")
        assert response.status_code == 409 and not Motion.objects.filter(version=version).exists()
        review.accept_partial(version=version, analyst=owner)
        assert Motion.objects.filter(version=version, closed_at__isnull=True).count() == 1
        assert AuditEvent.objects.filter(
            version=version, action=AuditEvent.Action.PARTIAL_ACCEPTED, actor=owner
        ).exists()
        with pytest.raises(ReviewRefused, match="accepted as partial already"):
            review.accept_partial(version=version, analyst=owner)
        review.cast_vote(version=version, member=member, choice="approve", rationale="fine as it is")

        # Retry what failed: the answered calls come from the ledger; only the failed reading and what
        # depends on it (the sector's synthesis, the overall view, the director) are asked again.
        breaker.on = False
        paid_before = server.request_count
        with pytest.raises(ServiceError, match="Only the brief's analyst"):
            retry_run(run=run, user=member)
        retry = retry_run(run=run, user=owner, enqueue=False)
        assert retry.retry_of_id == run.pk and retry.config == run.config
        driver.run_inline(str(retry.pk))
        retry.refresh_from_db()
        assert retry.status == Run.Status.DONE, retry.status_message
        asked = LLMCall.objects.filter(run=retry).exclude(outcome=LLMCall.Outcome.CACHED)
        cached = LLMCall.objects.filter(run=retry, outcome=LLMCall.Outcome.CACHED)
        assert cached.filter(prompt_name="screen_news_sector").count() == 1  # the sector that was read
        assert asked.filter(prompt_name="screen_news_sector").count() == 1  # the one that failed
        assert cached.filter(prompt_name="screen_news_overview").exists()
        assert server.request_count - paid_before == asked.count() <= 4
        whole = ArtefactVersion.objects.get(run=retry)
        assert not whole.partial and "unread" not in {a.evidence_quality for a in _result(retry).assessments}
        assert Motion.objects.filter(version=whole, closed_at__isnull=True).exists()
        version.refresh_from_db()
        assert version.status == ArtefactVersion.Status.SUPERSEDED
        with pytest.raises(ServiceError, match=r"only a failed or partial run"):
            retry_run(run=retry, user=owner)


def test_the_command_prints_the_status_and_what_did_not_finish(tmp_path: Path) -> None:
    analyst("analyst")
    config = tmp_path / "strategy.yaml"
    config.write_text(
        "as_of: 2015-08-21\nuniverse:\n  source: stocknet\n  symbols: [XOM, CVX, DUK, NEE]\n",
        encoding="utf-8",
    )
    out, err = StringIO(), StringIO()
    with fake_llm({"screen_news_sector": [BreakOneSector()] * 40}), pytest.raises(SystemExit) as ended:
        call_command("screen", config=config, inline=True, json=True, stdout=out, stderr=err)
    assert ended.value.code == 3
    report = json.loads(out.getvalue())
    assert report["status"] == "needs_review"
    assert [part["step"].split(": ")[0] for part in report["unfinished"]] == ["News analyst"]
    assert "unread" in {s["evidence_quality"] for s in report["symbols"]}


def test_a_whole_screen_says_so_and_opens_its_vote() -> None:
    with fake_llm():
        run = _screen(analyst("ana"))
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    report = screen_json(run)
    assert report is not None and report["status"] == "done" and report["unfinished"] == []
    version = ArtefactVersion.objects.get(run=run)
    assert not version.partial and Motion.objects.filter(version=version).exists()
    with pytest.raises(ReviewRefused, match="is whole"):
        review.accept_partial(version=version, analyst=run.brief.owner)
