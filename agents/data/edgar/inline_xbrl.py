"""Facts from one filing's inline XBRL document (a 10-Q or 10-K as filed): the route for a company that
SEC's companyfacts API does not cover.

Only the document's own period is read (its quarter for a 10-Q, its year for a 10-K), never the
comparatives it repeats: those belong to the filings that first reported them. Facts whose context has a
segment (``xbrldi:explicitMember``: a product line, a region) are skipped, so only totals remain; they often
come first in the document (Apple's "Products" line before total net sales). ``scale`` and ``sign="-"`` are
applied. The period is labelled like the companyfacts route: by the filer's fiscal year end
(``dei:CurrentFiscalYearEndDate``) and the calendar year the fiscal year ends in, so the same quarter gets
the same fact id by either route; without that dei fact, ``dei:DocumentFiscalYearFocus`` is used.

The document does not contain its own accession number or filing date; pass them (from the submissions
list, see ``submissions.find_report``) and the citation points at the filing index, otherwise at the
company's list of filings of that form.

``read_filing`` parses a document once into an ``InlineFiling`` (contexts, units, the labelled own period,
the totals, the citation), so another reader of the same document (``segments``: revenue by product line
and business segment) labels and cites its facts exactly as the totals are, without parsing it again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from lxml import etree

from agents.data.edgar.citations import company_filings_url, filing_index_url
from agents.data.edgar.derived import annual_derived_facts
from agents.data.edgar.factset import CompanyFactSet, period_facts
from agents.data.edgar.metrics import METRICS, TAXONOMIES
from agents.data.edgar.observations import Observation, ObservationTable
from agents.data.edgar.periods import (
    ANNUAL_DAYS,
    QUARTER_DAYS,
    QUARTER_PERIODS,
    first_year_ending_after,
    nominal_date,
    quarter_number,
)
from agents.data.errors import MalformedData, UnsupportedFiler
from agents.data.http import FetchError, gunzip_capped
from agents.data.types import Citation, FiscalPeriod

IX = "{http://www.xbrl.org/2013/inlineXBRL}"
XBRLI = "{http://www.xbrl.org/2003/instance}"
XBRLDI = "{http://xbrl.org/2006/xbrldi}"
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# libxml2's own limits hold (no huge_tree: a text node over 10 MB, names over 50 kB, nesting over 256 levels
# are refused), and a filing is at most MAX_FILING_BYTES unpacked: a filing is untrusted input, and a gzip
# or XML bomb must not take a worker's memory (issue 31 L13). SEC's largest primary documents are tens of MB.
_PARSER = etree.XMLParser(huge_tree=False, resolve_entities=False, no_network=True)
MAX_FILING_BYTES = 64 * 1024 * 1024
# Every concept some metric reads, in either taxonomy, mapped to its metric.
_METRIC_OF = {
    concept: metric for metric in METRICS for taxonomy in TAXONOMIES for concept in metric.concepts(taxonomy)
}


@dataclass(frozen=True)
class Context:
    """An XBRL context: its period and its dimensions (explicit members in document order, as
    ``(dimension, member)`` QNames such as ``("srt:ProductOrServiceAxis", "aapl:IPhoneMember")``)."""

    start: date | None
    end: date
    members: tuple[tuple[str, str], ...] = ()
    typed: bool = False  # has an xbrldi:typedMember

    @property
    def dimensional(self) -> bool:
        return bool(self.members) or self.typed


@dataclass(frozen=True)
class TaggedValue:
    """One ``ix:nonFraction`` as filed: concept, context, unit, and its value with scale and sign applied."""

    concept: str
    context: Context
    unit: str
    value: Decimal


@dataclass(frozen=True)
class InlineFiling:
    """One parsed document: what every reader of it needs to label and cite a figure as the totals are.

    ``period_start`` is None for a document that tags no flow over its own period (balances only).
    """

    root: Any
    contexts: dict[str, Context]
    units: dict[str, str]
    form: str
    ticker: str
    cik: int
    entity: str
    taxonomy: str
    currency: str
    totals: ObservationTable
    fiscal_year: int
    fiscal_period: FiscalPeriod
    period_start: date | None
    period_end: date
    accession: str | None
    filed: date | None

    def citation(self, concept: str, *, label: str = "") -> Citation:
        """The filing's citation of ``concept``: its index page, or the company's filings of its form."""
        url = (
            filing_index_url(self.cik, self.accession)
            if self.accession
            else company_filings_url(self.cik, self.form)
        )
        return Citation(
            source="sec-inline-xbrl",
            url=url,
            form=self.form,
            accession=self.accession,
            filed=self.filed,
            concept=concept,
            label=label,
        )

    def values(self, keep: Callable[[str, Context], bool]) -> Iterator[TaggedValue]:
        """Each non-nil numeric fact whose concept and context ``keep`` accepts, in document order."""
        return _tagged_values(self.root, self.contexts, self.units, keep)


def read_filing(
    html: bytes | str,
    *,
    ticker: str,
    accession: str | None = None,
    filed: date | None = None,
    cik: int | None = None,
) -> InlineFiling:
    """Parse the primary document (plain or gzip-compressed) and label its own period.

    ``cik`` is only needed when the document lacks ``dei:EntityCentralIndexKey``.
    """
    root = _parse(html)
    contexts = _contexts(root)
    units = _units(root)
    dei = _dei(root)
    form = dei.get("DocumentType", ("", ""))[0]
    if not form:
        raise MalformedData("the document has no dei:DocumentType: not an SEC inline XBRL filing")
    document_context = contexts.get(dei["DocumentType"][1])
    if document_context is None:
        raise MalformedData(
            f"the document's dei:DocumentType refers to an undefined context {dei['DocumentType'][1]!r}"
        )
    period_end = document_context.end
    filer_cik = _cik(dei, cik)
    fiscal_year, fiscal_period = _label(dei, period_end)
    table, taxonomy, currency = _observations(
        root, contexts, units, form=form, accession=accession, filed=filed
    )
    return InlineFiling(
        root=root,
        contexts=contexts,
        units=units,
        form=form,
        ticker=ticker.strip().upper() or f"CIK{filer_cik:010d}",
        cik=filer_cik,
        entity=dei.get("EntityRegistrantName", (f"CIK {filer_cik}", ""))[0],
        taxonomy=taxonomy,
        currency=currency,
        totals=table,
        fiscal_year=fiscal_year,
        fiscal_period=fiscal_period,
        period_start=_own_period_start(table, period_end, annual=fiscal_period == "FY"),
        period_end=period_end,
        accession=accession,
        filed=filed,
    )


def facts_from_inline_xbrl(
    html: bytes | str,
    *,
    ticker: str,
    accession: str | None = None,
    filed: date | None = None,
    cik: int | None = None,
) -> CompanyFactSet:
    """The filing's own-period facts (``KO:revenue:FY2025Q2``; ``AAPL:revenue:FY2024`` from a 10-K).

    ``html`` is the primary document, plain or gzip-compressed. ``cik`` is only needed when the
    document lacks ``dei:EntityCentralIndexKey``.
    """
    return facts_from_filing(read_filing(html, ticker=ticker, accession=accession, filed=filed, cik=cik))


def facts_from_filing(filing: InlineFiling) -> CompanyFactSet:
    """The totals of a parsed filing's own period, with the derived figures of a fiscal year."""
    # Without a flow for the period (a document of balances only), a zero-length period matches no flow.
    facts = period_facts(
        ticker=filing.ticker,
        taxonomy=filing.taxonomy,
        table=filing.totals,
        start=filing.period_start or filing.period_end,
        end=filing.period_end,
        fiscal_year=filing.fiscal_year,
        fiscal_period=filing.fiscal_period,
        cite=lambda observation: filing.citation(observation.concept),
    )
    if filing.fiscal_period == "FY":
        facts.extend(annual_derived_facts({filing.fiscal_year: {fact.metric: fact for fact in facts}}))
    return CompanyFactSet(
        ticker=filing.ticker,
        cik=filing.cik,
        entity=filing.entity,
        taxonomy=filing.taxonomy,
        facts=tuple(facts),
    )


def _parse(html: bytes | str) -> Any:
    raw = html.encode("utf-8") if isinstance(html, str) else html
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gunzip_capped(raw, max_bytes=MAX_FILING_BYTES, what="the filing")
        if len(raw) > MAX_FILING_BYTES:
            raise MalformedData(f"refusing a filing of {len(raw)} bytes, over the cap of {MAX_FILING_BYTES}")
        return etree.fromstring(raw, _PARSER)
    except (FetchError, OSError, EOFError, etree.XMLSyntaxError) as exc:
        raise MalformedData(f"not a well-formed inline XBRL (XHTML) document: {exc}") from exc


def _text(element: Any) -> str:
    return " ".join("".join(element.itertext()).replace("\xa0", " ").split())


def _contexts(root: Any) -> dict[str, Context]:
    contexts: dict[str, Context] = {}
    for element in root.iter(f"{XBRLI}context"):
        period = element.find(f"{XBRLI}period")
        if period is None:
            continue
        instant, start, end = (
            period.findtext(f"{XBRLI}{tag}") for tag in ("instant", "startDate", "endDate")
        )
        try:
            context = Context(
                start=date.fromisoformat(start.strip()) if start else None,
                end=date.fromisoformat((end or instant or "").strip()),
                members=tuple(
                    (member.get("dimension", "").strip(), _text(member))
                    for member in element.iter(f"{XBRLDI}explicitMember")
                ),
                typed=element.find(f".//{XBRLDI}typedMember") is not None,
            )
        except ValueError as exc:
            raise MalformedData(f"context {element.get('id')!r} has a bad period date: {exc}") from exc
        contexts[element.get("id", "")] = context
    return contexts


def _units(root: Any) -> dict[str, str]:
    """Unit ids -> companyfacts-style unit names: ``USD``, ``shares``, ``USD/shares``."""

    def measures(element: Any) -> str:
        return "*".join(_text(measure).split(":")[-1] for measure in element.iter(f"{XBRLI}measure"))

    units: dict[str, str] = {}
    for element in root.iter(f"{XBRLI}unit"):
        divide = element.find(f"{XBRLI}divide")
        if divide is None:
            units[element.get("id", "")] = measures(element)
        else:
            numerator, denominator = (
                divide.find(f"{XBRLI}unitNumerator"),
                divide.find(f"{XBRLI}unitDenominator"),
            )
            units[element.get("id", "")] = f"{measures(numerator)}/{measures(denominator)}"
    return units


def _dei(root: Any) -> dict[str, tuple[str, str]]:
    """dei facts by local name -> (text, context id); the first occurrence of each wins."""
    found: dict[str, tuple[str, str]] = {}
    for element in root.iter(f"{IX}nonNumeric"):
        prefix, _, local = element.get("name", "").partition(":")
        if prefix == "dei" and local not in found:
            found[local] = (_text(element), element.get("contextRef", ""))
    return found


def _cik(dei: dict[str, tuple[str, str]], fallback: int | None) -> int:
    raw = dei.get("EntityCentralIndexKey", ("", ""))[0]
    if raw.isdigit():
        return int(raw)
    if fallback is not None:
        return fallback
    raise MalformedData("the document has no dei:EntityCentralIndexKey; pass cik=")


def _label(dei: dict[str, tuple[str, str]], period_end: date) -> tuple[int, FiscalPeriod]:
    focus = dei.get("DocumentFiscalPeriodFocus", ("", ""))[0].upper()
    year_end = _month_day(dei.get("CurrentFiscalYearEndDate", ("", ""))[0])
    if year_end is not None:
        month, day = year_end
        year = first_year_ending_after(period_end, lambda y: nominal_date(y, month, day))
        if focus == "FY":
            return year, "FY"
        number = quarter_number(period_end, nominal_date(year, month, day))
        if number in QUARTER_PERIODS:
            return year, QUARTER_PERIODS[number]
    year_focus = dei.get("DocumentFiscalYearFocus", ("", ""))[0]
    if not re.fullmatch(r"\d{4}", year_focus) or focus not in {"FY", *QUARTER_PERIODS.values()}:
        raise MalformedData(
            "cannot tell which fiscal period the document covers "
            f"(dei:DocumentFiscalYearFocus {year_focus!r}, dei:DocumentFiscalPeriodFocus {focus!r})"
        )
    return int(year_focus), "FY" if focus == "FY" else QUARTER_PERIODS[int(focus[1])]


def _month_day(text: str) -> tuple[int, int] | None:
    """``--09-27``, ``12/31``, ``1/25``, ``12-31`` or ``September 28`` (dei:CurrentFiscalYearEndDate)."""
    numeric = re.fullmatch(r"(?:--)?(\d{1,2})[-/](\d{1,2})", text.strip())
    named = re.fullmatch(r"([A-Za-z]+)\s*(\d{1,2})", text.strip())
    if numeric:
        month, day = int(numeric[1]), int(numeric[2])
    elif named and named[1][:3].lower() in MONTHS:
        month, day = MONTHS.index(named[1][:3].lower()) + 1, int(named[2])
    else:
        return None
    try:
        date(2000, month, day)  # a leap year, so 29 February passes
    except ValueError:
        return None
    return month, day


def _tagged_values(
    root: Any, contexts: dict[str, Context], units: dict[str, str], keep: Callable[[str, Context], bool]
) -> Iterator[TaggedValue]:
    """Each non-nil ``ix:nonFraction`` whose concept and context ``keep`` accepts, in document order; only
    those are read as numbers, so a garbled value elsewhere in the document does not stop the reading."""
    for element in root.iter(f"{IX}nonFraction"):
        concept = element.get("name", "")
        context = contexts.get(element.get("contextRef", ""))
        if context is None or element.get(XSI_NIL) == "true" or not keep(concept, context):
            continue
        yield TaggedValue(concept, context, units.get(element.get("unitRef", ""), ""), _number(element))


def _observations(
    root: Any,
    contexts: dict[str, Context],
    units: dict[str, str],
    *,
    form: str,
    accession: str | None,
    filed: date | None,
) -> tuple[ObservationTable, str, str]:
    """The totals (facts without dimensions) of every concept some metric reads; the taxonomy and the
    reporting currency (the unit most currency figures are in)."""
    raw = [
        Observation(
            concept=tagged.concept,
            unit=tagged.unit,
            start=tagged.context.start,
            end=tagged.context.end,
            value=tagged.value,
            form=form,
            accession=accession,
            filed=filed,
        )
        for tagged in _tagged_values(
            root, contexts, units, lambda concept, context: concept in _METRIC_OF and not context.dimensional
        )
    ]
    taxonomy = next((t for t in TAXONOMIES if any(o.concept.startswith(f"{t}:") for o in raw)), None)
    if taxonomy is None:
        raise UnsupportedFiler("the document tags none of the us-gaap or ifrs-full figures this desk reads")
    currencies = Counter(o.unit for o in raw if _METRIC_OF[o.concept].unit_kind == "currency")
    currency = max(currencies, key=lambda unit: (currencies[unit], unit)) if currencies else "USD"
    table: ObservationTable = {}
    for observation in raw:
        metric = _METRIC_OF[observation.concept]
        wants_start = metric.kind == "duration"
        if observation.unit == metric.unit(currency) and (observation.start is not None) == wants_start:
            # The same fact is often shown twice (statement and notes); the first occurrence stands.
            table.setdefault(observation.concept, {}).setdefault(observation.key, observation)
    return table, taxonomy, currency


def _number(element: Any) -> Decimal:
    text = _text(element)
    style = (element.get("format") or "").rpartition(":")[2].replace("-", "")
    name = element.get("name")
    if style in {"fixedzero", "zerodash"} or (
        style == "numwordsen" and text.lower() in {"no", "none", "nil", "zero"}
    ):
        value = Decimal(0)
    else:
        digits = text.replace(" ", "")
        digits = (
            digits.replace(".", "").replace(",", ".")
            if style == "numcommadecimal"
            else digits.replace(",", "")
        )
        try:
            value = Decimal(digits)
        except InvalidOperation as exc:
            raise MalformedData(
                f"{name} ({element.get('id')}) has a value that is not a number: {text!r}"
            ) from exc
        if not value.is_finite() or value < 0:
            raise MalformedData(
                f"{name} ({element.get('id')}) has a value that is not a plain number: {text!r}"
            )
    try:
        value = value.scaleb(int(element.get("scale") or 0))
    except ValueError as exc:
        raise MalformedData(f"{name} ({element.get('id')}) has a bad scale {element.get('scale')!r}") from exc
    if element.get("sign") == "-":
        value = -value
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value


def _own_period_start(table: ObservationTable, end: date, *, annual: bool) -> date | None:
    """The start of the document's own period: the quarter (or year) ending at its period end date."""
    lengths = ANNUAL_DAYS if annual else QUARTER_DAYS
    starts: Counter[date] = Counter()
    for observations in table.values():
        for start, period_end in observations:
            if start is not None and period_end == end and (end - start).days in lengths:
                starts[start] += 1
    return max(starts, key=lambda start: (starts[start], start)) if starts else None
