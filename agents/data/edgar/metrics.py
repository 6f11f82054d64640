"""The metrics we read from filings, each an ordered list of XBRL concepts to fall back across.

Filers name the same line differently and rename it over time (Apple tagged revenue ``SalesRevenueNet``
until FY2017 and ``RevenueFromContractWithCustomerExcludingAssessedTax`` since; NVIDIA and Tesla use
``Revenues``). For each period the first concept in the list that the filer reported for exactly that
period wins, and the fact cites the concept it came from, so a fallback is always visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

US_GAAP = "us-gaap"
IFRS = "ifrs-full"
TAXONOMIES = (US_GAAP, IFRS)

# "duration": a flow over the period (income statement, cash flow); "instant": a balance at its end.
MetricKind = Literal["duration", "instant"]
# How the unit is spelled, given the filer's reporting currency C: "C", "C/shares" or "shares".
UnitKind = Literal["currency", "per_share", "shares"]


@dataclass(frozen=True)
class Metric:
    name: str
    kind: MetricKind
    unit_kind: UnitKind
    us_gaap: tuple[str, ...]
    ifrs: tuple[str, ...] = ()

    def concepts(self, taxonomy: str) -> tuple[str, ...]:
        """Qualified concept names (``us-gaap:Revenues``) in fallback order for ``taxonomy``."""
        names = self.us_gaap if taxonomy == US_GAAP else self.ifrs if taxonomy == IFRS else ()
        return tuple(f"{taxonomy}:{name}" for name in names)

    def unit(self, currency: str) -> str:
        if self.unit_kind == "currency":
            return currency
        if self.unit_kind == "per_share":
            return f"{currency}/shares"
        return "shares"


METRICS: tuple[Metric, ...] = (
    # `Revenues` first: where a filer tags it, it is the total line; contract revenue can be a subtotal
    # that leaves out leasing or other income.
    Metric(
        "revenue",
        "duration",
        "currency",
        us_gaap=(
            "Revenues",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "SalesRevenueNet",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
        ),
        ifrs=("Revenue", "RevenueFromContractsWithCustomers"),
    ),
    Metric("gross_profit", "duration", "currency", us_gaap=("GrossProfit",), ifrs=("GrossProfit",)),
    Metric(
        "operating_income",
        "duration",
        "currency",
        us_gaap=("OperatingIncomeLoss",),
        ifrs=("ProfitLossFromOperatingActivities",),
    ),
    # Attributable to the parent first; profit including minority interests only when that is all there is.
    Metric(
        "net_income",
        "duration",
        "currency",
        us_gaap=("NetIncomeLoss", "ProfitLoss"),
        ifrs=("ProfitLossAttributableToOwnersOfParent", "ProfitLoss"),
    ),
    Metric(
        "rnd_expense",
        "duration",
        "currency",
        us_gaap=(
            "ResearchAndDevelopmentExpense",
            "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
        ),
        ifrs=("ResearchAndDevelopmentExpense",),
    ),
    Metric(
        "operating_cash_flow",
        "duration",
        "currency",
        us_gaap=(
            "NetCashProvidedByUsedInOperatingActivities",
            "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
        ),
        ifrs=("CashFlowsFromUsedInOperatingActivities",),
    ),
    # Payments are reported as positive amounts. `PaymentsToAcquireProductiveAssets` (NVIDIA since FY2022)
    # also covers intangible assets; the cited concept says which one a year used.
    Metric(
        "capex",
        "duration",
        "currency",
        us_gaap=("PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets"),
        ifrs=("PurchaseOfPropertyPlantAndEquipmentClassifiedAsInvestingActivities",),
    ),
    Metric(
        "eps_diluted",
        "duration",
        "per_share",
        us_gaap=("EarningsPerShareDiluted",),
        ifrs=("DilutedEarningsLossPerShare",),
    ),
    Metric("total_assets", "instant", "currency", us_gaap=("Assets",), ifrs=("Assets",)),
    # Never computed as assets minus equity: a filer that does not tag total liabilities has no such fact.
    Metric("total_liabilities", "instant", "currency", us_gaap=("Liabilities",), ifrs=("Liabilities",)),
    Metric(
        "stockholders_equity",
        "instant",
        "currency",
        us_gaap=(
            "StockholdersEquity",
            "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
        ),
        ifrs=("EquityAttributableToOwnersOfParent", "Equity"),
    ),
    Metric(
        "cash",
        "instant",
        "currency",
        us_gaap=("CashAndCashEquivalentsAtCarryingValue",),
        ifrs=("CashAndCashEquivalents",),
    ),
    # The balance-sheet count at the period end (us-gaap:CommonStockSharesOutstanding), not the cover
    # page's dei:EntityCommonStockSharesOutstanding, which is dated weeks after the period. IFRS filers
    # tag no period-end count of outstanding shares, so they have none.
    Metric("shares_outstanding", "instant", "shares", us_gaap=("CommonStockSharesOutstanding",)),
)

METRICS_BY_NAME = {metric.name: metric for metric in METRICS}


def metric_concepts(taxonomy: str) -> frozenset[str]:
    """Every qualified concept some metric reads in ``taxonomy``."""
    return frozenset(concept for metric in METRICS for concept in metric.concepts(taxonomy))
