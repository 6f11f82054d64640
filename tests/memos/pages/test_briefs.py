"""Asking a question: the brief's fields are bounded and cleaned, and one person cannot fill every worker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memos.models import Brief, Run
from memos.pipeline import driver
from memos.services.errors import ServiceError
from memos.services.runs import ask, create_brief
from tests.memos.factories import company

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "enqueue_stage", lambda run_id, stage: None)


def test_a_person_may_have_only_so_many_runs_queued_or_running(alice: User, settings: Any) -> None:
    company()
    settings.RUN_MAX_ACTIVE_PER_USER = 2
    for n in range(2):
        ask(
            owner=alice,
            ticker="AAPL",
            question=f"Question {n}: is the margin durable?",
            workflow="memo",
            profile="quick",
        )
    with pytest.raises(ServiceError, match="You have 2 runs queued or running"):
        ask(
            owner=alice,
            ticker="AAPL",
            question="A third, while two are waiting",
            workflow="memo",
            profile="quick",
        )
    assert Run.objects.filter(created_by=alice).count() == 2
    assert not Brief.objects.filter(question__startswith="A third").exists()  # refused: nothing written
    Run.objects.filter(created_by=alice).update(status=Run.Status.DONE)
    ask(
        owner=alice,
        ticker="AAPL",
        question="A third, once the others finished",
        workflow="memo",
        profile="quick",
    )


def test_the_bound_is_per_person(alice: User, settings: Any) -> None:
    from tests.memos.pipeline_support import analyst

    company()
    settings.RUN_MAX_ACTIVE_PER_USER = 1
    ask(owner=alice, ticker="AAPL", question="Alice's question", workflow="memo", profile="quick")
    ask(owner=analyst("dave"), ticker="AAPL", question="Dave's question", workflow="memo", profile="quick")
    assert Run.objects.count() == 2


@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("question", Brief.MAX_QUESTION_CHARS),
        ("audience", Brief.MAX_AUDIENCE_CHARS),
        ("notes", Brief.MAX_NOTES_CHARS),
    ],
)
def test_an_overlong_field_is_refused_with_its_name_and_limit(alice: User, field: str, limit: int) -> None:
    company()
    values = {"question": "Is the margin durable?", "audience": "", "notes": ""}

    def brief_with(text: str) -> Brief:
        fields = values | {field: text}
        return create_brief(
            owner=alice,
            ticker="AAPL",
            question=fields["question"],
            audience=fields["audience"],
            notes=fields["notes"],
        )

    with pytest.raises(ServiceError, match=f"The {field} is longer than {limit} characters"):
        brief_with("x" * (limit + 1))
    brief_with("x" * limit)  # the limit itself is fine


def test_control_and_invisible_characters_never_reach_the_database_or_a_prompt(alice: User) -> None:
    company()
    brief = create_brief(
        owner=alice,
        ticker="AAPL",
        question="Is the\x00 margin\u200b durable?\u202e",
        notes="first\x07 line\r\nsecond line",
    )
    brief.refresh_from_db()
    assert brief.question == "Is the margin durable?" and brief.notes == "first line\nsecond line"


@pytest.mark.parametrize("ticker", ["A" * 17, "AAPL; DROP TABLE", "ＡＡＰＬ", "../AAPL", "<b>AAPL</b>"])
def test_a_ticker_that_cannot_be_one_is_refused_before_any_lookup(alice: User, ticker: str) -> None:
    with pytest.raises(ServiceError, match="is not a ticker"):
        create_brief(owner=alice, ticker=ticker, question="Is the margin durable?")


def test_the_brief_form_shows_the_refusal_and_keeps_what_was_typed(
    client: Client, alice: User, settings: Any, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    company()
    settings.RUN_MAX_ACTIVE_PER_USER = 1
    client.force_login(alice)
    form = {"ticker": "AAPL", "question": "First question", "audience": "", "notes": "", "profile": "quick"}
    assert client.post("/briefs/new/", form).status_code == 302
    page = client.post("/briefs/new/", form | {"question": "Second question"}).content.decode()
    assert "You have 1 run queued or running" in page and "Second question" in page
    assert Run.objects.count() == 1


def test_a_second_identical_submission_meets_the_one_active_run_rule(alice: User) -> None:
    company()
    first = ask(owner=alice, ticker="AAPL", question="Same question", workflow="memo", profile="quick")
    with pytest.raises(ServiceError, match="already queued or running"):
        ask(owner=alice, ticker="AAPL", question="Same question", workflow="memo", profile="quick")
    assert Brief.objects.count() == 1 and Run.objects.get() == first
