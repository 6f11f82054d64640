"""The fact store: code-owned numbers and untrusted documents written idempotently by natural key, and the
store's version, which PostgreSQL keeps."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import connection, models, transaction

from agents.data.types import Fact, SourceDocument
from agents.text.storable import storable, storable_text
from memos.models import Company, FactRecord
from memos.models import SourceDocument as SourceDocumentRow

if TYPE_CHECKING:
    from agents.data.edgar import CompanyFactSet

Row = TypeVar("Row", bound=models.Model)

_FACT_FIELDS = [
    "company",
    "metric",
    "value",
    "unit",
    "period_start",
    "period_end",
    "fiscal_year",
    "fiscal_period",
    "source",
    "concept",
    "form",
    "accession",
    "filed",
    "url",
    "label",
    "derivation",
    "inputs",
    "data_version",
]


def _fact_row(company: Company, fact: Fact, data_version: str) -> FactRecord:
    # The words come from files (a filing's labels, a feed's units): stored as PostgreSQL takes them.
    citation = fact.citation
    return FactRecord(
        fact_id=storable_text(fact.fact_id),
        company=company,
        metric=storable_text(fact.metric),
        value=fact.value,
        unit=storable_text(fact.unit),
        period_start=fact.period_start,
        period_end=fact.period_end,
        fiscal_year=fact.fiscal_year,
        fiscal_period=fact.fiscal_period,
        source=citation.source,
        concept=storable_text(citation.concept or ""),
        form=storable_text(citation.form or ""),
        accession=storable_text(citation.accession or ""),
        filed=citation.filed,
        url=storable_text(citation.url),
        label=storable_text(citation.label),
        derivation=storable_text(fact.derivation),
        inputs=storable(list(fact.inputs)),
        data_version=data_version,
    )


def fact_rows(*, company: Company, facts: Iterable[Fact], data_version: str = "") -> list[FactRecord]:
    """Unsaved FactRecord rows for ``facts`` under ``company``."""
    return [_fact_row(company, fact, data_version) for fact in facts]


def save_facts(*, company: Company, facts: Iterable[Fact], data_version: str = "") -> int:
    """Upsert facts by ``fact_id``: running it twice writes the same rows, never duplicates."""
    return save_fact_rows(fact_rows(company=company, facts=facts, data_version=data_version))


def save_fact_rows(rows: list[FactRecord]) -> int:
    """Upsert unsaved rows (``fact_rows``, of one company or several) by ``fact_id``."""
    changed = changed_rows(rows, key="fact_id", fields=_FACT_FIELDS)
    if changed:
        FactRecord.objects.bulk_create(
            changed,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["fact_id"],
            update_fields=_FACT_FIELDS,
        )
    return len(rows)


def save_company_facts(fact_set: CompanyFactSet, *, data_version: str = "") -> int:
    """Store a parsed EDGAR fact set under its company (created or updated by ticker)."""
    with transaction.atomic():
        company, _ = Company.objects.update_or_create(
            ticker=fact_set.ticker.upper(),
            defaults={
                "cik": fact_set.cik,
                "name": storable_text(fact_set.entity),
                "taxonomy": fact_set.taxonomy,
            },
        )
        return save_facts(company=company, facts=fact_set.facts, data_version=data_version)


def save_documents(documents: Iterable[SourceDocument]) -> int:
    """Upsert untrusted documents by ``doc_id`` (their text was normalised by the adapter that read them, and
    is stored without what PostgreSQL refuses, whichever adapter that was)."""
    rows = [
        SourceDocumentRow(
            doc_id=storable_text(doc.doc_id),
            kind=doc.kind,
            title=storable_text(doc.title)[:500],
            url=storable_text(doc.url),
            published=doc.published,
            source=storable_text(doc.source),
            text=storable_text(doc.text),
            tickers=storable(list(doc.tickers)),
        )
        for doc in documents
    ]
    fields = ["kind", "title", "url", "published", "source", "text", "tickers"]
    changed = changed_rows(rows, key="doc_id", fields=fields)
    if changed:
        SourceDocumentRow.objects.bulk_create(
            changed, batch_size=500, update_conflicts=True, unique_fields=["doc_id"], update_fields=fields
        )
    return len(rows)


def changed_rows(rows: Sequence[Row], *, key: str, fields: Sequence[str]) -> list[Row]:
    """The unsaved ``rows`` that are new or would change a stored row (by their unique ``key``), compared as
    the columns would hold them. A screen stores the same 1,200 figures and the same posts again on every run:
    rewriting them locked and rewrote every row and, through the store's triggers, moved its version, so
    every cached evidence selection missed after any screen though no value had changed. Reading them back is
    one read-only query a thousand keys."""
    if not rows:
        return []
    meta = type(rows[0])._meta
    columns = [field for field in map(meta.get_field, fields) if isinstance(field, models.Field)]
    if len(columns) != len(fields):
        raise ValueError(f"not all of {fields} are {meta.label}'s columns")
    names = [field.attname for field in columns]  # a foreign key compares by its id
    stored: dict[Any, tuple[object, ...]] = {}
    keys = [getattr(row, key) for row in rows]
    for start in range(0, len(keys), 1000):
        found = type(rows[0])._default_manager.filter(**{f"{key}__in": keys[start : start + 1000]})
        for values in found.values_list(key, *names):
            stored[values[0]] = tuple(_as_stored(f, v) for f, v in zip(columns, values[1:], strict=True))
    return [
        row
        for row in rows
        if stored.get(getattr(row, key))
        != tuple(_as_stored(f, getattr(row, n)) for f, n in zip(columns, names, strict=True))
    ]


def _as_stored(field: models.Field[Any, Any], value: object) -> object:
    """``value`` as ``field``'s column keeps it: a decimal rounded to the column's places (half away from
    zero, as PostgreSQL rounds), a date parsed, JSON in one spelling. A value this cannot say (a malformed
    date) compares as itself, so it is written and the database's own check speaks."""
    if value is None or isinstance(field, models.ForeignKey):
        return value
    try:
        if isinstance(field, models.JSONField):
            return json.dumps(value, sort_keys=True)
        python = field.to_python(value)
        if isinstance(field, models.DecimalField) and isinstance(python, Decimal) and python.is_finite():
            return python.quantize(Decimal(1).scaleb(-field.decimal_places), rounding=ROUND_HALF_UP)
    except Exception:  # noqa: BLE001 - compared as given; the write reports what is wrong with it
        return value
    return python


def fact_store_version() -> str:
    """Changes whenever anything ``holdings`` or an evidence selection reads from the database may have.

    Every statement that writes companies, facts, documents or data loads adds a row to the change log
    (triggers, migration 0012), whoever ran it. The version is the log's size, its newest row and the date of
    its first: the log only grows, so two readers with the same version see the same committed writes (a
    transaction still open or rolled back adds a row nobody else sees), and a recreated database never takes
    an older one's version. One query."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), max(id), min(changed_at) FROM memos_fact_store_change")
        count, newest, first = cursor.fetchone()
    return f"{count}/{newest}/{first.timestamp() if first else ''}"
