"""A run is not lost to an evaluator that fumbles: an answer cut at max_tokens is asked again with a larger
budget; one that never fits delivers the memo "not evaluated", which its analyst can have evaluated again,
that stage alone, from the run page. Real runs, the real openai client, the fake OpenAI-compatible server."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client, RequestFactory

from agents.memo.outputs import MemoOutput
from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.memo.desk.rerun import memo_evaluated
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

# Specialists run on a thread pool with their own connections: they must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Should the committee add to the position ahead of the next product cycle?"
CSRF = "csrf" + "a" * 28


def _run(owner: User | None = None) -> Run:
    load_desk_data("AAPL")
    user = owner or analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="memo")


def _memo(run: Run) -> MemoOutput:
    return MemoOutput.model_validate(AgentStep.objects.get(run=run, key="memo").output)


def _not_evaluated_run() -> Run:
    """A quick run whose evaluator's answer is cut at max_tokens three times: at its budget, at twice it,
    and in the one re-ask."""
    run = _run()
    with fake_llm(script_for(run)) as server:
        server.inject("length", "length", "length", prompt="evaluator")
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    return run


def _browser(user: User) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.cookies[settings.CSRF_COOKIE_NAME] = CSRF
    return client


def _post(client: Client, run: Run) -> int:
    response = client.post(f"/runs/{run.pk}/rerun-evaluation/", headers={"X-CSRFToken": CSRF})
    return response.status_code


def test_an_evaluator_cut_at_max_tokens_is_asked_again_with_twice_the_budget() -> None:
    run = _run()
    with fake_llm(script_for(run)) as server:
        server.inject("length", prompt="evaluator")
        driver.run_inline(str(run.pk))
        budgets = [r["body"]["max_tokens"] for r in server.requests if r["prompt_name"] == "evaluator"]
        again = start_run(
            brief=run.brief, user=run.created_by, profile="quick", enqueue=False, workflow="memo"
        )
        asked = server.request_count
        driver.run_inline(str(again.pk))
        assert server.request_count == asked  # the answer that needed the larger budget is the cache entry
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert budgets == [budgets[0], 2 * budgets[0]]
    rows = LLMCall.objects.filter(run=run, prompt_name="evaluator").order_by("created_at")
    assert [row.outcome for row in rows] == ["invalid", "ok"]
    assert "asked again with" in rows[0].error
    assert _memo(run).evaluated and memo_evaluated(run)


def test_an_evaluation_that_never_fits_delivers_the_memo_marked_not_evaluated() -> None:
    run = _not_evaluated_run()
    assert run.status == Run.Status.NEEDS_REVIEW
    assert run.status_message.startswith("memo ready, not evaluated")
    evaluation = AgentStep.objects.get(run=run, key="evaluation")
    assert evaluation.status == AgentStep.Status.FAILED
    assert evaluation.error.startswith("The evaluation failed: the model's answer did not fit its schema")
    memo = _memo(run)
    assert memo.verdict is None and not memo.evaluated and memo.not_evaluated == evaluation.error
    assert not memo_evaluated(run)  # the check a vote or a publication must pass
    assert memo.firewall.final == "BUY"  # everything code decides still stands

    owner = _browser(run.created_by)
    page = owner.get(
        f"/runs/{run.pk}/steps/{AgentStep.objects.get(run=run, key='memo').pk}/"
    ).content.decode()
    assert "Not evaluated." in page and "cannot be voted on or published" in page
    assert f'action="/runs/{run.pk}/rerun-evaluation/"' in page and "csrfmiddlewaretoken" in page
    card = owner.get(f"/runs/{run.pk}/").content.decode()
    assert "BUY · not evaluated" in card


def test_the_run_page_fragment_offers_the_re_run_to_the_runs_analyst_only() -> None:
    run = _not_evaluated_run()
    committee = User.objects.create_user(username="bob", password="bob-secret-pass")
    for user, offered in ((run.created_by, True), (committee, False)):
        request = RequestFactory().get(f"/runs/{run.pk}/")
        request.user = user
        html = render_to_string(
            "memos/step_documents/memo/rerun_evaluation.html", {"run": run, "user": user}, request=request
        )
        assert "Not evaluated." in html and "cannot be voted on or published" in html
        assert ("Re-run the evaluation" in html) is offered
        assert ("csrfmiddlewaretoken" in html) is offered
    run.status = Run.Status.DONE  # an evaluated run's page says nothing of it
    assert "Not evaluated" not in render_to_string(
        "memos/step_documents/memo/rerun_evaluation.html", {"run": run, "user": run.created_by}
    )


def test_re_running_the_evaluation_asks_only_the_evaluator_and_the_memo_gets_its_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = _not_evaluated_run()
    kept = dict(
        AgentStep.objects.filter(run=run)
        .exclude(stage__in=["evaluation", "memo"])
        .values_list("key", "finished_at")
    )
    queued: list[tuple[str, str]] = []
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: queued.append((run_id, stage)))
    owner = _browser(run.created_by)
    response = owner.post(f"/runs/{run.pk}/rerun-evaluation/", headers={"X-CSRFToken": CSRF})
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert queued == [(str(run.pk), "evaluation")]  # the engine's own job, for that stage only
    run.refresh_from_db()
    assert (run.status, run.stage, run.config["evaluation_reruns"]) == (Run.Status.QUEUED, "evaluation", 1)
    assert set(
        AgentStep.objects.filter(run=run, stage__in=["evaluation", "memo"]).values_list("status", flat=True)
    ) == {AgentStep.Status.PENDING}
    # A second click while it is queued is refused: it is no longer a memo waiting, not evaluated.
    assert _post(owner, run) == 409

    with fake_llm(script_for(run)) as server:
        driver.run_inline(str(run.pk))
        asked = [entry["prompt_name"] for entry in server.requests]
        retry_prompt = server.requests[0]["body"]["messages"][1]["content"]
    assert asked == ["evaluator"]
    assert "This is evaluation request 2 for this memo." in retry_prompt
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    memo = _memo(run)
    assert memo.evaluated and memo.verdict is not None and memo.verdict.decision == "ACCEPT"
    assert memo_evaluated(run)
    unchanged = AgentStep.objects.filter(run=run).exclude(stage__in=["evaluation", "memo"])
    assert dict(unchanged.values_list("key", "finished_at")) == kept


def test_only_the_runs_analyst_may_re_run_it_by_post_with_a_csrf_token() -> None:
    run = _not_evaluated_run()
    url = f"/runs/{run.pk}/rerun-evaluation/"
    owner = _browser(run.created_by)
    assert owner.get(url).status_code == 405
    assert owner.post(url).status_code == 403  # no CSRF token sent
    other_analyst = _browser(analyst("dave"))
    assert _post(other_analyst, run) == 404  # may not see the run at all
    committee = User.objects.create_user(username="bob", password="bob-secret-pass")
    from memos.services.accounts import ensure_groups

    committee.groups.add(ensure_groups()["committee"])
    assert _post(_browser(committee), run) == 403  # sees the run, may not change it
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW and run.config.get("evaluation_reruns", 0) == 0


def test_an_evaluated_memo_cannot_have_its_evaluation_re_run() -> None:
    run = _run()
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    response = _browser(run.created_by).post(
        f"/runs/{run.pk}/rerun-evaluation/", headers={"X-CSRFToken": CSRF}
    )
    assert response.status_code == 409
    assert "delivered not evaluated" in response.content.decode()
    assert QUESTION not in response.content.decode()
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
