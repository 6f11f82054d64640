"""The fact store's version (kept by database triggers) and the evidence selections cached under it: a run
never reads a selection older than the store it runs on, whoever changed the store and however."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from agents.data.types import Citation, Fact
from agents.data.types import SourceDocument as Document
from memos.models import Brief, Company, FactRecord, SourceDocument
from memos.pipeline.fact_store import fact_store_version, save_documents, save_facts
from memos.pipeline.memo.evidence import current_evidence, select_evidence
from tests.memos.factories import company, revenue_fact

pytestmark = pytest.mark.django_db


def _fundamentals(of: Company) -> dict[str, Decimal]:
    items = current_evidence(of, ["fundamentals"])["fundamentals"]
    return {item.evidence_id: Decimal(item.value) for item in items}


def _corrected_revenue(of: Company, value: str) -> Fact:
    """The FY2024 revenue as an amended filing restates it: the same fact id, a new value."""
    row = FactRecord.objects.get(fact_id=f"{of.ticker}:revenue:FY2024")
    citation = Citation(
        source=row.source,
        url=row.url,
        form="10-K/A",
        accession="0000320193-25-000001",
        filed=date(2025, 2, 1),
        concept=row.concept,
    )
    return Fact(
        fact_id=row.fact_id,
        ticker=of.ticker,
        metric=row.metric,
        value=Decimal(value),
        unit=row.unit,
        period_start=row.period_start,
        period_end=row.period_end,
        fiscal_year=row.fiscal_year,
        citation=citation,
    )


def test_every_kind_of_write_to_the_store_changes_its_version_and_other_writes_do_not() -> None:
    apple = company()
    seen = {fact_store_version()}

    def changed() -> bool:
        version = fact_store_version()
        new = version not in seen
        seen.add(version)
        return new

    revenue_fact(apple)
    assert changed(), "a new fact"
    save_facts(company=apple, facts=[_corrected_revenue(apple, "391036000000")])
    assert changed(), "a fact corrected in place (an upsert keeps its row and its id)"
    SourceDocument.objects.create(doc_id="news:1", kind="news", title="t", text="x", tickers=["AAPL"])
    assert changed(), "a document"
    Company.objects.filter(pk=apple.pk).update(sector="Technology")
    assert changed(), "a company's sector (its peers change)"
    FactRecord.objects.filter(company=apple).delete()
    assert changed(), "facts deleted"

    Brief.objects.create(company=apple, question="q", owner=User.objects.create(username="ann"))
    assert not changed(), "a brief is not the store"


def _post(text: str, *, tickers: tuple[str, ...] = ("AAPL",)) -> Document:
    return Document(
        doc_id="stocknet:AAPL:1",
        kind="social",
        title="$aapl",
        url="https://stocktwits.com/",
        published=date(2015, 8, 20),
        source="stocknet",
        text=text,
        tickers=tickers,
    )


def _refiled(of: Company, fact: Fact, **update: object) -> None:
    save_facts(company=of, facts=[fact.model_copy(update=update)])


def test_storing_what_is_stored_writes_nothing_and_keeps_the_version(
    django_assert_num_queries: Any,
) -> None:
    apple = company()
    revenue_fact(apple)
    revenue = _corrected_revenue(apple, "391035000000")
    save_facts(company=apple, facts=[revenue])
    save_documents([_post("$aapl beat")])
    version = fact_store_version()

    with django_assert_num_queries(2):  # one read each, no write
        _refiled(apple, revenue, value=Decimal("391035000000.00"))
        save_documents([_post("$aapl beat")])
    # A difference past the column's ten places is not one the column can keep.
    _refiled(apple, revenue, value=Decimal("391035000000.00000000001"))

    assert fact_store_version() == version


def test_a_difference_in_any_column_is_written_and_moves_the_version() -> None:
    apple = company()
    revenue_fact(apple)
    revenue = _corrected_revenue(apple, "391035000000")
    save_facts(company=apple, facts=[revenue])
    save_documents([_post("$aapl beat")])
    versions = [fact_store_version()]

    writes: list[Callable[[], object]] = [
        lambda: save_documents([_post("$aapl beat", tickers=("AAPL", "MSFT"))]),
        lambda: save_documents([_post("$aapl beat again", tickers=("AAPL", "MSFT"))]),
        lambda: _refiled(apple, revenue, value=Decimal("391035000000.1")),
        lambda: _refiled(apple, revenue, value=Decimal("391035000000.1"), fiscal_year=None),
        lambda: _refiled(apple, revenue, fact_id="AAPL:revenue:FY2024b"),
    ]
    for write in writes:
        write()
        versions.append(fact_store_version())

    assert len(set(versions)) == len(versions), "each write moved the version"
    stored = SourceDocument.objects.get(doc_id="stocknet:AAPL:1")
    assert (stored.text, stored.tickers) == ("$aapl beat again", ["AAPL", "MSFT"])
    row = FactRecord.objects.get(fact_id="AAPL:revenue:FY2024")
    assert (row.value, row.fiscal_year) == (Decimal("391035000000.1"), None)
    assert FactRecord.objects.get(fact_id="AAPL:revenue:FY2024b").value == Decimal("391035000000")


def test_a_corrected_figure_reaches_the_next_run_at_once() -> None:
    apple = company()
    revenue_fact(apple)
    assert _fundamentals(apple) == {"AAPL:revenue:FY2024": Decimal("391035000000")}
    assert _fundamentals(apple) == {"AAPL:revenue:FY2024": Decimal("391035000000")}  # from the cache now

    save_facts(company=apple, facts=[_corrected_revenue(apple, "391036000000")])

    assert _fundamentals(apple) == {"AAPL:revenue:FY2024": Decimal("391036000000")}


def test_the_cached_selection_is_the_selection() -> None:
    apple = company()
    revenue_fact(apple)
    revenue_fact(apple, year=2023, value="383285000000")
    roster = ["fundamentals", "competitive", "quant", "news"]
    assert current_evidence(apple, roster) == select_evidence(apple, roster)
    assert current_evidence(apple, roster) == select_evidence(apple, roster)  # read back from the cache


def test_a_write_rolled_back_never_lends_its_version_to_a_later_one() -> None:
    apple = company()
    revenue_fact(apple)
    with pytest.raises(RuntimeError), transaction.atomic():
        revenue_fact(apple, year=2023, value="1")
        inside = fact_store_version()
        assert "AAPL:revenue:FY2023" in _fundamentals(apple)  # cached under the version seen inside
        raise RuntimeError("rolled back")

    revenue_fact(apple, year=2022, value="2")

    assert fact_store_version() != inside
    assert set(_fundamentals(apple)) == {"AAPL:revenue:FY2024", "AAPL:revenue:FY2022"}


def test_the_version_is_one_query(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(1):
        fact_store_version()
