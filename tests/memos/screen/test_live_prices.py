"""Live mode: a watchlist's prices come from the live price adapter (Stooq's CSV over HTTPS, through the
desk's allow-listed fetcher), answered here by recorded responses: the bundled stocknet bars written as
Stooq sends them. A symbol the provider has no data for is said on the run, not filled from a stale file.
The news analyst also asks the configured search API for each sector, its answers kept as documents."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from agents.data.http import FetchError, http_fetcher
from agents.data.news import LiveSearch
from agents.data.prices import LivePriceSource
from agents.screen.outputs import NewsOutput, QuantStep
from memos.models import AgentStep, Run, SourceDocument
from memos.pipeline import data_sources, driver
from memos.pipeline.screen import news, universe
from tests.memos.pipeline_support import fake_llm
from tests.memos.screen.test_screen_run import _screen
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

SNAPSHOT = Path(__file__).resolve().parents[3] / "data" / "snapshot"
FILES = {
    "XOM": SNAPSHOT / "stocknet" / "price" / "XOM.csv",
    "DUK": SNAPSHOT / "stocknet" / "price" / "DUK.csv",
    "SPY": SNAPSHOT / "prices" / "daily" / "SPY_1999-2020_pandas-ta.csv",
}


def _as_stooq(path: Path) -> bytes:
    """The bars as Stooq's daily CSV: Date,Open,High,Low,Close,Volume (no adjusted close)."""
    out = io.StringIO()
    out.write("Date,Open,High,Low,Close,Volume\n")
    for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines()):
        low = {key.strip().lower(): value for key, value in row.items() if key}
        if low["close"] in ("", "null"):
            continue
        out.write(f"{low['date']},{low['open']},{low['high']},{low['low']},{low['close']},{low['volume']}\n")
    return out.getvalue().encode()


def test_a_live_screen_reads_its_watchlist_from_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        symbol = url.split("s=")[1].split(".", maxsplit=1)[0].upper()
        return _as_stooq(FILES[symbol]) if symbol in FILES else b"No data"

    after_close = datetime(2017, 9, 5, 0, 0, tzinfo=UTC)
    monkeypatch.setattr(
        universe, "live_price_source", lambda: LivePriceSource(fetch, now=lambda: after_close)
    )
    with override_settings(DATA_MODE="live"), changed("memos.pipeline.screen", live_prices=True):
        run = _screen(["XOM", "DUK"])
        with fake_llm():
            driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert all(url.startswith("https://stooq.com/") for url in asked)
    assert {url.split("s=")[1].split(".")[0] for url in asked} == {"xom", "duk", "spy", "vix"}
    step = QuantStep.model_validate(AgentStep.objects.get(run=run, key="quant").output)
    quant = step.quant
    assert {p.symbol for p in quant.symbols} == {"XOM", "DUK"}
    assert quant.market.volatility_level is None  # the provider had no VIX: no stale level instead
    assert any(problem.startswith("VIX") for problem in quant.problems)
    xom = next(f for f in quant.figures if f.fact_id.startswith("XOM:alpha_1w"))
    assert xom.url.startswith("https://stooq.com/")


SEARCH_TEMPLATE = "https://news.example.com/rss/search?q={query}"
# An RSS 2.0 answer of a search API, as such a feed sends it (the items are this test's own).
SEARCH_ANSWER = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>search</title>
<item><title>Oil majors slide as crude falls to a six-year low</title><link>https://news.example.com/a1</link>
<pubDate>Thu, 20 Aug 2015 18:00:00 GMT</pubDate>
<description>Exxon and Chevron fell with crude.</description></item>
<item><title>Energy shares lead the market lower</title><link>https://news.example.com/a2</link>
<pubDate>Fri, 21 Aug 2015 20:00:00 GMT</pubDate>
<description>The sector fell more than the market.</description></item>
<item><title>An old story outside the window</title><link>https://news.example.com/a3</link>
<pubDate>Mon, 02 Feb 2015 10:00:00 GMT</pubDate><description>Too old to count.</description></item>
</channel></rss>"""


def test_a_live_screen_asks_the_search_api_for_each_sector(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return SEARCH_ANSWER

    readings = _screened_with_search(monkeypatch, fetch)
    assert asked and all(url.startswith("https://news.example.com/rss/search?q=") for url in asked)
    assert any("Basic%20Materials%20stocks" in url for url in asked)
    titles = {d.title for n in readings for d in n.documents}
    assert "Oil majors slide as crude falls to a six-year low" in titles
    assert "An old story outside the window" not in titles  # the query's window holds
    found = [d.doc_id for n in readings for d in n.documents if d.kind == "news"]
    assert SourceDocument.objects.filter(doc_id__in=found).count() == len(set(found))


def test_the_search_apis_key_goes_in_a_header_and_no_source_but_sec_gets_the_contact_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[dict[str, object]] = []
    real = http_fetcher

    def recorded(**options: Any) -> Any:
        built.append(options)
        return real(**options)

    monkeypatch.setattr(data_sources, "http_fetcher", recorded)
    with override_settings(
        DATA_MODE="live",
        SCREEN_SEARCH_URL=SEARCH_TEMPLATE,
        SCREEN_SEARCH_KEY="sk-live-123",
        SCREEN_SEARCH_KEY_HEADER="X-Api-Key",
        SEC_USER_AGENT="Desk ops ops@firm.example",
    ):
        assert data_sources.live_search() is not None
        data_sources.live_price_source()
    search, prices = built
    assert search["headers"] == {"X-Api-Key": "sk-live-123"}
    assert "sk-live-123" not in SEARCH_TEMPLATE and prices.get("headers") is None
    assert all("ops@firm.example" not in str(options["user_agent"]) for options in built)


def test_a_search_api_outage_leaves_the_desks_documents_and_says_so_in_each_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 31: a search API that failed failed the whole screen (and the weekly slot with it)."""

    def down(url: str) -> bytes:
        raise FetchError("https://news.example.com/rss/search answered HTTP 503")

    readings = _screened_with_search(monkeypatch, down)
    assert readings
    for reading in readings:
        assert reading.dropped[0].startswith("search API failed: https://news.example.com/rss/search")
        assert "the desk's own documents alone" in reading.dropped[0]
        assert all(search.failed for search in reading.searches if search.query.terms)


def _screened_with_search(monkeypatch: pytest.MonkeyPatch, fetch: Callable[[str], bytes]) -> list[NewsOutput]:
    """A live-mode screen of three symbols whose search API answers through ``fetch``, run to DONE; its
    news readings."""
    monkeypatch.setattr(news, "live_search", lambda: LiveSearch(fetch, SEARCH_TEMPLATE))
    with override_settings(DATA_MODE="live", SCREEN_SEARCH_URL=SEARCH_TEMPLATE):
        run = _screen(["XOM", "CVX", "DUK"])
        with fake_llm():
            driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    return [NewsOutput.model_validate(s.output) for s in AgentStep.objects.filter(run=run, kind="news")]
