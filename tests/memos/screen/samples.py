"""A small screen's frozen content, computed by the real quant code from the bundled prices (XOM and DUK as
of 2015-08-21), with the flags code decides when no news was found: what a screen version holds, no run."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from agents.data.prices import PriceFolders
from agents.screen.chart import price_chart
from agents.screen.config import ResolvedUniverse, Thresholds
from agents.screen.flags import decide, floor
from agents.screen.outputs import Assessment, ChartsOutput, QuantStep, ScreenResult, SectorView
from agents.screen.quant import decomposition, screen_quant
from agents.screen.sectors import sector_of

ROOT = Path(__file__).resolve().parents[3] / "data" / "snapshot"
AS_OF = date(2015, 8, 21)


def sample_screen_content() -> dict[str, Any]:
    prices = PriceFolders([ROOT / "prices" / "daily", ROOT / "stocknet" / "price"])
    table = {"XOM": "Basic Materials", "DUK": "Utilities"}
    names = {"XOM": "Exxon Mobil Corporation", "DUK": "Duke Energy Corporation"}
    benchmark = prices.series("SPY")
    items = [(sector_of(s, table=table), names[s], prices.series(s)) for s in table]
    quant = screen_quant(
        items, benchmark=benchmark, volatility=prices.series("VIX"), as_of=AS_OF, thresholds=Thresholds()
    )
    universe = ResolvedUniverse(
        symbols=list(table), names=names, sectors=table, rules=dict.fromkeys(table, "table")
    )
    assessments = []
    for p in quant.symbols:
        rule = floor(p.alpha, "none", transient=False, thresholds=Thresholds())
        decision = decide(None, rule)
        assessments.append(
            Assessment(
                symbol=p.symbol,
                name=p.name,
                sector=p.sector,
                flag=decision.flag,
                proposed=None,
                flag_reason=rule.rule,
                split=decomposition(
                    p.symbol, p.figures["return_1w"], p.figures["alpha_1w"], p.figures["beta"], "SPY"
                ),
                evidence_quality="none",
                code_note=decision.note,
            )
        )
    result = ScreenResult(
        as_of=quant.market.as_of,
        assessments=assessments,
        sectors=[
            SectorView(
                sector=g.sector,
                interpretation=g.interpretation,
                news_summary="No sector-specific news found.",
                evidence_quality="none",
                synthesis="",
                drivers=[],
                symbols=g.symbols,
            )
            for g in quant.sectors
        ],
        data_note="",
        flag_counts={f: sum(1 for a in assessments if a.flag == f) for f in ("GREEN", "YELLOW", "RED")},
        llm_calls=0,
        call_bound=7,
    )
    charts = ChartsOutput(charts={s: price_chart(prices.series(s), benchmark, AS_OF) for s in table})
    return {
        "quant": QuantStep(universe=universe, quant=quant, seconds=0.01).model_dump(mode="json"),
        "result": result.model_dump(mode="json"),
        "news": {},
        "overview": None,
        "overall": None,
        "director": None,
        "charts": charts.model_dump(mode="json"),
    }
