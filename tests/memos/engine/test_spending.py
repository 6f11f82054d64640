"""Spending caps that hold (issue 31, 5): a person's daily token quota, checked when a run starts (a run's
budget never exceeds what is left of its starter's day, counting the budgets of runs still going) and
shown on the form; a ceiling on every workflow's budget, the agency's sized one included; a budget for a
calibration pass of the deck's judge, whose calls belong to no run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from agents.deck.rubrics import DECK_R2
from memos.models import Run
from memos.pipeline.deck.desk.calibration import CalibrationError, calibrate, record_gold_score
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from tests.memos.deck.test_calibration import R2_KEYS, finished_decks
from tests.memos.deck_support import fake_deck_llm
from tests.memos.pipeline_support import analyst, load_desk_data, person

pytestmark = pytest.mark.django_db


@contextmanager
def caps(**changed: Any) -> Iterator[None]:
    with override_settings(LLM_SETTINGS=settings.LLM_SETTINGS.model_copy(update=changed)):
        yield


def _start(user: Any, question: str, workflow: str = "memo", profile: str = "quick") -> Run:
    brief = create_brief(owner=user, ticker="AAPL", question=question)
    return start_run(brief=brief, user=user, profile=profile, workflow=workflow, enqueue=False)


def test_a_day_s_quota_caps_each_run_s_budget_and_refuses_a_run_once_it_is_spent() -> None:
    load_desk_data("AAPL")
    ana, bea = analyst("ana"), analyst("bea")
    with caps(run_budget_tokens=250_000, user_daily_tokens=300_000, run_budget_max_tokens=None):
        first = _start(ana, "Does the buyback hold?")
        assert first.budget_tokens == 250_000
        # A run still going counts with its whole budget: the next one gets what is left of the day.
        second = _start(ana, "Is the margin durable?")
        assert second.budget_tokens == 50_000
        with pytest.raises(ServiceError, match=r"daily token quota \(300,000 of 300,000 tokens today"):
            _start(ana, "Is services growth durable?")
        assert Run.objects.filter(created_by=ana).count() == 2
        # Another person's day is their own.
        assert _start(bea, "Does the buyback hold?").budget_tokens == 250_000
        # A finished run counts what it spent.
        Run.objects.filter(pk=first.pk).update(status=Run.Status.DONE, tokens_spent=12_000)
        third = _start(ana, "Is services growth durable?")
        assert third.budget_tokens == 300_000 - 12_000 - 50_000
        page = Client()
        page.force_login(ana)
        form = page.get("/briefs/new/").content.decode()
        assert "300,000 of your 300,000 tokens today used or set aside" in form


def test_a_quota_holds_with_run_budgets_switched_off() -> None:
    load_desk_data("AAPL")
    with caps(run_budget_tokens=None, user_daily_tokens=300_000, run_budget_max_tokens=None):
        run = _start(analyst("ana"), "Does the buyback hold?")
    assert run.budget_tokens == 300_000  # the gateway reserves every call against it


def test_no_workflow_sizes_its_budget_past_the_ceiling() -> None:
    load_desk_data("AAPL")
    user = analyst("ana")
    with caps(run_budget_max_tokens=None, user_daily_tokens=None):
        sized = _start(user, "Which moves next?", workflow="agency", profile="full")
    assert sized.budget_tokens is not None and sized.budget_tokens > 2_000_000  # about 3,000 tokens a call
    Run.objects.filter(pk=sized.pk).update(status=Run.Status.DONE)
    with caps(run_budget_max_tokens=400_000, user_daily_tokens=None):
        capped = _start(user, "Which moves now?", workflow="agency", profile="full")
    assert capped.budget_tokens == 400_000


@pytest.mark.django_db(transaction=True)
def test_a_calibration_pass_stops_at_its_budget() -> None:
    owner = analyst("ana")
    with fake_deck_llm():
        (version,) = finished_decks(1, owner)
    scorer = person("cleo", "committee")
    record_gold_score(version=version, rubric_name=DECK_R2, scores=dict.fromkeys(R2_KEYS, 3), user=scorer)
    stopped = pytest.raises(CalibrationError, match=r"stopped at its token budget \(0 of 5,000 tokens")
    with fake_deck_llm(), caps(calibration_budget_tokens=5_000), stopped:
        calibrate(rubric_name=DECK_R2)
    with fake_deck_llm(), caps(calibration_budget_tokens=500_000):
        assert calibrate(rubric_name=DECK_R2).examples == 1
