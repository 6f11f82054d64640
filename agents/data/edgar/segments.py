"""Revenue by product line and by business segment, read from one filing's inline XBRL document.

Why apart from the totals: ``inline_xbrl`` keeps only facts without dimensions, so ``AAPL:revenue:FY2024``
is always the company's total. A segment line is the same revenue (the concepts the ``revenue`` metric
reads, in its fallback order, chosen per line) in a context with exactly one ``xbrldi:explicitMember``,
on ``srt:ProductOrServiceAxis`` (product and service lines: Apple's iPhone, NVIDIA's Data Center) or on
``us-gaap:StatementBusinessSegmentsAxis`` (reportable segments: Apple's Americas, Tesla's Automotive). A
context with a second dimension is a cross-cut, not a line of either breakdown, and is skipped: Coca-Cola's
product lines by country, and NVIDIA's segments, which it tags with ``srt:ConsolidationItemsAxis`` too.

Only the document's own period, labelled and cited exactly as its totals (``inline_xbrl.read_filing``),
values as filed (scale and sign applied: Coca-Cola's eliminations are negative). Each line is a fact with a
metric of its own that names its axis, so the two breakdowns never mix: ``AAPL:revenue_product_iphone:FY2024``
("Revenue: iPhone") and ``AAPL:revenue_segment_americas:FY2024`` ("Revenue: Americas").

The lines of one axis are not always a partition: filers tag subtotals on the same axis (Apple's Products
beside iPhone, Mac, iPad and Wearables; NVIDIA's Data Center beside its Compute and Networking parts). The
document cannot tell them apart (the hierarchy lives in the filing's linkbase), so nothing here sums lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from itertools import combinations

from agents.data.edgar.factset import fact_id
from agents.data.edgar.inline_xbrl import Context, InlineFiling, TaggedValue, read_filing
from agents.data.edgar.metrics import METRICS_BY_NAME
from agents.data.types import Fact

PRODUCT_AXIS = "srt:ProductOrServiceAxis"
SEGMENT_AXIS = "us-gaap:StatementBusinessSegmentsAxis"
# Axis -> the prefix of its lines' metrics; the slug of the member's name follows.
METRIC_PREFIXES = {PRODUCT_AXIS: "revenue_product_", SEGMENT_AXIS: "revenue_segment_"}
METRIC_MAX_CHARS = 60  # the fact store's metric column
REVENUE = METRICS_BY_NAME["revenue"]

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SMALL_WORDS = frozenset({"And", "Or", "Of", "The", "For", "In", "To", "With", "From"})
# Words a filer glued together that CamelCase alone cannot split (Apple's WearablesHomeandAccessoriesMember).
_GLUED = {"Homeand": "Home and"}


def segment_facts_from_inline_xbrl(
    html: bytes | str,
    *,
    ticker: str,
    accession: str | None = None,
    filed: date | None = None,
    cik: int | None = None,
) -> tuple[Fact, ...]:
    """The revenue lines of the document's own period (arguments as for ``facts_from_inline_xbrl``)."""
    return segment_facts(read_filing(html, ticker=ticker, accession=accession, filed=filed, cik=cik))


def segment_facts(filing: InlineFiling) -> tuple[Fact, ...]:
    """One fact per product line, then per business segment, each in document order.

    Two members whose names give the same metric (the same words under two prefixes): the first stands.
    """
    start, end = filing.period_start, filing.period_end
    if start is None:  # a document of balances only has no revenue over its period
        return ()
    concepts = REVENUE.concepts(filing.taxonomy)
    unit = REVENUE.unit(filing.currency)

    def keep(concept: str, context: Context) -> bool:
        return (
            concept in concepts
            and len(context.members) == 1
            and not context.typed
            and context.members[0][0] in METRIC_PREFIXES
            and (context.start, context.end) == (start, end)
        )

    # (axis, member) -> concept -> the value first tagged; dicts keep the document's order.
    lines: dict[tuple[str, str], dict[str, TaggedValue]] = {}
    for tagged in filing.values(keep):
        if tagged.unit == unit:
            lines.setdefault(tagged.context.members[0], {}).setdefault(tagged.concept, tagged)
    facts: dict[str, Fact] = {}
    for axis in METRIC_PREFIXES:
        for (line_axis, member), by_concept in lines.items():
            name = member_name(member)
            metric = _metric(axis, name)
            if line_axis != axis or not metric or metric in facts:
                continue
            # The revenue metric's fallback order, as for the totals: Tesla's segments are tagged
            # us-gaap:Revenues, its product lines contract revenue.
            chosen = next(by_concept[concept] for concept in concepts if concept in by_concept)
            facts[metric] = _fact(filing, metric, chosen, label=f"Revenue: {name}")
    return tuple(facts.values())


def member_name(member: str) -> str:
    """A member's name for people: ``aapl:IPhoneMember`` -> ``iPhone``, ``nvda:OEMAndOtherMember`` ->
    ``OEM and Other``, ``aapl:AmericasSegmentMember`` -> ``Americas``."""
    local = re.sub(r"Member$", "", member.rpartition(":")[2].strip())
    local = re.sub(r"(?<=.)Segment$", "", local)
    words: list[str] = []
    for word in _WORD.findall(local):
        if words and words[-1] == "I" and word[:1].isupper():
            words[-1] = f"i{word}"  # Apple's products: IPhone -> iPhone, IPad -> iPad
        elif words and word in _SMALL_WORDS:
            words.append(word.lower())
        else:
            words.append(_GLUED.get(word, word))
    return " ".join(words)


def segment_axis(fact_id: str) -> str | None:
    """The axis a segment fact's line is on (``srt:ProductOrServiceAxis`` or
    ``us-gaap:StatementBusinessSegmentsAxis``); None for any other fact id."""
    parts = fact_id.split(":")
    if len(parts) != 3:
        return None
    return next((axis for axis, prefix in METRIC_PREFIXES.items() if parts[1].startswith(prefix)), None)


def is_segment(fact_id: str) -> bool:
    """Whether ``fact_id`` is one revenue line of a breakdown: never a total, a derived or a market figure."""
    return segment_axis(fact_id) is not None


def _metric(axis: str, name: str) -> str:
    prefix = METRIC_PREFIXES[axis]
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    slug = slug[: METRIC_MAX_CHARS - len(prefix)].rstrip("_")
    return f"{prefix}{slug}" if slug else ""


def _fact(filing: InlineFiling, metric: str, tagged: TaggedValue, *, label: str) -> Fact:
    return Fact(
        fact_id=fact_id(filing.ticker, metric, filing.fiscal_year, filing.fiscal_period),
        ticker=filing.ticker,
        metric=metric,
        value=tagged.value,
        unit=tagged.unit,
        period_start=tagged.context.start,
        period_end=tagged.context.end,
        fiscal_year=filing.fiscal_year,
        fiscal_period=filing.fiscal_period,
        citation=filing.citation(tagged.concept, label=label),
    )


MAX_PARTITION_LINES = 16  # 65,536 subsets at most: an axis with more lines is not shown as a breakdown


def complete_breakdown(lines: Mapping[str, Decimal], total: Decimal) -> tuple[str, ...]:
    """The most lines of one axis and period whose values sum exactly to the filed ``total``, in the order
    given; () when no two or more do. Filers tag subtotals beside the lines (Apple's Products beside iPhone
    and Mac), and only the linkbase says which is which: the largest exact partition of the total is the
    finest breakdown the document holds, and an exact sum is code's check that nothing is counted twice."""
    ids = list(lines)
    if len(ids) > MAX_PARTITION_LINES:
        return ()
    for size in range(len(ids), 1, -1):
        for chosen in combinations(ids, size):
            if sum((lines[i] for i in chosen), Decimal(0)) == total:
                return chosen
    return ()
