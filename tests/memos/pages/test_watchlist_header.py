"""A run over a watchlist (a screen of 87 symbols) names its size and a few symbols in the run page's header
and title, with the rest one click away, instead of printing every symbol; a short watchlist is shown whole,
and a company's run still shows its ticker."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memos.models import Brief, Run
from tests.memos.factories import run_for

pytestmark = pytest.mark.django_db


def screen_run(owner: User, symbols: list[str]) -> Run:
    brief = Brief.objects.create(symbols=symbols, question="Which symbols moved on their own?", owner=owner)
    return Run.objects.create(brief=brief, created_by=owner, workflow="screen")


def header_of(page: str) -> str:
    found = re.search(r'<div class="run-status.*?</div>', page, re.DOTALL)
    assert found, "no run header"
    return found.group(0)


def test_the_run_page_header_of_a_long_watchlist_shows_its_size_and_five_symbols(
    client: Client, alice: User
) -> None:
    symbols = [f"S{number:02d}" for number in range(87)]
    run = screen_run(alice, symbols)
    client.force_login(alice)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    header = header_of(page)
    shown, rest = header.split("<details", 1)
    assert "watchlist of 87 symbols" in shown and "S00, S01, S02, S03, S04" in shown
    assert "S05" not in shown and "S86" not in shown
    assert "and 82 more" in rest and "S05, S06" in rest and "S86" in rest
    # Nowhere on the page (its details list included) are the symbols printed outside a closed <details>.
    outside = re.sub(r"<details.*?</details>", "", page, flags=re.DOTALL)
    assert "S86" not in outside and "S05" not in outside
    title = re.search(r"<title>(.*?)</title>", page, re.DOTALL)
    assert title and "watchlist of 87 symbols" in title.group(1) and "S00" not in title.group(1)


def test_a_short_watchlist_is_shown_whole_and_a_company_by_its_ticker(client: Client, alice: User) -> None:
    short = screen_run(alice, ["XLK", "AAPL", "MSFT"])
    apple = run_for(alice)
    client.force_login(alice)
    header = header_of(client.get(f"/runs/{short.pk}/").content.decode())
    assert "watchlist of 3 symbols" in header and "XLK, AAPL, MSFT" in header and "<details" not in header
    header = header_of(client.get(f"/runs/{apple.pk}/").content.decode())
    assert '<strong class="ticker">AAPL</strong>' in header and "watchlist" not in header
