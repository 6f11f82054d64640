"""Which figures each slide may show, chosen by code before any model writes a word.

Asked for one slide per section from the same list of figures, a small model put the same capital-expenditure
table on four slides. So code splits the run's figures into topics (a metric belongs to one topic) and gives
each topic to the one section whose name and purpose speak of it most; a section nothing speaks to gets the
topic left over. A slide's drafter is offered its section's figures only, so no table or chart can appear on
two slides. The price-risk figures are kept for the risks slide code writes, the latest year's bridge from
revenue to net income for the section that owns profitability, and revenue by line (where the filings break
it down) for the section that owns growth.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agents.data.edgar.derived import EARNINGS_STEPS
from agents.data.edgar.segments import is_segment
from agents.data.types import period_label
from agents.deck.spec import Figure

# topic -> (words in a section's name or purpose that ask for it, metrics it holds). A metric's quarterly,
# trailing and annual figures go with it unless a topic names the quarterly or trailing metric itself.
TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "growth": (
        ("growth", "grow", "revenue", "sales", "demand", "top line", "expansion", "market share", "scale"),
        ("revenue", "revenue_growth_yoy", "segment"),
    ),
    "recent": (
        ("recent", "quarter", "momentum", "latest", "trend", "current", "trajectory", "outlook", "near"),
        (
            "revenue@Q",
            "net_income@Q",
            "gross_margin@Q",
            "operating_margin@Q",
            "revenue_ttm",
            "net_income_ttm",
            "operating_margin_ttm",
            "net_margin_ttm",
            "gross_margin_ttm",
        ),
    ),
    "profitability": (
        ("margin", "profit", "profitability", "cost", "efficien", "pricing", "operating", "bridge"),
        ("gross_margin", "operating_margin", "net_margin", "gross_profit", "operating_income"),
    ),
    "earnings": (
        ("earning", "income", "eps", "per share", "shareholder", "valuation", "value", "return"),
        ("net_income", "eps_diluted", *EARNINGS_STEPS),
    ),
    "cash": (
        ("cash", "capital", "capex", "invest", "allocation", "balance", "liquidity", "dividend", "buyback"),
        ("operating_cash_flow", "capex", "fcf", "cash"),
    ),
    "innovation": (
        ("r&d", "research", "innovation", "product", "technology", "pipeline", "development", "ai"),
        ("rnd_expense",),
    ),
    "market": (
        ("stock", "share price", "market", "investor", "performance", "sentiment", "price"),
        ("return_ytd",),
    ),
    "peers": (
        ("peer", "competit", "rival", "industry", "relative", "versus", "position", "landscape"),
        ("peer",),
    ),
}
RISK_METRICS = ("beta", "volatility_annualised", "beta_sector")
# A deck's body has at least this many sections' slides. A scope may list fewer once the sections the desk's
# own slides answer are set aside (the embedded 1.5B's scope was "Executive Summary, Risks, Sources": no body
# at all); code then adds these, in order, for the topics the figures hold: (name, purpose, topic).
MIN_BODY_SECTIONS = 3
DEFAULT_SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("Growth", "Whether revenue growth holds, year by year.", "growth"),
    ("Profitability", "What the margins and the bridge from revenue to net income say.", "profitability"),
    ("Cash and capital", "How free cash flow and capital expenditure fund the business.", "cash"),
    ("Recent quarters", "What the latest quarters and the trailing twelve months say.", "recent"),
)
BRIDGE_METRICS = (
    "revenue",
    "cost_of_revenue",
    "gross_profit",
    "operating_expenses",
    "operating_income",
    "below_operating",
    "net_income",
)
BRIDGE_TOPIC = "profitability"
EARNINGS_TOTAL = "net_income"
MIX_TOPIC = "growth"  # the section that owns growth shows where revenue comes from
EARNINGS_TOPIC = "earnings"  # and the one that owns earnings what moved net income on the year
_WORD = re.compile(r"[a-z&]+")


@dataclass(frozen=True)
class SectionPlanned:
    """What code planned for one section's slide."""

    section: str
    topics: tuple[str, ...]
    figures: tuple[str, ...]  # fact ids the slide may show, in the run's order
    bridge: tuple[str, ...] = ()  # the bridge's fact ids, in order, when code draws one on this slide
    mix: tuple[str, ...] = ()  # revenue by line, largest first, when code draws the breakdown on this slide
    # Last year's net income, each line's effect, this year's: when code draws that bridge on this slide.
    earnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Assignment:
    sections: dict[str, SectionPlanned]
    risks: tuple[str, ...]  # the price-risk figures, for code's risks slide

    def figures_for(self, sections: Sequence[str]) -> tuple[str, ...]:
        """The ids the named sections may show together (a reviser editing several slides at once)."""
        found = [
            fact_id for name in sections if name in self.sections for fact_id in self.sections[name].figures
        ]
        return tuple(dict.fromkeys(found))


def metric_of(fact_id: str) -> str:
    return fact_id.split(":")[1] if fact_id.count(":") >= 2 else ""


def _key(figure: Figure, own: str = "") -> str:
    """The metric, marked ``@Q`` for a quarter's figure (its period ends in Q1..Q4); "peer" for a figure of
    another company than ``own``; "segment" for one line of revenue by product or segment."""
    if own and not figure.fact_id.startswith(f"{own}:"):
        return "peer"
    if is_segment(figure.fact_id):
        return "segment"
    metric = metric_of(figure.fact_id)
    return f"{metric}@Q" if re.search(r"Q[1-4]$", figure.period) and not metric.endswith("_ttm") else metric


def assign(sections: Sequence[tuple[str, str]], figures: Sequence[Figure], *, own: str = "") -> Assignment:
    """Each section (name, purpose) its topics and their figures; the price-risk figures set aside. ``own``
    is the company's ticker: another company's figures are its peers'."""
    names = [name for name, _ in sections]
    keys = {f.fact_id: _key(f, own) for f in figures}
    present = {
        topic for topic, (_, metrics) in TOPICS.items() if any(keys[f.fact_id] in metrics for f in figures)
    }
    scores = {
        topic: [_score(f"{name} {purpose}", TOPICS[topic][0]) for name, purpose in sections]
        for topic in present
    }
    owned: dict[str, list[str]] = {name: [] for name in names}
    # Strongest asks first: a topic goes to the section that names it most (ties: the one holding fewest).
    for topic in sorted(present, key=lambda t: (-max(scores[t], default=0), list(TOPICS).index(t))):
        best = max(range(len(names)), key=lambda i: (scores[topic][i], -len(owned[names[i]]), -i))
        if scores[topic][best] > 0:
            owned[names[best]].append(topic)
    left = [t for t in TOPICS if t in present and not any(t in topics for topics in owned.values())]
    for name in names:  # a section nothing was given takes the next topic left, then one from the richest
        if not owned[name]:
            if left:
                owned[name].append(left.pop(0))
            else:
                richest = max(names, key=lambda n: len(owned[n]))
                if len(owned[richest]) > 1:
                    owned[name].append(owned[richest].pop())
    for topic in left:  # what no section asked for goes where least is
        owned[min(names, key=lambda n: len(owned[n]))].append(topic)
    planned = {}
    for name in names:
        metrics = {m for topic in owned[name] for m in TOPICS[topic][1]}
        chosen = tuple(f.fact_id for f in figures if keys[f.fact_id] in metrics)
        bridge = bridge_ids(figures) if BRIDGE_TOPIC in owned[name] else ()
        mix = tuple(i for i in chosen if keys[i] == "segment") if MIX_TOPIC in owned[name] else ()
        # One code chart a slide: the earnings bridge where the slide has no other.
        earnings = earnings_ids(figures) if EARNINGS_TOPIC in owned[name] and not (bridge or mix) else ()
        planned[name] = SectionPlanned(name, tuple(owned[name]), chosen, bridge, mix, earnings)
    risks = tuple(
        f.fact_id for f in figures if metric_of(f.fact_id) in RISK_METRICS and keys[f.fact_id] != "peer"
    )
    return Assignment(sections=planned, risks=risks)


def body_sections(
    asked: Sequence[tuple[str, str]], figures: Sequence[Figure], *, own: str = ""
) -> list[tuple[str, str]]:
    """The sections to draft: the scope's (less those code's slides answer, which the caller left out), and
    code's defaults after them until there are ``MIN_BODY_SECTIONS``, each for a topic the figures hold and
    no asked section speaks of."""
    body = list(asked)
    held = {topic for topic, (_, metrics) in TOPICS.items() if any(_key(f, own) in metrics for f in figures)}
    spoken = {
        t for t, (words, _) in TOPICS.items() for name, purpose in body if _score(f"{name} {purpose}", words)
    }
    for name, purpose, topic in DEFAULT_SECTIONS:
        if len(body) >= MIN_BODY_SECTIONS:
            break
        if topic in held and topic not in spoken and name not in {n for n, _ in body}:
            body.append((name, purpose))
    return body


def bridge_ids(figures: Sequence[Figure]) -> tuple[str, ...]:
    """The latest fiscal year's steps from revenue to net income, when every one of them is there."""
    _, annual = _own_annual(figures)
    if not annual:
        return ()
    latest = max(f.period for f in annual)
    by_metric = {metric_of(f.fact_id): f.fact_id for f in annual if f.period == latest}
    steps = [by_metric.get(metric) for metric in BRIDGE_METRICS]
    return tuple(step for step in steps if step is not None) if all(steps) else ()


def earnings_ids(figures: Sequence[Figure]) -> tuple[str, ...]:
    """The previous fiscal year's net income, each line's effect on it, and the latest year's, when every
    one of them is there."""
    own, figured = _own_annual(figures)
    annual = {f.fact_id for f in figured}
    years = sorted({int(f.period[2:]) for f in figured if metric_of(f.fact_id) == EARNINGS_TOTAL})
    if not years:
        return ()
    latest = years[-1]
    ids = (
        f"{own}:{EARNINGS_TOTAL}:{period_label(latest - 1, 'FY')}",
        *(f"{own}:{step}:{period_label(latest, 'FY')}" for step in EARNINGS_STEPS),
        f"{own}:{EARNINGS_TOTAL}:{period_label(latest, 'FY')}",
    )
    return ids if all(i in annual for i in ids) else ()


def _own_annual(figures: Sequence[Figure]) -> tuple[str, list[Figure]]:
    """The company's ticker (the first figure's: the data stage lists its own first) and its fiscal years'
    figures, peers' left out: what both of code's bridges are drawn from."""
    own = figures[0].fact_id.split(":", 1)[0] if figures else ""
    return own, [f for f in figures if f.fiscal and not f.fiscal[1] and f.fact_id.startswith(f"{own}:")]


def _score(text: str, words: Sequence[str]) -> int:
    lowered = " ".join(_WORD.findall(text.casefold()))
    # A short word is matched whole ("ai" is not "aim"); a longer one as a word's start ("grow", "growing").
    return sum(
        1 for word in words if re.search(rf"\b{re.escape(word)}" + (r"\b" if len(word) <= 3 else ""), lowered)
    )


def latest_figures(figures: Mapping[str, Figure]) -> dict[str, Figure]:
    """Each metric's figure of its latest fiscal year and of its latest quarter, and every figure of
    another kind of period (a price record "as of" a day): what the executive summary's reasons are offered.
    One figure backs a reason, and offered three years the embedded drafter put the oldest ("revenue growth
    FY2023: -2.8%") under a reason about today's growth."""
    latest: dict[tuple[str, bool], tuple[tuple[int, int], str]] = {}  # (id less period, quarter?) -> latest
    kept: set[str] = set()
    for fact_id, figure in figures.items():
        when = figure.fiscal
        if when is None:
            kept.add(fact_id)
            continue
        key = (fact_id.rsplit(":", 1)[0], when[1] != 0)
        if key not in latest or when > latest[key][0]:
            latest[key] = (when, fact_id)
    chosen = kept | {fact_id for _, fact_id in latest.values()}
    return {fact_id: figure for fact_id, figure in figures.items() if fact_id in chosen}


def figures_of(ids: Sequence[str], figures: Mapping[str, Figure]) -> dict[str, Figure]:
    return {fact_id: figures[fact_id] for fact_id in ids if fact_id in figures}
