"""``manage.py screen [--config STRATEGY.yaml] [--as-of DATE] [--inline | --wait] [--out DIR] [--json]``.

Starts a weekly sector screen (seed 002) on the strategy's watchlist: the bundled demo strategy
(``SCREEN_STRATEGY``: the stocknet universe, the week ending 2015-08-21) when no ``--config`` is given.
``--json`` prints one object: ``status`` (the run's: done, or needs_review when a part did not finish),
``unfinished`` (each part that did not finish: ``step`` and ``reason``), ``as_of``, ``market``, ``sectors``,
``symbols`` (each with ``symbol``, ``sector``, ``return_1w``, ``beta``, ``alpha_1w``, ``rsi14``, ``flag``,
``flag_reason``, ``evidence_quality``: none, weak, strong, or unread where its sector's reading did not
finish) and ``llm_calls``. ``--out DIR`` writes ``screen.json`` (the same object) and
``flags.md``. A malformed strategy names the field and exits 2; exit 1 when the run failed, 3 when it needs
review.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from datetime import date
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from agents.screen.config import Strategy, StrategyError, load_strategy
from agents.screen.criteria import criteria_lines
from agents.screen.outputs import QuantStep, ScreenResult
from memos.management.run_command import RunCommand
from memos.models import AgentStep, Run
from memos.pipeline.screen.plan import FINAL, FLAGS, PREPARE, QUANT
from memos.pipeline.screen.plan import NAME as SCREEN
from memos.pipeline.screen.profiles import WEEKLY, default_strategy
from memos.pipeline.screen.universe import default_symbols
from memos.pipeline.steps import unfinished_parts
from memos.pipeline.workflows import ConfigurationError
from memos.services.runs import ask_watchlist


class ScreenCommand(RunCommand):
    help = "Start a weekly sector screen: a watchlist by sector, alpha and beta by code, flags by protocol."
    workflow = SCREEN
    default_profile = WEEKLY
    writes_out = "screen.json and flags.md"
    question_option = "question"
    default_question = "Which symbols on the watchlist moved on their own this week, and why?"

    def add_subject(self, parser: ArgumentParser) -> None:
        parser.add_argument("--config", type=Path, help="the strategy (YAML); default: the desk's demo")
        parser.add_argument("--as-of", dest="as_of", help="YYYY-MM-DD: the week ending on this session")
        parser.add_argument("--json", action="store_true", help="print the screen as one JSON object")

    def needs_the_end(self, options: dict[str, Any]) -> bool:
        return bool(options.get("json")) or super().needs_the_end(options)

    def strategy(self, options: dict[str, Any]) -> Strategy:
        path: Path | None = options["config"]
        try:
            strategy = load_strategy(path.read_text(encoding="utf-8")) if path else default_strategy()
        except OSError as exc:
            self.refuse(f"cannot read {path}: {exc.strerror or exc}")
        except (StrategyError, ConfigurationError) as exc:
            self.refuse(f"{path or 'the demo strategy'}: {exc}")
        if options["as_of"]:
            try:
                as_of = date.fromisoformat(options["as_of"])
            except ValueError:
                self.refuse(f"--as-of must be a date like 2015-08-21, got {options['as_of']!r}")
            strategy = strategy.model_copy(update={"as_of": as_of})
        return strategy

    def start(self, user: User, options: dict[str, Any]) -> Run:
        strategy = self.strategy(options)
        return ask_watchlist(
            owner=user,
            symbols=default_symbols(strategy),
            question=options[self.question_option],
            audience=options["audience"],
            notes=options["notes"],
            workflow=self.workflow,
            profile=options["profile"],
            options={"strategy": strategy.model_dump(mode="json")},
            enqueue=not options["inline"],
        )

    def finish(self, run: Run, seconds: float, options: dict[str, Any]) -> None:
        report = screen_json(run)
        if report is None:
            self.stderr.write(f"screen: run {run.status} without flags: {run.status_message}")
            raise SystemExit(1)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(f"screen done in {seconds:.1f} s: {run.status_message}")
            self.stdout.write(flags_markdown(report))
        out: Path | None = options["out"]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "screen.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            (out / "flags.md").write_text(flags_markdown(report) + "\n", encoding="utf-8")
            self.chatter.write(f"wrote screen.json and flags.md in {out}")


def _output(run: Run, stage: str, key: str) -> Any:
    step = AgentStep.objects.filter(run=run, stage=stage, key=key, status=AgentStep.Status.DONE).first()
    return step.output if step is not None else None


def screen_json(run: Run) -> dict[str, Any] | None:
    """The finished screen as ``--json`` prints it, read from its steps; None without flags."""
    raw_result, raw_quant = _output(run, FINAL, FLAGS), _output(run, PREPARE, QUANT)
    if raw_result is None or raw_quant is None:
        return None
    result, quant = ScreenResult.model_validate(raw_result), QuantStep.model_validate(raw_quant).quant
    market = quant.market
    return {
        "status": run.status,
        "unfinished": [{"step": part.step, "reason": part.reason} for part in unfinished_parts(run.pk)],
        "as_of": result.as_of.isoformat(),
        "market": {
            "benchmark": market.benchmark,
            "return_1w": market.benchmark_return_1w,
            "sma50_distance_pct": market.sma50_distance_pct,
            "sma200_distance_pct": market.sma200_distance_pct,
            "volatility_index": market.volatility_index,
            "volatility_level": market.volatility_level,
            "regime": market.regime,
            "regime_signal": market.regime_signal,
        },
        "sectors": [
            {
                "sector": group.sector,
                "symbols": group.symbols,
                "avg_return_1w": group.avg_return_1w,
                "avg_alpha_1w": group.avg_alpha_1w,
                "interpretation": group.interpretation,
                "evidence_quality": next(
                    (v.evidence_quality for v in result.sectors if v.sector == group.sector), "none"
                ),
            }
            for group in quant.sectors
        ],
        "symbols": [
            {
                "symbol": a.symbol,
                "sector": a.sector,
                "return_1w": profile.figures.get("return_1w"),
                "beta": profile.figures.get("beta"),
                "alpha_1w": profile.figures.get("alpha_1w"),
                "rsi14": profile.figures.get("rsi14"),
                "flag": a.flag,
                "flag_reason": a.flag_reason,
                "evidence_quality": a.evidence_quality,
            }
            for a in result.assessments
            if (profile := quant.symbol(a.symbol)) is not None
        ],
        "llm_calls": result.llm_calls,
        "llm_call_bound": result.call_bound,
        "llm_requests_paid": result.paid_requests,
        "criteria": result.criteria.model_dump(mode="json") if result.criteria else None,
        "criteria_lines": criteria_lines(result.criteria) if result.criteria else [],
    }


def flags_markdown(report: dict[str, Any]) -> str:
    lines = [f"# Sector screen, week ending {report['as_of']}", ""]
    if report["unfinished"]:
        lines += ["**Partial: these parts did not finish.**", ""]
        lines += [f"- {part['step']}: {part['reason']}" for part in report["unfinished"]]
        lines.append("")
    lines += [
        f"Regime: {report['market']['regime_signal']}",
        "",
    ]
    for sector in report["sectors"]:
        lines += [
            f"## {sector['sector']} (evidence {sector['evidence_quality']})",
            "",
            sector["interpretation"],
            "",
        ]
        for symbol in (s for s in report["symbols"] if s["sector"] == sector["sector"]):
            lines.append(f"- **{symbol['symbol']}** {symbol['flag']}: {symbol['flag_reason']}")
        lines.append("")
    lines.append(
        f"{report['llm_calls']} LLM calls (bound {report['llm_call_bound']}), "
        f"{report['llm_requests_paid']} requests paid (re-asks included)"
    )
    if report["criteria_lines"]:
        lines += ["", "## Seed 002's success criteria, measured by code", "", *report["criteria_lines"]]
        lines += ["", "Ten assessments traced:", ""]
        for item in report["criteria"]["sample"]:
            figures = ", ".join(item["figures"].values())
            status = "grounded" if item["grounded"] else "NOT grounded: " + "; ".join(item["problems"])
            lines.append(
                f"- {item['symbol']} {item['flag']}: {item['split']} Figures: {figures}. "
                f"Sources: {', '.join(item['sources']) or 'none'}. {status}."
            )
    return "\n".join(lines)
