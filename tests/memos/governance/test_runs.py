"""Runs and governed versions, end to end with the fake LLM server: activation switches what new runs use, a
run started before it keeps its pinned prompt and rubric across a resume, and every ledger row carries the
pinned version's content hash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User

from agents.memo.rubric import MEMO_RUBRIC
from memos.models import AgentStep, LLMCall, PromptVersion, RubricVersion, Run
from memos.pipeline import driver
from memos.pipeline.liveness import LOCK_PREFIX
from memos.pipeline.watchdog import resume_stale_runs
from memos.services.governance import activate, propose_prompt, propose_rubric
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

# Specialists run on a thread pool with their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "Governance marker: this synthesizer was edited in the admin."


@pytest.fixture
def ana() -> Iterator[User]:
    load_desk_data("AAPL")
    yield analyst("ana")
    client = redis.Redis.from_url(settings.REDIS_URL)
    for run_id in Run.objects.values_list("pk", flat=True):
        client.delete(LOCK_PREFIX + str(run_id))


@pytest.fixture
def root() -> User:
    return User.objects.create_superuser(username="root", password="root-secret-pass")


def _start(user: User, question: str = "Is the services mix durable?") -> Run:
    brief = create_brief(owner=user, ticker="AAPL", question=question)
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def _new_versions(root: User) -> tuple[PromptVersion, RubricVersion]:
    """An edited synthesizer and a memo rubric whose bar no memo clears (J+ 10/10 to accept), both active."""
    synthesizer = PromptVersion.objects.get(name="synthesizer", is_active=True)
    prompt = propose_prompt(
        base=synthesizer,
        content=synthesizer.content.replace("\n## User\n", f"\n{MARKER}\n\n## User\n", 1),
        user=root,
    )
    memo = RubricVersion.objects.get(name=MEMO_RUBRIC, is_active=True)
    strict = propose_rubric(
        base=memo, content=memo.content.replace("accept_min_jplus: 5", "accept_min_jplus: 10"), user=root
    )
    activate(version=prompt, user=root)
    activate(version=strict, user=root)
    return prompt, strict


def _hashes(run: Run, prompt: str) -> set[str]:
    return set(LLMCall.objects.filter(run=run, prompt_name=prompt).values_list("prompt_hash", flat=True))


def _system_texts(requests: list[dict[str, Any]], prompt: str) -> list[str]:
    return [e["body"]["messages"][0]["content"] for e in requests if e["prompt_name"] == prompt]


def _verdict(run: Run) -> dict[str, Any]:
    output = AgentStep.objects.get(run=run, key="memo").output
    assert isinstance(output, dict)
    verdict: dict[str, Any] = output["verdict"]
    return verdict


def test_every_ledger_row_carries_the_pinned_versions_hash(ana: User) -> None:
    run = _start(ana)
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    rows = list(LLMCall.objects.filter(run=run).values_list("prompt_name", "prompt_hash"))
    assert rows
    for name, prompt_hash in rows:
        assert prompt_hash == run.prompt_versions[name]["hash"]
        assert prompt_hash == PromptVersion.objects.get(pk=run.prompt_versions[name]["id"]).content_hash


def test_activation_switches_what_new_runs_use(ana: User, root: User) -> None:
    before = _start(ana)
    with fake_llm(script_for(before)):
        driver.run_inline(str(before.pk))
    prompt, strict = _new_versions(root)
    after = _start(ana, "Is the services mix durable, now?")
    with fake_llm(script_for(after)) as server:
        driver.run_inline(str(after.pk))
        sent = _system_texts(server.requests, "synthesizer")

    before.refresh_from_db()
    after.refresh_from_db()
    pin = {"version": 2, "hash": prompt.content_hash, "id": prompt.pk}
    assert after.prompt_versions["synthesizer"] == pin
    assert after.rubric_versions[MEMO_RUBRIC]["hash"] == strict.content_hash
    assert _hashes(after, "synthesizer") == {prompt.content_hash}
    assert sent and all(MARKER in text for text in sent)
    # The same memo, judged by the stricter pinned rubric: code's verdict changed with the data, not the code.
    assert (before.status, _verdict(before)["decision"]) == (Run.Status.DONE, "ACCEPT")
    assert (after.status, _verdict(after)["decision"]) == (Run.Status.NEEDS_REVIEW, "REVISE")
    assert "needs >= 10" in _verdict(after)["reason"]


def test_a_run_started_before_an_activation_keeps_its_versions_across_a_resume(
    ana: User, root: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _start(ana)
    pinned = PromptVersion.objects.get(name="synthesizer", is_active=True)
    queued: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: queued.append((run_id, stage)))
    with fake_llm(script_for(run)) as server:
        for _ in range(40):
            server.inject("500", prompt="synthesizer")
        driver.run_inline(str(run.pk))
        run.refresh_from_db()
        assert run.status == Run.Status.RUNNING and run.stage == "synthesis", run.status_message
        server.reset()  # the endpoint is back

        prompt, _ = _new_versions(root)  # an admin activates new versions while the run waits

        assert resume_stale_runs(stale_after_s=60) == [str(run.pk)]
        driver.execute_stage(*queued.pop())
        sent = _system_texts(server.requests, "synthesizer")

    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert run.prompt_versions["synthesizer"]["hash"] == pinned.content_hash != prompt.content_hash
    assert _hashes(run, "synthesizer") == {pinned.content_hash}
    assert sent and not any(MARKER in text for text in sent)
    assert _verdict(run)["decision"] == "ACCEPT"  # the rubric it pinned, not the stricter one activated since


SEED_EXAMPLE = "Apple is a best-in-class franchise and should keep doing well."
NEW_EXAMPLE = "Apple sells beloved phones, so its shares will simply keep rising for ever."


def test_the_evaluator_reads_the_anchor_examples_of_the_rubric_version_its_run_pinned(
    ana: User, root: User
) -> None:
    before = _start(ana)
    memo = RubricVersion.objects.get(name=MEMO_RUBRIC, is_active=True)
    assert SEED_EXAMPLE in memo.content
    edited = propose_rubric(base=memo, content=memo.content.replace(SEED_EXAMPLE, NEW_EXAMPLE), user=root)
    activate(version=edited, user=root)
    after = _start(ana, "Is the services mix durable, now?")
    sent = {}
    for run in (before, after):
        with fake_llm(script_for(run)) as server:
            driver.run_inline(str(run.pk))
            sent[run.pk] = _system_texts(server.requests, "evaluator")
    # The run pinned before the admin's version reads the seed's example; the run after it, the new one.
    assert sent[before.pk] and all(
        SEED_EXAMPLE in text and NEW_EXAMPLE not in text for text in sent[before.pk]
    )
    assert sent[after.pk] and all(NEW_EXAMPLE in text and SEED_EXAMPLE not in text for text in sent[after.pk])
    after.refresh_from_db()
    assert after.rubric_versions[MEMO_RUBRIC]["hash"] == edited.content_hash
