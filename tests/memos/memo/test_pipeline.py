"""The memo pipeline end to end against the fake OpenAI-compatible server, through the real openai client."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from agents.llm.config import load_llm_settings
from agents.memo.roster import DEFAULT_PROFILES
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS
from memos.models import AgentStep, ArtefactVersion, FactRecord, LLMCall, Motion, Run
from memos.pipeline import driver
from memos.pipeline.memo.evidence import evidence_for
from memos.pipeline.memo.rehearsal import rehearsal_script
from memos.pipeline.watchdog import resume_stale_runs
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from tests.conftest import ROOT
from tests.memos.pipeline_support import analyst, evidence_of, fake_llm, load_desk_data, script_for

# Specialists run on a thread pool with their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Should the committee add to the position ahead of the next product cycle?"


def _output(run: Run, key: str) -> dict[str, Any]:
    output = AgentStep.objects.get(run=run, key=key).output
    assert isinstance(output, dict)
    return output


def _run(profile: str = "quick", username: str = "ana") -> Run:
    load_desk_data("AAPL")
    user = analyst(username)
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    return start_run(brief=brief, user=user, profile=profile, enqueue=False, workflow="memo")


def test_a_quick_run_produces_a_cited_memo_with_every_layer_done() -> None:
    run = _run("quick")
    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        requests = server.request_count
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    statuses = dict(AgentStep.objects.filter(run=run).values_list("key", "status"))
    assert set(statuses.values()) == {"done"}
    # Exactly the quick plan: the data step, three specialists, the audit, one iteration, evaluation, memo.
    assert set(statuses) == {
        "evidence",
        "fundamentals",
        "quant",
        "news",
        "audit",
        "iteration-1",
        "evaluation",
        "memo",
    }
    # three specialists, one synthesis iteration, one evaluation: each asked exactly once
    assert requests == 5
    # Each call's reservation went back as its row was written.
    assert run.tokens_reserved == 0
    memo = _output(run, "memo")
    assert memo["memo"]["recommendation"] == "BUY"
    # The rehearsal memo rests on the first three ids the specialists cited: the fundamentals brief's
    # AAPL:capex:FY2025, FY2024 and FY2023, filed 10-K figures and so HIGH-tier. With no LOW-tier id
    # load-bearing, the firewall has nothing to downgrade and the stated BUY stands.
    assert memo["memo"]["load_bearing"] == ["AAPL:capex:FY2025", "AAPL:capex:FY2024", "AAPL:capex:FY2023"]
    assert (memo["firewall"]["final"], memo["firewall"]["low_tier_ids"]) == ("BUY", [])
    assert memo["verdict"]["decision"] == "ACCEPT"
    fundamentals = _output(run, "fundamentals")
    assert fundamentals["claims"] and all(
        c["citations"][0].startswith("AAPL:") for c in fundamentals["claims"]
    )
    # The run's running total is the sum of its ledger rows (five calls, each with prompt and answer tokens).
    spent = [row.tokens_in + row.tokens_out for row in LLMCall.objects.filter(run=run)]
    assert len(spent) == 5 and all(spent)
    assert run.data_version and run.tokens_spent == sum(spent)
    # Externalisation lock-in at run time: every call records the hash of the prompt file as it is on disk.
    for name, prompt_hash in LLMCall.objects.filter(run=run).values_list("prompt_name", "prompt_hash"):
        assert prompt_hash == hashlib.sha256((ROOT / "prompts" / f"{name}.md").read_bytes()).hexdigest()


def test_the_evaluator_runs_on_its_own_model() -> None:
    # Started under the settings the fake server's run uses: the evaluator on a model of its own family.
    own_model = load_llm_settings({"LLM_MODEL": "fake-synthesizer", "LLM_MODEL_EVALUATOR": "fake-evaluator"})
    with override_settings(LLM_SETTINGS=own_model):
        run = _run("quick")
    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        models = {entry["prompt_name"]: entry["model"] for entry in server.requests}
    assert models["evaluator"] == "fake-evaluator" and models["synthesizer"] == "fake-synthesizer"
    assert _output(run, "evaluation")["same_model_warning"] == ""
    # On one model, the evaluator's step says its grades come from the memo's own family.
    shared = _run("quick", username="ben")
    with fake_llm(script_for(shared)):
        driver.run_inline(str(shared.pk))
    assert _output(shared, "evaluation")["same_model_warning"].startswith("Same family as the work it judges")


def test_a_rerun_with_unchanged_inputs_makes_no_llm_calls() -> None:
    run = _run("quick")
    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        first = server.request_count
        again = start_run(
            brief=run.brief, user=run.created_by, profile="quick", enqueue=False, workflow="memo"
        )
        driver.run_inline(str(again.pk))
        assert server.request_count == first
    again.refresh_from_db()
    assert again.status == Run.Status.DONE
    assert set(LLMCall.objects.filter(run=again).values_list("outcome", flat=True)) == {"cached"}
    first_memo = _output(run, "memo")
    assert _output(again, "memo") == first_memo


def test_full_profile_runs_six_specialists_and_stops_iterating_once_the_thresholds_are_met() -> None:
    run = _run("full")
    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        synthesis_calls = sum(1 for entry in server.requests if entry["prompt_name"] == "synthesizer")
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    iterations = AgentStep.objects.filter(run=run, stage="synthesis", key__startswith="iteration-")
    assert iterations.count() == 3
    first, second, third = iterations.order_by("position")
    checks = [(step.output or {})["hill_climb"] for step in (first, second)]
    assert checks[0]["reason"] == "first iteration: baseline"
    assert checks[1]["passed"]
    # Seed 000's escape valve: iteration 2 met the thresholds, so iteration 3 was not asked for.
    assert (second.output or {})["escape"]["stop"] is True
    assert third.status == AgentStep.Status.SKIPPED and "met the thresholds" in third.summary
    assert synthesis_calls == 2
    assert _output(run, "memo")["iterations"] == 2
    regulatory = _output(run, "regulatory")
    # The snapshot has no regulatory documents about Apple: the specialist says so instead of writing filler.
    assert regulatory["brief"]["evidence_quality"] == "none" and regulatory["asked_model"] is False


def test_bad_input_is_refused_with_a_clear_message() -> None:
    load_desk_data("AAPL")
    user = analyst()
    with pytest.raises(ServiceError, match="Unknown ticker 'ZZZZQ'"):
        create_brief(owner=user, ticker="zzzzq", question=QUESTION)
    with pytest.raises(ServiceError, match="needs a question"):
        create_brief(owner=user, ticker="AAPL", question="   ")
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")
    with pytest.raises(ServiceError, match="already queued or running"):
        start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")
    assert Run.objects.filter(brief=brief).count() == 1


def test_an_answer_that_never_fits_its_schema_fails_the_run_with_nothing_half_written() -> None:
    run = _run("quick")
    with fake_llm(script_for(run)) as server:
        # the first answer and the one re-ask both come back invalid, on every retry
        for _ in range(4):
            server.inject("invalid_schema", prompt="synthesizer")
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "synthesis" in run.status_message and "schema" in run.status_message.lower()
    assert AgentStep.objects.get(run=run, key="memo").status == AgentStep.Status.SKIPPED
    assert AgentStep.objects.get(run=run, key="iteration-1").status == AgentStep.Status.FAILED


def _analyze(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    try:
        call_command("analyze", *args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return out.getvalue(), err.getvalue(), int(exit_info.code or 0)
    return out.getvalue(), err.getvalue(), 0


def test_analyze_runs_a_memo_from_the_shell_and_prints_the_run_url() -> None:
    company = load_desk_data("AAPL")
    analyst("analyst")
    profile = DEFAULT_PROFILES["quick"]
    evidence = {name: evidence_for(company, name) for name in profile.roster}
    with fake_llm(rehearsal_script(evidence, iterations=profile.iterations)):
        out, err, code = _analyze("aapl", "--brief", QUESTION, "--profile", "quick", "--inline")
    assert code == 0, err
    run = Run.objects.get()
    assert f"/runs/{run.pk}/" in out
    assert "memo done" in out and "recommendation" in out


def test_analyze_refuses_bad_input_with_exit_2_and_creates_nothing() -> None:
    load_desk_data("AAPL")
    analyst("analyst")
    _, err, code = _analyze("ZZZZQ", "--brief", QUESTION, "--inline")
    assert code == 2 and "Unknown ticker 'ZZZZQ'" in err
    _, err, code = _analyze("AAPL", "--brief", QUESTION, "--profile", "huge", "--inline")
    assert code == 2 and "Unknown profile 'huge'" in err
    assert not Run.objects.exists()


def test_an_evaluator_that_grades_the_memo_low_sends_the_run_to_review_not_done() -> None:
    run = _run("quick")
    script = script_for(run)
    low = script["evaluator"][0] | {
        "grades": [
            {
                "iteration": 1,
                "jplus": dict.fromkeys(JPLUS_DIMENSIONS, 0),
                "jminus": dict.fromkeys(JMINUS_DIMENSIONS, 2),
            }
        ]
    }
    script["evaluator"] = [low]
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW
    assert "evaluator says revise" in run.status_message and "Next run:" in run.status_message
    verdict = _output(run, "memo")["verdict"]
    assert verdict["decision"] == "REVISE" and verdict["calibrated_jminus"] == 10


def test_the_evidence_a_run_was_shown_is_frozen_by_its_data_stage() -> None:
    run = _run("quick")
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    shown = evidence_of(run)
    FactRecord.objects.filter(fact_id__startswith="AAPL:revenue:").delete()  # the fact store moves on
    assert evidence_of(run) == shown
    assert any(item.metric == "revenue" for item in shown["fundamentals"])


def test_the_watchdog_requeues_a_queued_run_whose_job_was_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(
        "quick"
    )  # queued, but its first job never reached a worker (enqueue=False stands for a lost job)
    requeued: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: requeued.append((run_id, stage)))
    assert resume_stale_runs(stale_after_s=60) == []  # young: a worker may simply not have reached it yet
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert resume_stale_runs(stale_after_s=60) == [str(run.pk)]
    assert requeued == [(str(run.pk), "data")]
    assert resume_stale_runs(stale_after_s=60) == []  # not again on the next pass: its heartbeat was stamped


def test_a_specialist_whose_answer_never_fit_leaves_a_partial_memo_that_opens_no_vote() -> None:
    run = _run("quick")
    with fake_llm(script_for(run)) as server:
        for _ in range(2):  # the answer and its one re-ask
            server.inject("invalid_schema", prompt="specialist_news")
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    # The memo was written from the two briefs that finished, and says which one did not.
    assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
    news = AgentStep.objects.get(run=run, key="news")
    assert news.status == AgentStep.Status.FAILED
    assert f"not finished: {news.title}" in run.status_message
    version = ArtefactVersion.objects.get(run=run)
    assert [part["step"] for part in version.unfinished] == [news.title]
    assert version.rendered_text.startswith("## Not finished\n")
    assert not Motion.objects.filter(version=version).exists()
