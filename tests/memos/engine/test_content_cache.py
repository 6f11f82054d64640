"""A call is reused whenever the request is the same, whoever asked and in whichever brief; a changed input
makes new calls. The fence nonce is the company's, keyed with the server's secret."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memos.models import AgentStep, LLMCall, Run
from memos.pipeline import driver
from memos.services.runs import brief_nonce, create_brief, start_run
from tests.memos.factories import company
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Is the services margin durable over the next 12 months?"


def _memo(run: Run) -> object:
    return AgentStep.objects.get(run=run, key="memo").output


def test_the_same_question_in_a_new_brief_by_someone_else_makes_no_llm_calls() -> None:
    load_desk_data("AAPL")
    first_analyst, second_analyst = analyst("ana"), analyst("bob")
    first = start_run(
        brief=create_brief(owner=first_analyst, ticker="AAPL", question=QUESTION),
        user=first_analyst,
        profile="quick",
        enqueue=False,
        workflow="memo",
    )
    with fake_llm(script_for(first)) as server:
        driver.run_inline(str(first.pk))
        paid = server.request_count
        second = start_run(
            brief=create_brief(owner=second_analyst, ticker="AAPL", question=QUESTION),
            user=second_analyst,
            profile="quick",
            enqueue=False,
            workflow="memo",
        )
        driver.run_inline(str(second.pk))
        assert server.request_count == paid  # not one request reached the endpoint
    second.refresh_from_db()
    assert second.status == Run.Status.DONE, second.status_message
    assert set(LLMCall.objects.filter(run=second).values_list("outcome", flat=True)) == {"cached"}
    assert _memo(second) == _memo(first)


def test_a_changed_question_makes_new_calls() -> None:
    load_desk_data("AAPL")
    user = analyst()
    first = start_run(
        brief=create_brief(owner=user, ticker="AAPL", question=QUESTION),
        user=user,
        profile="quick",
        enqueue=False,
        workflow="memo",
    )
    with fake_llm(script_for(first)) as server:
        driver.run_inline(str(first.pk))
        paid = server.request_count
    changed = start_run(
        brief=create_brief(owner=user, ticker="AAPL", question=QUESTION + " And the hardware margin?"),
        user=user,
        profile="quick",
        enqueue=False,
        workflow="memo",
    )
    with fake_llm(script_for(changed)) as server:
        driver.run_inline(str(changed.pk))
        assert server.request_count == paid
    assert not LLMCall.objects.filter(run=changed, outcome="cached").exists()


def test_the_nonce_is_the_companys_under_this_installations_secret() -> None:
    load_desk_data("AAPL")
    user = analyst()
    one = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    other_question = create_brief(owner=user, ticker="AAPL", question="Is the buyback funded?")
    nvidia = company("NVDA", "NVIDIA Corp.", cik=1045810)
    other_company = create_brief(owner=user, ticker="NVDA", question=QUESTION, company=nvidia)
    here = brief_nonce(one)
    # One marker per company: every brief on it shares the prompt prefix the model server keeps cached.
    assert here == brief_nonce(other_question) != brief_nonce(other_company)
    with override_settings(SECRET_KEY="another-installation-secret-key-0123456789"):
        assert brief_nonce(one) != here  # nobody without this installation's secret can compute it
