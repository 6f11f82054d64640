"""A brief is about a company or a watchlist of symbols, exactly one (a database constraint), and a run starts
only on a brief about the subject its workflow works on."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from memos.models import Brief, Run
from memos.services.errors import ServiceError
from memos.services.runs import start_run
from tests.memos.factories import company

pytestmark = pytest.mark.django_db


def test_a_watchlist_brief_names_its_symbols_wherever_a_brief_is_named(alice: User) -> None:
    brief = Brief.objects.create(owner=alice, symbols=["XLK", "AAPL", "MSFT"], question="Which to watch?")
    assert (brief.subject, brief.subject_kind) == ("watchlist XLK, AAPL, MSFT", "watchlist")
    assert str(brief) == "watchlist XLK, AAPL, MSFT: Which to watch?"
    about_apple = Brief.objects.create(owner=alice, company=company(), question="Keep it?")
    assert (about_apple.subject, about_apple.subject_kind) == ("AAPL", "company")


@pytest.mark.parametrize(("symbols", "with_company"), [(["XLK"], True), ([], False)])
def test_a_brief_about_both_or_neither_is_refused_by_the_database(
    alice: User, symbols: list[str], with_company: bool
) -> None:
    apple = company() if with_company else None
    refused = pytest.raises(IntegrityError, match="a_brief_is_about_a_company_or_a_watchlist")
    with refused, transaction.atomic():
        Brief.objects.create(owner=alice, company=apple, symbols=symbols, question="Which?")
    assert not Brief.objects.exists()


def test_a_memo_is_not_started_on_a_watchlist_and_nothing_is_written(alice: User) -> None:
    brief = Brief.objects.create(owner=alice, symbols=["XLK", "XLF"], question="Which sector?")
    with pytest.raises(ServiceError, match="about a company; this brief is about a watchlist"):
        start_run(brief=brief, user=alice, workflow="memo", profile="quick")
    assert not Run.objects.exists()
