"""The positions register on real runs (the real openai client, the fake OpenAI-compatible server, PostgreSQL,
an SMTP server on loopback): a frozen memo's bound falsifier is watched against a fact code read, and a newer
filing that meets its condition re-opens the position once."""

from __future__ import annotations

import gzip
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from agents.memo.outputs import MemoOutput
from memos.models import AgentStep, ArtefactVersion, AuditEvent, FactRecord, FalsifierWatch, Notice, Run
from memos.pipeline import driver
from memos.services.accounts import Roles
from memos.services.fact_refresh import refresh_company_facts
from memos.services.runs import create_brief, start_run
from memos.services.snapshot import load_snapshot
from tests.agents.data import SNAPSHOT
from tests.mail_server import smtp_inbox
from tests.memos.pipeline_support import fake_llm, load_desk_data, person, script_for

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Does the services mix carry the margin through the next product cycle?"
AAPL_FACTS = "edgar/companyfacts/CIK0000320193_AAPL.json.gz"
REVENUE = "RevenueFromContractWithCustomerExcludingAssessedTax"
FY2025_REVENUE = 416_161_000_000  # AAPL's filed revenue for fiscal 2025, in the bundled companyfacts
GROWTH = "revenue_growth_yoy"
Status = FalsifierWatch.Status
PEOPLE = {"ana", "cm1", "cm2", "cm3", "rev", "rev2"}  # the analyst, the committee and the reviewers


@pytest.fixture
def desk() -> dict[str, User]:
    load_desk_data("AAPL")
    return {
        "ana": person("ana", Roles.ANALYST),
        "cm1": person("cm1", Roles.COMMITTEE),
        "cm2": person("cm2", Roles.COMMITTEE),
        "cm3": person("cm3", Roles.COMMITTEE),
        "rev": person("rev", Roles.REVIEWER),
        "rev2": person("rev2", Roles.REVIEWER),
        "boss": person("boss", Roles.EXECUTIVE),
    }


def run_through(run: Run, script: dict[str, list[Any]] | None = None) -> ArtefactVersion:
    with fake_llm(script or script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    return ArtefactVersion.objects.get(run=run)


def first_version(analyst: User) -> ArtefactVersion:
    brief = create_brief(owner=analyst, ticker="AAPL", question=QUESTION)
    return run_through(start_run(brief=brief, user=analyst, profile="quick", enqueue=False, workflow="memo"))


def snapshot_with_fiscal_2026(root: Path, revenue: int) -> Path:
    """A snapshot folder like the bundled one, whose AAPL companyfacts holds one more 10-K: fiscal 2026's
    revenue (from which code derives fiscal 2026's revenue growth)."""
    (root / "edgar" / "companyfacts").mkdir(parents=True)
    (root / "edgar" / "reference").mkdir()
    shutil.copy(SNAPSHOT / "edgar/reference/company_tickers.json", root / "edgar/reference")
    with gzip.open(SNAPSHOT / AAPL_FACTS, "rt", encoding="utf-8") as handle:
        companyfacts = json.load(handle)
    companyfacts["facts"]["us-gaap"][REVENUE]["units"]["USD"].append(
        {
            "start": "2025-09-28",
            "end": "2026-09-26",
            "val": revenue,
            "accn": "0000320193-26-000090",
            "fy": 2026,
            "fp": "FY",
            "form": "10-K",
            "filed": "2026-10-30",
            "frame": "CY2026",
        }
    )
    with gzip.open(root / AAPL_FACTS, "wt", encoding="utf-8") as handle:
        json.dump(companyfacts, handle)
    return root


def refresh_from(root: Path) -> None:
    """The EDGAR refresh job (what the admin's "refresh" queues), reading ``root`` as its source."""
    with override_settings(SNAPSHOT_DIR=str(root)):
        refresh_company_facts("AAPL")


def hits() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=AuditEvent.Action.FALSIFIER_HIT))


def hit_notices() -> list[str]:
    return sorted(
        Notice.objects.filter(event=Notice.Event.FALSIFIER_HIT).values_list("recipient__username", flat=True)
    )


def test_a_frozen_memo_watches_its_bound_falsifier_against_the_latest_fact_read_by_code(
    desk: dict[str, User],
) -> None:
    version = first_version(desk["ana"])
    output = MemoOutput.model_validate(version.content)
    assert [(b.falsifier, b.metric, b.condition) for b in output.falsifier_bindings] == [
        (2, GROWTH, "turns_negative")
    ]
    (watch,) = FalsifierWatch.objects.filter(version=version)
    latest = FactRecord.objects.filter(company__ticker="AAPL", metric=GROWTH).latest("period_end")
    assert latest.fact_id == "AAPL:revenue_growth_yoy:FY2025"
    assert (watch.number, watch.metric, watch.condition, watch.status) == (
        2,
        GROWTH,
        "turns_negative",
        Status.WATCHING,
    )
    assert (watch.baseline_fact_id, watch.baseline_value, watch.baseline_period_end) == (
        latest.fact_id,
        latest.value,
        latest.period_end,
    )
    assert watch.text == output.memo.falsifiers[1] and watch.brief_id == version.brief_id

    page = Client()
    page.force_login(desk["cm1"])
    html = page.get(f"/versions/{version.pk}/").content.decode()
    assert 'id="falsifiers"' in html and "AAPL:revenue_growth_yoy:FY2025" in html and "turns negative" in html


def test_a_newer_filing_that_meets_the_condition_reopens_the_position_once(
    desk: dict[str, User], tmp_path: Path
) -> None:
    with smtp_inbox() as inbox:
        v1 = first_version(desk["ana"])
        brief = v1.brief
        before = len(inbox.messages)
        lower = snapshot_with_fiscal_2026(
            tmp_path / "lower", revenue=410_000_000_000
        )  # growth turns negative
        refresh_from(lower)

        (watch,) = FalsifierWatch.objects.filter(version=v1)
        new_fact = FactRecord.objects.get(fact_id="AAPL:revenue_growth_yoy:FY2026")
        assert new_fact.value < 0
        assert (watch.status, watch.hit_fact_id, watch.hit_value) == (
            Status.HIT,
            new_fact.fact_id,
            new_fact.value,
        )
        # The position is re-opened: one new run of the brief, queued for its analyst, and the version's
        # audit trail says why; the analyst, the committee and the reviewers each hear of it once.
        (reopened,) = Run.objects.filter(brief=brief).exclude(pk=v1.run_id)
        assert (reopened.status, reopened.created_by, reopened.profile) == (
            Run.Status.QUEUED,
            desk["ana"],
            "quick",
        )
        assert watch.run == reopened
        assert reopened.scheduled  # started by new facts, not a person: after people's runs
        (event,) = hits()
        assert event.version == v1 and event.content_hash == v1.content_hash and event.actor is None
        assert event.detail["fact"] == new_fact.fact_id and event.detail["run"] == str(reopened.pk)
        assert hit_notices() == sorted(PEOPLE)
        for name in PEOPLE:
            mails = [m for m in inbox.to(f"{name}@desk.example") if "falsifier" in str(m["Subject"])]
            assert len(mails) == 1, name
        assert not inbox.to("boss@desk.example")
        assert len(inbox.messages) == before + len(PEOPLE)

        # The same data loading again (a second refresh) repeats none of it.
        refresh_from(lower)
        assert Run.objects.filter(brief=brief).count() == 2
        assert len(hits()) == 1 and hit_notices() == sorted(PEOPLE)
        assert len(inbox.messages) == before + len(PEOPLE)

    # The re-opened run re-writes the memo on the newer data: v2. The register moves to v2, and growth is
    # already negative there, so code does not watch "turns negative" again.
    v2 = run_through(reopened)
    assert v2.number == 2
    watch.refresh_from_db()
    assert watch.status == Status.HIT
    assert not FalsifierWatch.objects.filter(version=v2).exists()
    dropped = MemoOutput.model_validate(v2.content).dropped_bindings
    assert [d.reason for d in dropped] == [f"{GROWTH} is already negative (AAPL:revenue_growth_yoy:FY2026)"]


def test_a_newer_filing_that_does_not_meet_the_condition_changes_nothing(
    desk: dict[str, User], tmp_path: Path
) -> None:
    v1 = first_version(desk["ana"])
    notices = Notice.objects.count()
    refresh_from(snapshot_with_fiscal_2026(tmp_path / "higher", revenue=430_000_000_000))  # growth positive
    assert FactRecord.objects.get(fact_id="AAPL:revenue_growth_yoy:FY2026").value > 0
    (watch,) = FalsifierWatch.objects.filter(version=v1)
    assert (watch.status, watch.hit_fact_id, watch.run) == (Status.WATCHING, "", None)
    assert Run.objects.filter(brief=v1.brief).count() == 1
    assert not hits() and Notice.objects.count() == notices


def test_the_snapshot_loader_checks_the_register_once_its_load_commits(
    desk: dict[str, User], tmp_path: Path
) -> None:
    v1 = first_version(desk["ana"])
    report = load_snapshot(root=snapshot_with_fiscal_2026(tmp_path / "lower", revenue=400_000_000_000))
    assert report.facts.get("companyfacts", 0) > 0
    (watch,) = FalsifierWatch.objects.filter(version=v1)
    assert watch.status == Status.HIT and watch.hit_fact_id == "AAPL:revenue_growth_yoy:FY2026"
    assert Run.objects.filter(brief=v1.brief, status=Run.Status.QUEUED).count() == 1


def test_a_hit_while_a_run_of_the_brief_is_under_way_starts_no_second_one(
    desk: dict[str, User], tmp_path: Path
) -> None:
    v1 = first_version(desk["ana"])
    under_way = start_run(brief=v1.brief, user=desk["ana"], profile="quick", enqueue=False, workflow="memo")
    refresh_from(snapshot_with_fiscal_2026(tmp_path / "lower", revenue=410_000_000_000))
    (watch,) = FalsifierWatch.objects.filter(version=v1)
    assert watch.status == Status.HIT and watch.run == under_way
    assert "already under way" in watch.reopen_note
    assert Run.objects.filter(brief=v1.brief).count() == 2  # v1's run and the one under way: no third
    assert hit_notices() == sorted(PEOPLE)


def test_code_drops_a_binding_to_a_metric_without_facts_or_past_the_falsifiers_and_no_text_sets_a_number(
    desk: dict[str, User],
) -> None:
    FactRecord.objects.filter(company__ticker="AAPL", metric="cash").delete()
    brief = create_brief(owner=desk["ana"], ticker="AAPL", question=QUESTION)
    run = start_run(brief=brief, user=desk["ana"], profile="quick", enqueue=False, workflow="memo")
    script = script_for(run)
    for answer in script["synthesizer"]:
        memo = answer["memo"]
        # The model's words name a threshold; the binding has nowhere to put one.
        memo["falsifiers"] = [
            "Cash falls below the level the buyback needs.",
            "Revenue growth, now [[AAPL:revenue_growth_yoy:FY2025]], stalls. Below 0.125 it is falsified.",
        ]
        memo["falsifier_bindings"] = [
            {"falsifier": 3, "metric": "revenue", "condition": "falls_below_current"},
            {"falsifier": 1, "metric": "cash", "condition": "falls_below_current"},
            {"falsifier": 2, "metric": GROWTH, "condition": "falls_below_current"},
        ]
    version = run_through(run, script)
    output = MemoOutput.model_validate(version.content)
    assert [(b.falsifier, b.metric) for b in output.falsifier_bindings] == [(2, GROWTH)]
    assert sorted(d.reason for d in output.dropped_bindings) == [
        "the fact store holds no cash for this company",
        "the memo has 2 falsifiers; there is no falsifier 3",
    ]
    (watch,) = FalsifierWatch.objects.filter(version=version)
    latest = FactRecord.objects.get(fact_id="AAPL:revenue_growth_yoy:FY2025")
    assert watch.baseline_value == latest.value != Decimal("0.125")
    assert watch.condition == "falls_below_current"
    # The register shows the falsifier's words with the figure the model typed withheld.
    page = Client()
    page.force_login(desk["cm1"])
    html = page.get(f"/versions/{version.pk}/").content.decode()
    register = html[html.index('id="falsifiers"') :].split("</section>", 1)[0]
    assert "AAPL:revenue_growth_yoy:FY2025" in register and "0.125" not in register
    assert 'class="fact-ref"' in register  # the reference renders as the fact's value, code's figure
    # ... and the run's memo document says what code dropped, and why.
    step = AgentStep.objects.get(run=run, kind="memo")
    analyst = Client()
    analyst.force_login(desk["ana"])
    document = analyst.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "the memo has 2 falsifiers; there is no falsifier 3" in document
    assert "the fact store holds no cash for this company" in document


def test_a_hit_on_a_brief_whose_analyst_left_starts_no_run_and_the_history_says_why(
    desk: dict[str, User], tmp_path: Path
) -> None:
    v1 = first_version(desk["ana"])
    desk["ana"].groups.clear()  # no longer an analyst: runs started in their name would be nobody's
    refresh_from(snapshot_with_fiscal_2026(tmp_path / "lower", revenue=410_000_000_000))
    (watch,) = FalsifierWatch.objects.filter(version=v1)
    assert watch.status == Status.HIT and watch.run is None
    assert "ana is no longer an active analyst" in watch.reopen_note
    assert Run.objects.filter(brief=v1.brief).count() == 1
    (event,) = hits()
    assert "ana is no longer an active analyst" in event.detail["because"] and event.detail["run"] == ""
    client = Client()
    client.force_login(desk["cm1"])
    assert "ana is no longer an active analyst" in client.get(f"/versions/{v1.pk}/").content.decode()
