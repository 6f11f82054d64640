"""Evidence every workflow's data stage gathers by code from the fact store: facts and documents as
``EvidenceItem``s with their tiers, the selections they come from (annual figures, the latest quarter, the
latest quant figures, documents about a company), and how a prompt lists them.

Selections are deterministic (ordered by metric and period, documents by date then id), so the same data gives
the same prompts, the same request hashes, and a rerun that costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import get_args

from django.db.models import Max

from agents.data.formatting import format_value
from agents.data.types import period_label
from agents.evidence import EvidenceItem, FundamentalMetric, document_tier, fact_tier
from agents.text.resolution import Printed, printed_facts
from agents.text.sentences import fit
from memos.models import Company, FactRecord, SourceDocument

FUNDAMENTAL_METRICS: tuple[str, ...] = get_args(FundamentalMetric)
QUANT_MACRO_METRICS = ("beta", "beta_sector", "volatility_annualised", "return_ytd", "alpha_1w")
MAX_DOCUMENTS = 6
DOCUMENT_CHARS = 600
TITLE_CHARS = 160


def fact_item(fact: FactRecord) -> EvidenceItem:
    period = fact_period(fact)
    filing = f"{fact.form} filed {fact.filed}" if fact.form and fact.filed else fact.derivation or fact.source
    return EvidenceItem(
        evidence_id=fact.fact_id,
        kind="fact",
        tier=fact_tier(fact.source),
        summary=f"{fact.metric.replace('_', ' ')} {period}: {format_value(fact.value, fact.unit)} ({filing})",
        cue=f"{format_value(fact.value, fact.unit)} ({_short_source(fact)})",
        metric=fact.metric,
        period=period,
        value=str(fact.value),
        unit=fact.unit,
        as_of=fact.filed or fact.period_end,
    )


def printed(items: Iterable[EvidenceItem]) -> tuple[Printed, ...]:
    """The facts among ``items`` as a typed number is compared with them (agents.text.resolution). Evidence
    frozen before items carried their unit gives it from the value's printed form (its cue)."""
    found = []
    for item in items:
        if item.kind != "fact" or not item.value:
            continue
        try:
            value = Decimal(item.value)
        except InvalidOperation:
            continue
        unit = item.unit or _unit_printed(item.cue or item.summary)
        found.append(Printed(item.evidence_id, value, unit, item.period, item.metric))
    return printed_facts(found)


def _unit_printed(cue: str) -> str:
    """The unit agents.data.formatting.format_value printed a value with."""
    shown = cue.split(" (", maxsplit=1)[0]
    if shown.endswith("%"):
        return "percent"
    if shown.endswith(" M shares"):
        return "shares"
    words = shown.split()
    if words and words[0] in {"USD", "TWD", "EUR"}:
        return words[0]
    return words[-1] if len(words) > 1 else "pure"


def _short_source(fact: FactRecord) -> str:
    if fact.form and fact.filed:
        return f"{fact.form} {fact.filed}"
    return "derived" if fact.derivation else fact.source


def fact_line(item: EvidenceItem) -> str:
    """A fact as a prompt lists it: its id, its tier and its cue (see EvidenceItem.cue)."""
    return f"- {item.evidence_id} [{item.tier}] {item.cue or item.summary}"


def fiscal_label(fact: FactRecord) -> str:
    """The fact's fiscal year or quarter as its id spells it ("FY2024", "FY2025Q3"); "" for a period of
    another kind (a day's price)."""
    if fact.fiscal_year and (fact.fiscal_period == "FY" or fact.fiscal_period.startswith("Q")):
        return period_label(fact.fiscal_year, fact.fiscal_period)
    return ""


def fact_period(fact: FactRecord) -> str:
    """A fact's period as prompts and pages name it: its fiscal label, else the day it stands at."""
    return fiscal_label(fact) or f"as of {fact.period_end}"


def document_item(document: SourceDocument) -> EvidenceItem:
    return EvidenceItem(
        evidence_id=document.doc_id,
        kind="document",
        tier=document_tier(document.kind),
        summary=f"{document.kind} · {document.source} · {document.published or 'undated'}: "
        f"{fit(document.title, TITLE_CHARS)}",
        text=document.text[:DOCUMENT_CHARS],
        published=document.published,
        as_of=document.published,
    )


def annual(company: Company, metrics: Iterable[str], years: int) -> list[FactRecord]:
    facts = FactRecord.objects.filter(company=company, fiscal_period="FY", metric__in=list(metrics))
    latest = facts.aggregate(latest=Max("fiscal_year"))["latest"]
    if latest is None:
        return []
    return list(facts.filter(fiscal_year__gt=latest - years).order_by("metric", "-fiscal_year"))


def latest_quarter(company: Company) -> list[FactRecord]:
    quarters = FactRecord.objects.filter(
        company=company, fiscal_period__startswith="Q", metric__in=["revenue", "net_income"]
    )
    last = quarters.order_by("-period_end").first()
    return list(quarters.filter(period_end=last.period_end).order_by("metric")) if last else []


def quant(company: Company, metrics: Iterable[str] | None = None) -> list[FactRecord]:
    facts = FactRecord.objects.filter(company=company, fiscal_period="DAY")
    last = facts.order_by("-period_end").first()
    if last is None:
        return []
    chosen = facts.filter(period_end=last.period_end)
    if metrics is not None:
        chosen = chosen.filter(metric__in=list(metrics))
    return list(chosen.order_by("metric"))


def documents(
    company: Company, pattern: re.Pattern[str] | None = None, kinds: Iterable[str] = ("news",)
) -> list[SourceDocument]:
    about = SourceDocument.objects.filter(tickers__contains=[company.ticker], kind__in=list(kinds))
    chosen = [
        d
        for d in about.order_by("-published", "doc_id")
        if pattern is None or pattern.search(f"{d.title} {d.text}")
    ]
    return chosen[:MAX_DOCUMENTS]


def fact_lines(items: Iterable[EvidenceItem]) -> str:
    lines = [fact_line(item) for item in items if item.kind == "fact"]
    return "\n".join(lines) or "(no figures for this domain)"


def document_block(items: Iterable[EvidenceItem]) -> str:
    blocks = [
        f"[{item.evidence_id}] ({item.tier}) {item.summary}\n{item.text}"
        for item in items
        if item.kind == "document"
    ]
    return "\n\n".join(blocks) or "(no documents for this domain)"
