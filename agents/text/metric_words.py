"""Which metrics may back the words a claim uses for one: the map every workflow's claim check reads.

A small model writes "Apple's cash flow has been increasing" over the cash balance, or "revenue rose" over
gross profit. Each figure is true and the sentence cites it, so no figure check catches it; but the words
name one metric and the figures are another. Code reads the metric a claim names from this map and sets it
against the metric names (the fact store's ``revenue``, ``operating_cash_flow``, ``net_margin`` ...) and the
XBRL concepts (``NetCashProvidedByUsedInOperatingActivities`` ...) of what it cites.

The phrases are matched leftmost-longest, so "operating cash flow" is read before "cash flow", and "cash
flow" before "cash": the balance is "cash", a flow is "cash flow". Left out on purpose, as more often said of
something else than of a figure: bare "equity" ("an equity stake"), bare "return" ("return capital to
shareholders"), "debt" (the desk holds total liabilities, not borrowings), "costs" and "expenses" (the desk
holds no total of them). A claim that names none of these is not checked for its metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class MetricWords:
    name: str  # how a reason names it ("operating cash flow")
    words: tuple[str, ...]  # the phrases a claim uses for it, lower-case
    metrics: str  # a full-match pattern over the fact store's metric names that may back it
    concepts: tuple[str, ...] = ()  # XBRL concepts (local names) that may back it
    rate: bool = False  # a rate of change (growth, a return): a direction word of it is said of the rates

    def backs(self, metric: str, concept: str = "") -> bool:
        local = concept.rsplit(":", 1)[-1]
        return bool(re.fullmatch(self.metrics, metric)) or (bool(local) and local in self.concepts)


_OCF_CONCEPTS = (
    "NetCashProvidedByUsedInOperatingActivities",
    "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
    "CashFlowsFromUsedInOperatingActivities",
)
_TTM = r"(?:_ttm)?"

METRIC_WORDS: tuple[MetricWords, ...] = (
    MetricWords(
        "operating cash flow",
        (
            "operating cash flow",
            "operating cash flows",
            "cash flow from operations",
            "cash flows from operations",
            "cash flow from operating activities",
            "cash flows from operating activities",
            "cash from operations",
            "cash from operating activities",
            "cash provided by operating activities",
            "operating cash",
        ),
        r"operating_cash_flow",
        _OCF_CONCEPTS,
    ),
    MetricWords("free cash flow", ("free cash flow", "free cash flows", "fcf"), r"fcf"),
    # Either flow backs the generic words; never the balance.
    MetricWords(
        "cash flow",
        ("cash flow", "cash flows", "cash generation", "cash generated"),
        r"operating_cash_flow|fcf",
        _OCF_CONCEPTS,
    ),
    MetricWords(
        "the cash balance",
        (
            "cash and cash equivalents",
            "cash and equivalents",
            "cash balance",
            "cash balances",
            "cash position",
            "cash reserves",
            "cash pile",
            "cash on hand",
            "cash holdings",
            "cash",
        ),
        r"cash",
        ("CashAndCashEquivalentsAtCarryingValue", "CashAndCashEquivalents"),
    ),
    MetricWords(
        "capital expenditure",
        ("capital expenditure", "capital expenditures", "capital spending", "capex"),
        r"capex",
        (
            "PaymentsToAcquirePropertyPlantAndEquipment",
            "PaymentsToAcquireProductiveAssets",
            "PurchaseOfPropertyPlantAndEquipmentClassifiedAsInvestingActivities",
        ),
    ),
    # A rate of revenue's change. Bare "growth" is this too: the desk's only growth figure is revenue's.
    MetricWords(
        "revenue growth",
        ("revenue growth", "sales growth", "top-line growth", "growth rate", "growth rates", "growth"),
        r"revenue(?:_\w+)?",
        rate=True,
    ),
    # Revenue, its segment lines (revenue_product_iphone), its trailing twelve months, and its growth rates
    # ("revenue grew" beside the rates is read by their sign).
    MetricWords(
        "revenue",
        ("revenue", "revenues", "net sales", "sales", "top line", "turnover"),
        r"revenue(?:_\w+)?|ni_step_revenue",
        (
            "Revenues",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "SalesRevenueNet",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
            "Revenue",
            "RevenueFromContractsWithCustomers",
        ),
    ),
    # The bridge's steps (agents.data.edgar.derived): the gap between two filed subtotals, and its effect on
    # net income.
    MetricWords(
        "cost of revenue",
        ("cost of revenue", "costs of revenue", "cost of sales", "cost of goods sold", "cogs"),
        r"(?:ni_step_)?cost_of_revenue",
        ("CostOfRevenue", "CostOfGoodsAndServicesSold"),
    ),
    MetricWords(
        "operating expenses",
        ("operating expenses", "operating expense", "opex"),
        r"(?:ni_step_)?operating_expenses",
    ),
    MetricWords("gross profit", ("gross profit", "gross profits"), rf"gross_profit{_TTM}", ("GrossProfit",)),
    MetricWords("gross margin", ("gross margin", "gross margins"), rf"gross_margin{_TTM}"),
    MetricWords(
        "operating income",
        ("operating income", "operating profit", "operating profits", "ebit"),
        rf"operating_income{_TTM}",
        ("OperatingIncomeLoss", "ProfitLossFromOperatingActivities"),
    ),
    MetricWords("operating margin", ("operating margin", "operating margins"), rf"operating_margin{_TTM}"),
    MetricWords(
        "net margin",
        (
            "net margin",
            "net margins",
            "net profit margin",
            "net profit margins",
            "profit margin",
            "profit margins",
        ),
        rf"net_margin{_TTM}",
    ),
    MetricWords(
        "net income",
        ("net income", "net profit", "net profits", "net earnings"),
        rf"net_income{_TTM}|ni_step_\w+",
        ("NetIncomeLoss", "ProfitLoss", "ProfitLossAttributableToOwnersOfParent"),
    ),
    MetricWords(
        "earnings per share",
        ("earnings per share", "diluted eps", "eps"),
        r"eps_diluted",
        ("EarningsPerShareDiluted", "DilutedEarningsLossPerShare"),
    ),
    # Generic profit words: any profit line or margin, never revenue or cash.
    MetricWords(
        "profit",
        ("profit", "profits", "earnings", "profitability", "bottom line"),
        rf"(?:gross_profit|operating_income|net_income|\w*margin){_TTM}|eps_diluted",
        ("GrossProfit", "OperatingIncomeLoss", "NetIncomeLoss", "ProfitLoss"),
    ),
    MetricWords("margin", ("margin", "margins"), r"\w*margin\w*"),
    MetricWords(
        "research and development",
        ("research and development", "research & development", "r&d"),
        r"rnd_expense",
        ("ResearchAndDevelopmentExpense", "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost"),
    ),
    MetricWords("total assets", ("total assets",), r"total_assets", ("Assets",)),
    MetricWords("total liabilities", ("total liabilities",), r"total_liabilities", ("Liabilities",)),
    MetricWords(
        "shareholders' equity",
        (
            "shareholders' equity",
            "stockholders' equity",
            "shareholder equity",
            "stockholder equity",
            "shareholders equity",
            "stockholders equity",
            "book value",
        ),
        r"stockholders_equity",
        (
            "StockholdersEquity",
            "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
            "EquityAttributableToOwnersOfParent",
            "Equity",
        ),
    ),
    MetricWords(
        "shares outstanding",
        ("shares outstanding", "outstanding shares", "share count"),
        r"shares_outstanding",
        ("CommonStockSharesOutstanding",),
    ),
    # The quant engine's figures (agents.quant.profile), each with its own fact id, and the screen's sector
    # averages of them (avg_alpha_1w).
    MetricWords("beta", ("beta",), r"beta\w*"),
    MetricWords("alpha", ("alpha",), r"(?:avg_)?alpha\w*", rate=True),
    MetricWords("RSI", ("rsi", "relative strength index", "relative strength"), r"rsi\w*"),
    MetricWords("trading volume", ("trading volume", "volume"), r"volume\w*"),
    MetricWords("volatility", ("volatility", "average true range", "atr"), r"volatility\w*|atr\w*"),
    MetricWords(
        "the stock's return",
        (
            "stock return",
            "stock returns",
            "stock's return",
            "share price return",
            "total return",
            "weekly return",
        ),
        r"(?:avg_)?(?:return_\w+|alpha\w*)",
        rate=True,
    ),
    # The price itself: "the share price rose" beside a week's return is read by the return's sign.
    MetricWords(
        "the share price",
        ("share price", "share prices", "stock price", "stock prices"),
        r"(?:avg_)?return_\w+",
    ),
    MetricWords("moving average", ("moving average", "moving averages", "sma"), r"sma\w+"),
    MetricWords("Bollinger position", ("bollinger",), r"bb_position"),
)

# Phrases that hold a metric's word but name an event or a thing, not a figure: read, then set aside.
NOT_A_METRIC = frozenset(
    {
        "earnings call",
        "earnings calls",
        "earnings report",
        "earnings reports",
        "earnings release",
        "earnings season",
        "earnings date",
        "sales team",
        "sales force",
        "sales channel",
        "sales channels",
        "cash register",
    }
)

# Metrics whose figures are rates of change, signed: above zero is a rise. "Revenue grew" beside them is
# read by their sign, "revenue growth declined" by their series.
SIGNED = re.compile(r"revenue_growth_yoy|(?:avg_)?(?:return_\w+|alpha\w*)|ni_step_\w+")


@dataclass(frozen=True)
class Named:
    words: MetricWords
    start: int
    end: int


@cache
def _phrases() -> re.Pattern[str]:
    phrases = {phrase for entry in METRIC_WORDS for phrase in entry.words} | NOT_A_METRIC
    ordered = sorted(phrases, key=lambda phrase: (-len(phrase), phrase))
    return re.compile(r"(?<![\w&])(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w&])", re.I)


@cache
def _by_phrase() -> dict[str, MetricWords]:
    found: dict[str, MetricWords] = {}
    for entry in METRIC_WORDS:
        for phrase in entry.words:
            found.setdefault(phrase, entry)
    return found


def named_metrics(text: str) -> list[Named]:
    """Every metric the text names, leftmost-longest, in order ("operating cash flow" once, not also "cash
    flow" and "cash")."""
    by_phrase = _by_phrase()
    # An alternation tries the longer phrases first at each place, so a match is the longest one there.
    return [
        Named(by_phrase[phrase], match.start(), match.end())
        for match in _phrases().finditer(text.replace("\u2019", "'"))
        if (phrase := match.group(0).lower()) not in NOT_A_METRIC
    ]


_GENERIC = ("profit", "margin", "cash flow")  # words for several metrics: no figure's own name


def metric_words_for(metric: str) -> str:
    """A fact store metric in a reader's words: the most specific entry that backs it, else its own name."""
    signed = bool(SIGNED.fullmatch(metric))
    for entry in METRIC_WORDS:
        if entry.backs(metric) and entry.rate == signed and entry.name not in _GENERIC:
            return entry.name
    return metric.replace("_", " ")
