"""The weekly sector screen end to end against the fake OpenAI-compatible server, through the real openai
client: the quant figures equal ``manage.py quant``'s, seed 002's call bound, the flags under the honesty
protocol, a rerun that costs nothing, and what ``manage.py screen`` prints and refuses."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from agents.screen.config import StrategyError, load_strategy
from agents.screen.flags import NO_NEWS, PURE_BETA
from agents.screen.outputs import DirectorOutput, NewsOutput, QuantStep, ScreenResult
from agents.text.storable import storable_json
from memos.models import AgentStep, ArtefactVersion, Brief, FactRecord, LLMCall, Run, SourceDocument
from memos.pipeline import context, driver
from memos.pipeline.fact_store import fact_store_version
from memos.pipeline.screen.plan import CHARTS, DIRECTOR, FINAL, FLAGS, QUANT
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist
from tests.memos.pipeline_support import analyst, fake_llm

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]
STOCKNET = ROOT / "data" / "snapshot" / "stocknet" / "price"
SPY = ROOT / "data" / "snapshot" / "prices" / "daily" / "SPY_1999-2020_pandas-ta.csv"
SHARED_PRICES = ROOT.parent / "shared" / "data" / "prices" / "daily"
DEMO = load_strategy((ROOT / "data" / "screen" / "strategy.yaml").read_text(encoding="utf-8"))
# A small stocknet watchlist of three sectors: Basic Materials fell beyond beta, Utilities held up.
SYMBOLS = ["XOM", "CVX", "BP", "DUK", "NEE", "D", "JPM", "BAC"]


def _screen(symbols: list[str] = SYMBOLS, **strategy: object) -> Run:
    data = DEMO.model_dump(mode="json") | strategy
    return ask_watchlist(
        owner=User.objects.filter(username="ana").first() or analyst(),
        symbols=symbols,
        question="Which symbols moved on their own this week?",
        workflow="screen",
        profile="weekly",
        options={"strategy": data},
        enqueue=False,
    )


def _output(run: Run, key: str) -> object:
    return AgentStep.objects.get(run=run, key=key).output


def test_a_screen_runs_within_the_call_bound_and_flags_every_symbol_by_the_protocol() -> None:
    run = _screen()
    with fake_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    result = ScreenResult.model_validate(_output(run, FLAGS))
    sectors = {a.sector for a in result.assessments}
    assert sectors == {"Basic Materials", "Utilities", "Financial"}
    # Seed 002: a news reading and a synthesis per sector, the overview, the overall view, the director;
    # and one more for the sector the (fake) managing director sent back, the bound raised by it.
    paid = LLMCall.objects.filter(run=run).exclude(outcome="cached").count()
    assert len(result.revised) == 1
    bound = 2 * len(sectors) + 3 + len(result.revised)
    assert result.llm_calls == result.paid_requests == paid <= bound == result.call_bound
    assert {a.symbol for a in result.assessments} == set(SYMBOLS)
    for a in result.assessments:
        # Alpha/beta clarity: every assessment splits the week into the market's part and its own, in numbers.
        assert "is the market's move" in a.split and "its own" in a.split
        if a.evidence_quality == "none":
            assert a.flag_reason.startswith((PURE_BETA, NO_NEWS.split(".")[0], "Significant idiosyncratic"))
        if a.evidence_quality == "weak":
            assert a.flag_reason.startswith("Limited evidence found")
        assert a.flag != "GREEN" or a.evidence_quality == "strong"
    # The tweets are the only documents for 2015: evidence is weak at best, and says so.
    news = [NewsOutput.model_validate(s.output) for s in AgentStep.objects.filter(run=run, kind="news")]
    assert all(n.evidence_quality != "strong" for n in news)
    assert any(n.claimed == "strong" and n.evidence_quality == "weak" for n in news)
    # Every cited document resolves to a stored row.
    cited = {ref for n in news for ref in n.cited}
    assert cited and SourceDocument.objects.filter(doc_id__in=cited).count() == len(cited)
    # Seed 002's success criteria, measured by code over every symbol.
    criteria = result.criteria
    assert criteria is not None
    assert criteria.grounded == criteria.symbols == len(SYMBOLS)
    assert criteria.consistent_sectors == criteria.sectors == 3
    assert criteria.split_stated == criteria.symbols
    assert criteria.low_evidence and criteria.said_no_catalyst / criteria.low_evidence >= 0.2
    assert len(criteria.sample) == min(10, len(SYMBOLS))
    version = ArtefactVersion.objects.get(run=run)
    assert version.kind == "screen"
    assert "Executive summary" in version.sections


def test_quant_figures_equal_what_manage_py_quant_prints_for_each_symbol() -> None:
    run = _screen()
    with fake_llm():
        driver.run_inline(str(run.pk))
    quant = QuantStep.model_validate(_output(run, QUANT)).quant
    for profile in quant.symbols:
        out = StringIO()
        call_command(
            "quant",
            str(STOCKNET / f"{profile.symbol}.csv"),
            benchmark=str(SPY),
            as_of="2015-08-21",
            json=True,
            stdout=out,
        )
        printed = json.loads(out.getvalue())
        for metric, value in profile.figures.items():
            if printed[metric] is None:
                assert value is None, (profile.symbol, metric)
            else:
                assert value == pytest.approx(printed[metric], rel=1e-12), (profile.symbol, metric)
        stored = FactRecord.objects.get(fact_id=profile.facts["alpha_1w"])
        # The fact store keeps ten decimal places (FactRecord.value).
        assert float(stored.value) == pytest.approx(printed["alpha_1w"], abs=1e-10)
    assert quant.market.regime == "bear"
    assert quant.market.volatility_level == pytest.approx(28.03)


def test_the_managing_director_cannot_break_a_floor() -> None:
    run = _screen()
    with fake_llm():
        driver.run_inline(str(run.pk))
    director = DirectorOutput.model_validate(_output(run, DIRECTOR))
    result = ScreenResult.model_validate(_output(run, FLAGS))
    asked = {c.symbol: c.to for c in director.flag_adjustments}
    by_symbol = {a.symbol: a for a in result.assessments}
    green = [s for s, to in asked.items() if to == "GREEN"]
    assert green, "the fake director asks for one GREEN"
    for symbol in green:
        assessment = by_symbol[symbol]
        assert assessment.flag != "GREEN"
        assert assessment.adjustment is not None and not assessment.adjustment.accepted
        assert assessment.adjustment.refusal.startswith("Refused:")


def test_an_unchanged_rerun_makes_no_calls_and_leaves_the_fact_store_as_it_was() -> None:
    first = _screen()
    with fake_llm() as server:  # one server: its address is part of each request's hash
        driver.run_inline(str(first.pk))
        paid = server.request_count
        stored = fact_store_version()
        second = _screen()
        driver.run_inline(str(second.pk))
        assert server.request_count == paid
    # The same figures and posts stored again change nothing, so evidence cached under the store's version
    # (a memo's selection) still holds after a screen.
    assert fact_store_version() == stored
    second.refresh_from_db()
    assert second.status == Run.Status.DONE
    assert LLMCall.objects.filter(run=second).exclude(outcome="cached").count() == 0
    assert _output(first, FLAGS)["assessments"] == _output(second, FLAGS)["assessments"]  # type: ignore[index]


def test_unknown_symbols_and_malformed_strategies_are_refused_with_one_line() -> None:
    with pytest.raises(ServiceError, match="No daily prices for ZZZZ"):
        _screen(["XOM", "ZZZZ"])
    with pytest.raises(ServiceError, match=r"Not a ticker symbol: A\$B"):
        _screen(["XOM", "A$B", "X" * 40])
    assert not Run.objects.exists()
    assert not Brief.objects.exists()
    with pytest.raises(StrategyError, match=r"^thresholds\.pure_beta_alpha_pct"):
        load_strategy("thresholds:\n  pure_beta_alpha_pct: -1\n")


def test_the_command_prints_one_json_object(tmp_path: Path) -> None:
    analyst("analyst")
    config = tmp_path / "strategy.yaml"
    config.write_text(
        "as_of: 2015-08-21\nuniverse:\n  source: stocknet\n  symbols: [XOM, CVX, DUK]\n", encoding="utf-8"
    )
    out, err = StringIO(), StringIO()
    with fake_llm():
        call_command("screen", config=config, inline=True, json=True, stdout=out, stderr=err)
    report = json.loads(out.getvalue())
    assert report["as_of"] == "2015-08-21"
    assert {s["symbol"] for s in report["symbols"]} == {"XOM", "CVX", "DUK"}
    assert set(report["symbols"][0]) >= {
        "symbol",
        "sector",
        "return_1w",
        "beta",
        "alpha_1w",
        "rsi14",
        "flag",
        "flag_reason",
        "evidence_quality",
    }
    assert report["llm_calls"] <= 2 * 2 + 3


def test_the_command_refuses_a_malformed_strategy_naming_the_field(tmp_path: Path) -> None:
    analyst("analyst")
    config = tmp_path / "strategy.yaml"
    config.write_text("news:\n  queries_per_sector: 9\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("screen", config=config, inline=True, stderr=err)
    assert exit_.value.code == 2
    assert "news.queries_per_sector" in err.getvalue()
    assert len(err.getvalue().strip().splitlines()) == 1
    assert not Run.objects.exists()


def test_the_sector_spdr_etfs_are_grouped_by_the_override_table() -> None:
    etfs = ["XLB", "XLC", "XLE", "XLF", "XLI", "XLK", "XLP", "XLV", "XLY"]
    run = _screen(
        etfs,
        universe={"source": "watchlist", "symbols": etfs, "prices": str(SHARED_PRICES)},
    )
    with fake_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    quant = QuantStep.model_validate(_output(run, QUANT))
    assert quant.universe.sectors["XLF"] == "Financial"
    assert set(quant.universe.rules.values()) == {"override"}


def test_the_strategy_puts_the_managing_director_on_a_model_of_its_own() -> None:
    shared = _screen(["XOM", "DUK"])
    apart = _screen(["XOM", "CVX"], models={"managing_director": "fake-judge"})
    with fake_llm():
        driver.run_inline(str(shared.pk))
        driver.run_inline(str(apart.pk))
    # Seed 003: the reviewer on the analysts' family is warned about; on a model of its own, not.
    assert QuantStep.model_validate(_output(shared, QUANT)).same_model_warning
    assert not QuantStep.model_validate(_output(apart, QUANT)).same_model_warning
    models = dict(LLMCall.objects.filter(run=apart).values_list("role", "model").distinct())
    assert models["managing_director"] == "fake-judge"
    assert models["news_analyst"] != "fake-judge"


def test_a_role_that_did_not_finish_leaves_the_screen_for_a_person_to_look_at() -> None:
    run = _screen(["XOM", "CVX"])  # one sector: its one synthesis gets the two broken answers
    with fake_llm({"screen_senior_sector": [{"broken": True}, {"broken": True}]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW, run.status_message
    assert "not finished: Senior analyst: Basic Materials" in run.status_message
    result = ScreenResult.model_validate(_output(run, FLAGS))
    assert {a.proposed for a in result.assessments} == {None}  # flagged by the protocol alone


def test_the_charts_are_drawn_during_the_directors_call_and_drawn_by_the_last_stage_when_not_handed_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The price charts read nothing of the review: the director's stage draws them while its call is in
    flight and hands them on; the last stage stores them, or draws them itself when it was not handed any.
    Either way the frozen version carries every symbol's chart as stored."""

    def refused(*_: object) -> None:
        raise AssertionError("drawn on the wrong side")

    def frozen_charts(run: Run) -> object:
        return ArtefactVersion.objects.get(run=run).content["charts"]

    # Dumped and checked once, while the director's call is in flight: the step is written from that text.
    dumps: list[str] = []

    def counted(value: object) -> tuple[object, str]:
        if isinstance(value, dict) and "charts" in value:
            dumps.append("charts")
        return storable_json(value)

    monkeypatch.setattr(context, "storable_json", counted)
    monkeypatch.setattr("memos.pipeline.screen.final.charts_step", refused)
    handed = _screen()
    with fake_llm():
        driver.run_inline(str(handed.pk))
    handed.refresh_from_db()
    assert handed.status == Run.Status.DONE, handed.status_message
    step = AgentStep.objects.get(run=handed, key=CHARTS)
    assert step.stage == FINAL and step.output is not None and set(step.output["charts"]) == set(SYMBOLS)
    assert frozen_charts(handed) == step.output
    assert dumps == ["charts"]

    monkeypatch.undo()
    monkeypatch.setattr("memos.pipeline.screen.director.charts_step", refused)  # logged; the last stage draws
    drawn = _screen()
    with fake_llm():
        driver.run_inline(str(drawn.pk))
    drawn.refresh_from_db()
    assert drawn.status == Run.Status.DONE, drawn.status_message
    assert frozen_charts(drawn) == step.output == AgentStep.objects.get(run=drawn, key=CHARTS).output
