"""Data that stays fresh in live mode, against recorded SEC responses: one SEC rate limit for every process
(in Redis), SEC's answers kept byte for byte so the figures derive again from them without the network, the
daily refresh of watched companies with its failures recorded, and the home page saying both."""

from __future__ import annotations

import gzip
import itertools
import time
from datetime import UTC, datetime, timedelta

import django_rq
import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import timezone
from rq.job import JobStatus

from agents.data.edgar import LiveEdgarSource, load_company_facts
from agents.data.errors import DataError
from agents.data.http import FetchError
from agents.data.news import LiveSearch
from agents.data.prices import LivePriceSource
from agents.data.shared_rate import LimitBooked, SharedRateLimiter
from memos.models import Brief, Company, FactRecord, RawResponse, SourceDocument
from memos.pipeline.raw_responses import KeptEdgarSource, keep_raw, latest_raw
from memos.services import fact_refresh
from memos.services.fact_refresh import refresh_company_facts, refresh_due
from memos.services.runs import create_brief
from tests.agents.data.test_edgar_sources import COMPANYFACTS_API, RecordedSec
from tests.memos.pipeline_support import analyst, load_desk_data
from tests.memos.screen.test_live_prices import SEARCH_ANSWER, SEARCH_TEMPLATE, SNAPSHOT, _as_stooq

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_processes_share_one_sec_rate_limit() -> None:
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = "test:sec-next-slot"
    client.delete(key)
    slots: list[float] = []  # when each request may go: when it asked, plus the wait it was given
    asked = 0.0

    def sleep(seconds: float) -> None:  # nothing sleeps: the wait is recorded against when it was asked
        slots[-1] = asked + seconds

    web, worker = (SharedRateLimiter(client, 10, key=key, sleep=sleep) for _ in range(2))
    for limiter in (web, worker, web, worker):  # four requests at once, from two processes
        asked = time.monotonic()
        slots.append(asked)
        limiter.wait()
    # However slowly a loaded machine asks, the slots are a tenth of a second apart, one after another.
    gaps = [later - earlier for earlier, later in itertools.pairwise(slots)]
    assert gaps == pytest.approx([0.1, 0.1, 0.1], abs=0.02)


def test_a_slot_further_off_than_the_longest_wait_is_refused_and_not_taken() -> None:
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = "test:sec-booked"
    client.delete(key)
    waits: list[float] = []
    limiter = SharedRateLimiter(client, 1, key=key, sleep=waits.append, max_wait_s=2.5)  # one a second
    for _ in range(3):
        limiter.wait()  # now, in 1 s, in 2 s
    with pytest.raises(LimitBooked, match=r"booked more than 2\.5 s ahead"):
        limiter.wait()  # 3 s off: refused at once, never asleep behind the queue
    booked = int(client.get(key) or 0)
    with pytest.raises(LimitBooked):
        limiter.wait()
    assert int(client.get(key) or 0) == booked  # a refusal takes nothing
    assert len(waits) == 2 and waits[-1] == pytest.approx(2.0, abs=0.2)


def test_the_limits_key_outlives_every_slot_it_has_given_out() -> None:
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = "test:sec-expiry"
    client.delete(key)
    limiter = SharedRateLimiter(client, 0.01, key=key, sleep=lambda s: None, max_wait_s=1000)  # 100 s apart
    for _ in range(3):
        limiter.wait()  # the last slot given out is 200 s ahead, the next one 300 s
    assert client.pttl(key) > 300_000  # it expired after 60 s before: the next caller got "now", a burst


def test_an_unreachable_redis_leaves_each_process_its_own_limit() -> None:
    down = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    waits: list[float] = []
    limiter = SharedRateLimiter(down, 0.5, key="test:sec", sleep=waits.append)  # one request per 2 s
    limiter.wait()
    limiter.wait()  # Redis is not asked again for a while: this process spaces its own requests
    assert len(waits) == 1 and 1.5 < waits[0] <= 2.0


def test_secs_answers_are_kept_once_and_the_figures_derive_again_from_them() -> None:
    live = LiveEdgarSource(RecordedSec(), keep=keep_raw)
    fetched = load_company_facts(live, "AAPL")
    urls = set(RawResponse.objects.values_list("url", flat=True))
    assert urls == {
        "https://www.sec.gov/files/company_tickers.json",
        f"{COMPANYFACTS_API}/CIK0000320193.json",
    }
    assert load_company_facts(KeptEdgarSource(), "AAPL") == fetched  # no network: what SEC sent

    load_company_facts(LiveEdgarSource(RecordedSec(), keep=keep_raw), "AAPL")
    assert RawResponse.objects.count() == 2  # the same answers again: seen, not stored twice
    keep_raw(f"{COMPANYFACTS_API}/CIK0000320193.json", b'{"cik": 320193, "facts": {}}')
    assert RawResponse.objects.filter(url__endswith="CIK0000320193.json").count() == 2  # a changed answer


def test_a_refresh_records_when_it_succeeded_and_why_it_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    load_desk_data("AAPL")
    monkeypatch.setattr(fact_refresh, "edgar_source", lambda: LiveEdgarSource(RecordedSec(), keep=keep_raw))
    refresh_company_facts("AAPL")
    apple = Company.objects.get(ticker="AAPL")
    assert apple.facts_refreshed_at is not None and apple.refresh_error == ""

    def refused(url: str) -> bytes:
        from agents.data.http import FetchError

        raise FetchError(f"{url} answered HTTP 503")

    monkeypatch.setattr(fact_refresh, "edgar_source", lambda: LiveEdgarSource(refused))
    with pytest.raises(DataError):
        refresh_company_facts("AAPL")
    apple.refresh_from_db()
    assert "answered HTTP 503" in apple.refresh_error and apple.refresh_failed_at is not None
    assert apple.facts_refreshed_at is not None  # the last success still stands

    owner = analyst()
    create_brief(owner=owner, ticker="AAPL", question="Keep the position?")  # AAPL is watched

    def panel_for(user: User) -> str:
        client = Client()
        client.force_login(user)
        with override_settings(DATA_MODE="live"):
            page = client.get("/").content.decode()
        return page[page.index('id="refreshes"') :]

    # Why it failed names hosts and paths of the desk's sources: for admins (issue 31, secrets never leave).
    analysts_panel = panel_for(owner)
    assert "AAPL" in analysts_panel and "failed" in analysts_panel and "HTTP 503" not in analysts_panel
    assert "answered HTTP 503" in panel_for(User.objects.create_superuser("root", "root@example.org", "pw"))


def test_the_daily_refresh_queues_the_watched_companies_that_are_due() -> None:
    owner = analyst()
    for ticker, name in (("AAPL", "Apple Inc."), ("TSLA", "Tesla, Inc."), ("NVDA", "NVIDIA Corp.")):
        company = Company.objects.create(ticker=ticker, name=name)
        if ticker != "NVDA":  # NVDA is in the fact store, but no brief is about it
            Brief.objects.create(company=company, question="Keep the position?", owner=owner)
    now = timezone.now()
    Company.objects.filter(ticker="AAPL").update(facts_refreshed_at=now - timedelta(hours=2))
    Company.objects.filter(ticker="TSLA").update(facts_refreshed_at=now - timedelta(hours=30))
    assert refresh_due(now=now, enqueue=False) == []  # snapshot mode: nothing to refresh
    with override_settings(DATA_MODE="live"):
        assert refresh_due(now=now, enqueue=False) == ["TSLA"]  # NVDA has no brief; AAPL is fresh
        Company.objects.filter(ticker="TSLA").update(refresh_failed_at=now - timedelta(minutes=10))
        assert refresh_due(now=now, enqueue=False) == []  # failed a moment ago: it waits an hour
        assert refresh_due(now=now + timedelta(hours=2), enqueue=False) == ["TSLA"]


def test_a_refresh_still_queued_or_running_is_not_queued_again() -> None:
    owner = analyst()
    company = Company.objects.create(ticker="TSLA", name="Tesla, Inc.")
    Brief.objects.create(company=company, question="Keep the position?", owner=owner)
    # The desk's own work: on the queue only the workers kept for scheduled work take (memos.pipeline.driver).
    queue = django_rq.get_queue("scheduled")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
    now = timezone.now()
    with override_settings(DATA_MODE="live"):
        assert refresh_due(now=now) == ["TSLA"]
        assert queue.count == 1
        # The worker has not taken it yet (or is still on it): the next ticks queue nothing more.
        assert refresh_due(now=now + timedelta(minutes=5)) == []
        job = queue.jobs[0]
        job.set_status(JobStatus.STARTED)
        assert refresh_due(now=now + timedelta(minutes=10)) == []
        assert queue.count == 1
        # Once it ended without refreshing (failed or lost), the company is due again and queued again.
        job.set_status(JobStatus.FAILED)
        assert refresh_due(now=now + timedelta(minutes=15)) == ["TSLA"]
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves it unannotated


def test_a_live_refresh_also_reads_prices_and_news_and_says_which_part_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    load_desk_data("AAPL")
    bars = {
        "aapl": _as_stooq(SNAPSHOT / "stocknet" / "price" / "AAPL.csv"),
        "spy": _as_stooq(SNAPSHOT / "prices" / "daily" / "SPY_1999-2020_pandas-ta.csv"),
    }
    asked: list[str] = []

    def prices(url: str) -> bytes:
        asked.append(url)
        return bars[url.split("s=")[1].split(".", maxsplit=1)[0]]

    def news_feed(url: str) -> bytes:
        asked.append(url)
        return SEARCH_ANSWER

    after_close = datetime(2017, 9, 5, 0, 0, tzinfo=UTC)
    monkeypatch.setattr(fact_refresh, "edgar_source", lambda: LiveEdgarSource(RecordedSec(), keep=keep_raw))
    monkeypatch.setattr(
        fact_refresh, "live_price_source", lambda: LivePriceSource(prices, now=lambda: after_close)
    )
    monkeypatch.setattr(fact_refresh, "live_search", lambda: LiveSearch(news_feed, SEARCH_TEMPLATE))
    with override_settings(DATA_MODE="live"):
        outcome = refresh_company_facts("AAPL")
    assert outcome["prices"] and outcome["news"] == 3  # every item the search answered
    beta = FactRecord.objects.get(company__ticker="AAPL", metric="beta", source="prices")
    assert beta.url == "https://stooq.com/q/d/l/?s=aapl.us&i=d" and str(beta.period_end) == "2017-09-01"
    assert SourceDocument.objects.filter(url="https://news.example.com/a1").exists()
    assert any("q=Apple" in url for url in asked)
    apple = Company.objects.get(ticker="AAPL")
    assert apple.refresh_error == ""

    def down(url: str) -> bytes:
        raise FetchError(f"{url} answered HTTP 502")

    monkeypatch.setattr(fact_refresh, "live_price_source", lambda: LivePriceSource(down))
    with override_settings(DATA_MODE="live"):
        outcome = refresh_company_facts("AAPL")  # the SEC figures and the news still refresh
    apple.refresh_from_db()
    assert apple.refresh_error.startswith("prices: the price provider did not answer for AAPL")
    assert apple.refresh_failed_at is not None and "news" in outcome


@override_settings(RAW_RESPONSES_PER_URL=2)
def test_the_answers_kept_per_url_are_bounded_to_the_newest() -> None:
    url = f"{COMPANYFACTS_API}/CIK0000320193.json"
    for n in range(5):
        keep_raw(url, b'{"cik": 320193, "facts": {}, "n": %d}' % n)
    keep_raw("https://www.sec.gov/files/company_tickers.json", b"{}")
    bodies = RawResponse.objects.filter(url=url).values_list("body", flat=True)
    kept = [gzip.decompress(bytes(body)) for body in bodies]
    assert sorted(kept) == [b'{"cik": 320193, "facts": {}, "n": 3}', b'{"cik": 320193, "facts": {}, "n": 4}']
    assert latest_raw(url) == b'{"cik": 320193, "facts": {}, "n": 4}'  # what a refresh reads again
    assert RawResponse.objects.filter(url__endswith="company_tickers.json").count() == 1  # another URL's own
