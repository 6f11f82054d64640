"""``manage.py bootstrap_demo`` loads the bundled real snapshot once, with real figures and citations."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings
from ta.momentum import RSIIndicator

from agents.data.prices import load_price_csv
from memos.models import Company, DataLoad, FactRecord, SourceDocument
from memos.services.accounts import DEMO_USERS
from tests.memos.factories import empty_database

pytestmark = pytest.mark.django_db

# pytest-django adds "testserver" to ALLOWED_HOSTS; demo users are created only for a loopback site.
LOOPBACK = ["127.0.0.1", "localhost"]


def _bootstrap(*args: str) -> str:
    out = StringIO()
    call_command("bootstrap_demo", *args, stdout=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def loaded(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """Load the snapshot once for this module (the slow part); emptied again afterwards so later
    tests start from the database the migrations made, as they would anywhere else (a flush also removes the
    rows the migrations seeded, which factories.empty_database puts back)."""
    with django_db_blocker.unblock(), override_settings(ALLOWED_HOSTS=LOOPBACK):
        output = _bootstrap()
    yield output
    with django_db_blocker.unblock():
        empty_database()


def test_demo_users_can_log_in_with_the_printed_passwords(loaded: str, client: Client) -> None:
    names = ", ".join(demo.username for demo in DEMO_USERS)
    assert f"created demo users: {names}" in loaded
    assert "committee, committee2, committee3" in names
    with override_settings(ALLOWED_HOSTS=LOOPBACK):
        listing = _bootstrap("--list-users")
    for demo in DEMO_USERS:
        assert f"{demo.username}" in listing and demo.password in listing
        page = client.post("/accounts/login/", {"username": demo.username, "password": demo.password})
        assert page.status_code == 302, demo.username
        assert User.objects.get(username=demo.username).groups.filter(name=demo.group).exists()
        client.logout()


def test_a_second_bootstrap_leaves_the_demo_users_as_an_admin_left_them(loaded: str) -> None:
    User.objects.filter(username="analyst").delete()
    User.objects.filter(username="committee").update(is_staff=True)
    with override_settings(ALLOWED_HOSTS=LOOPBACK):
        again = _bootstrap("--no-data")
    assert "demo users were seeded before; left as they are" in again
    assert not User.objects.filter(username="analyst").exists()
    assert User.objects.get(username="committee").is_staff


@override_settings(ALLOWED_HOSTS=["desk.example.com"])
def test_on_a_public_host_name_it_creates_no_demo_users_and_says_why() -> None:
    User.objects.filter(username__in=[demo.username for demo in DEMO_USERS]).delete()
    output = _bootstrap("--no-data")
    assert "no demo users: the site serves desk.example.com" in output
    assert not User.objects.filter(username__in=[demo.username for demo in DEMO_USERS]).exists()
    assert "none: demo logins exist only on a site served on loopback" in _bootstrap("--list-users")


@override_settings(ALLOWED_HOSTS=LOOPBACK, SITE_URL="https://desk.example.com")
def test_with_a_public_site_url_it_creates_no_demo_users_and_says_why() -> None:
    User.objects.filter(username__in=[demo.username for demo in DEMO_USERS]).delete()
    output = _bootstrap("--no-data")
    assert "no demo users: SITE_URL is https://desk.example.com" in output
    assert not User.objects.filter(username__in=[demo.username for demo in DEMO_USERS]).exists()
    assert "none: demo logins exist only on a site served on loopback" in _bootstrap("--list-users")


def test_companyfacts_figures_match_the_10k_with_the_original_filing_cited(loaded: str) -> None:
    revenue = FactRecord.objects.get(fact_id="AAPL:revenue:FY2024")
    assert revenue.value == Decimal("391035000000")
    assert (revenue.form, revenue.accession, str(revenue.filed)) == (
        "10-K",
        "0000320193-24-000123",
        "2024-11-01",
    )
    assert FactRecord.objects.get(fact_id="NVDA:revenue:FY2025").value == Decimal("130497000000")
    apple = Company.objects.get(ticker="AAPL")
    assert apple.sector == "Information Technology" and apple.cik == 320193


def test_inline_xbrl_fills_companies_and_quarters_companyfacts_lacks(loaded: str) -> None:
    ko = FactRecord.objects.get(fact_id="KO:revenue:FY2025Q2")
    assert ko.value == Decimal("12535000000") and ko.source == "sec-inline-xbrl"
    assert FactRecord.objects.get(fact_id="KO:net_income:FY2025Q2").value == Decimal("3810000000")
    tesla = FactRecord.objects.get(fact_id="TSLA:revenue:FY2025Q2")
    assert tesla.value == Decimal("22496000000")
    assert tesla.accession  # the snapshot's submissions list names the 10-Q


def test_the_filings_revenue_by_segment_is_stored_and_counted(loaded: str) -> None:
    iphone = FactRecord.objects.get(fact_id="AAPL:revenue_product_iphone:FY2024")
    assert (iphone.value, iphone.label, iphone.unit) == (Decimal("201183000000"), "Revenue: iPhone", "USD")
    assert (iphone.source, iphone.form, iphone.accession) == (
        "sec-inline-xbrl",
        "10-K",
        "0000320193-24-000123",
    )
    five = ["iphone", "mac", "ipad", "wearables_home_and_accessories", "service"]
    lines = FactRecord.objects.filter(fact_id__in=[f"AAPL:revenue_product_{line}:FY2024" for line in five])
    assert len(lines) == 5
    assert sum(line.value for line in lines) == FactRecord.objects.get(fact_id="AAPL:revenue:FY2024").value
    assert FactRecord.objects.get(fact_id="NVDA:revenue_product_data_center:FY2026Q2").value == Decimal(
        "41096000000"
    )
    # 11 lines in each of AAPL's two filings, NVDA 7, TSLA 11, KO 9 (tests/agents/data/test_edgar_segments.py)
    stored = FactRecord.objects.filter(metric__regex=r"^revenue_(product|segment)_").count()
    assert stored == 49
    assert DataLoad.objects.latest("loaded_at").counts["segments"] == stored
    assert f"{stored} segments" in loaded


def test_a_figure_both_sources_hold_keeps_the_companyfacts_citation(loaded: str) -> None:
    # The 10-K inline document also reports FY2024 revenue; companyfacts' first-filed citation stays.
    assert FactRecord.objects.get(fact_id="AAPL:revenue:FY2024").source == "sec-companyfacts"


def test_quant_profiles_are_stored_as_cited_facts_as_of_the_last_session(loaded: str) -> None:
    rsi = FactRecord.objects.get(fact_id="AAPL:rsi14:2017-09-01")
    # ta's RSI(14) on the same file, the independent reference tests/agents/quant/test_profile.py checks the
    # profile against to 1e-6 (over 1,200 sessions ta's zero seed has decayed far below that).
    closes = load_price_csv(Path(settings.SNAPSHOT_DIR) / "prices/daily/AAPL_2012-2017_stocknet.csv").bars[
        "close"
    ]
    assert float(rsi.value) == pytest.approx(RSIIndicator(closes, window=14).rsi().iloc[-1], abs=1e-6)
    assert rsi.source == "prices" and "AAPL_2012-2017_stocknet.csv" in rsi.label
    assert FactRecord.objects.filter(fact_id="KO:beta:2017-09-01").exists()


def test_news_and_prediction_markets_become_source_documents(loaded: str) -> None:
    kinds = set(SourceDocument.objects.values_list("kind", flat=True))
    assert {"news", "prediction-market"} <= kinds


def test_a_second_run_recognises_the_unchanged_snapshot_and_writes_nothing(loaded: str) -> None:
    assert "loaded snapshot" in loaded
    before = FactRecord.objects.count()

    again = _bootstrap()

    assert "already loaded; nothing to do" in again
    assert FactRecord.objects.count() == before
    assert DataLoad.objects.count() == 1


def test_a_missing_snapshot_folder_is_one_line_and_exit_2(loaded: str, tmp_path: Path) -> None:
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("bootstrap_demo", "--data-dir", str(tmp_path / "nope"), stderr=err)
    assert exit_info.value.code == 2
    assert err.getvalue().strip().count("\n") == 0 and "no snapshot folder" in err.getvalue()
    assert Path(settings.SNAPSHOT_DIR).is_dir()
