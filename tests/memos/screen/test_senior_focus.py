"""The senior analyst proposes flags only where a proposal can matter (issue 34: answers no longer than their
fields need): the symbols whose flag the honesty protocol leaves open, the largest own moves first, at most
the strategy's ``proposals_per_sector``. Code flags the rest and says why; a settled flag is never asked."""

from __future__ import annotations

import re
from datetime import date

import pytest

from agents.screen.config import Thresholds
from agents.screen.flags import Evidence
from agents.screen.outputs import NewsOutput, QuantStep, ScreenResult, SynthesisOutput
from agents.screen.quant import SymbolProfile
from agents.screen.verdicts import NOT_ASKED, put_to_senior, symbol_floor
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.pipeline.screen.plan import FLAGS, QUANT
from memos.pipeline.screen.synthesis import asked_line
from tests.memos.pipeline_support import fake_llm
from tests.memos.screen.test_screen_run import DEMO, _output, _screen

pytestmark = pytest.mark.django_db(transaction=True)

ASKED = re.compile(r"Propose a flag for these (\d+) only, in this order: ([A-Z., ]+?)(?:;|\.\n|\.$)", re.M)


def _steps(run: Run, kind: str, model: type[NewsOutput] | type[SynthesisOutput]) -> list[object]:
    return [
        model.model_validate(s.output) for s in AgentStep.objects.filter(run=run, kind=kind, status="done")
    ]


@pytest.mark.parametrize("limit", [1, 2])
def test_the_senior_analyst_is_asked_only_about_the_largest_open_moves(limit: int) -> None:
    run = _screen(proposals_per_sector=limit)
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        prompts = [
            entry["body"]["messages"][-1]["content"]
            for entry in server.requests
            if entry["prompt_name"] in ("screen_senior_sector", "screen_senior_revise")
        ]
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    quant = QuantStep.model_validate(_output(run, QUANT)).quant
    news = {n.sector: n for n in _steps(run, "news", NewsOutput) if isinstance(n, NewsOutput)}
    syntheses = [s for s in _steps(run, "synthesis", SynthesisOutput) if isinstance(s, SynthesisOutput)]
    assert syntheses
    thresholds = DEMO.thresholds
    result = ScreenResult.model_validate(_output(run, FLAGS))
    by_symbol = {a.symbol: a for a in result.assessments}
    saw_one_left_out = False
    for synthesis in syntheses:
        profiles = [p for p in quant.symbols if p.sector == synthesis.sector]
        floors = {p.symbol: symbol_floor(p, news.get(p.sector), thresholds) for p in profiles}
        open_ = sorted(
            (p for p in profiles if floors[p.symbol].forced is None), key=lambda p: -abs(p.alpha or 0.0)
        )
        assert synthesis.asked is not None
        # Exactly the largest open own moves, never a symbol the protocol settles.
        assert set(synthesis.asked) == {p.symbol for p in open_[:limit]}
        assert all(floors[s].forced is None for s in synthesis.asked)
        assert {call.symbol for call in synthesis.calls} <= set(synthesis.asked)
        for profile in open_[limit:]:
            saw_one_left_out = True
            assessment = by_symbol[profile.symbol]
            assert assessment.flag == "YELLOW" and assessment.proposed is None
            assert assessment.code_note == NOT_ASKED.format(n=len(synthesis.asked))
        for symbol in synthesis.asked:
            assert by_symbol[symbol].proposed is not None
            assert by_symbol[symbol].code_note != NOT_ASKED.format(n=len(synthesis.asked))
    assert saw_one_left_out, "the watchlist should hold a sector with more open moves than the limit"
    # The prompt names the symbols it asks about, and only those.
    named = [set(found.group(2).split(", ")) for p in prompts for found in ASKED.finditer(p)]
    assert named and all(len(symbols) <= limit for symbols in named)
    assert {frozenset(s) for s in named} >= {frozenset(s.asked or ()) for s in syntheses if s.asked}


def _profile(symbol: str, alpha: float | None) -> SymbolProfile:
    return SymbolProfile(
        symbol=symbol,
        name=symbol,
        sector="Energy",
        sector_rule="table",
        as_of=date(2015, 8, 21),
        figures={"alpha_1w": alpha},
        market_part=None,
        quant_signal="NEUTRAL",
        quant_note="",
        facts={},
    )


def _reading(evidence: Evidence) -> NewsOutput:
    return NewsOutput(
        sector="Energy",
        searches=[],
        documents=[],
        summary="",
        claimed=evidence,
        ceiling=evidence,
        evidence_quality=evidence,
    )


# Own moves (ratios): pure beta (settled YELLOW with no news), open, open, unexplained (settled RED with no
# news), and no alpha at all (open).
PROFILES = [_profile("A", 0.001), _profile("B", -0.012), _profile("C", 0.009), _profile("D", -0.04)]


def test_a_flag_the_protocol_settles_is_never_asked_for() -> None:
    no_news = _reading("none")
    assert put_to_senior(PROFILES, no_news, Thresholds(), 4) == ("B", "C")
    assert put_to_senior(PROFILES, no_news, Thresholds(), 1) == ("B",)
    assert put_to_senior([*PROFILES, _profile("E", None)], no_news, Thresholds(), 3) == ("B", "C", "E")
    # With weak evidence nothing is settled: the largest own moves, in the sector's order.
    assert put_to_senior(PROFILES, _reading("weak"), Thresholds(), 2) == ("B", "D")
    # An unread sector's symbols are all held at YELLOW: nothing to ask.
    assert put_to_senior(PROFILES, None, Thresholds(), 4) == ()


def test_the_prompt_line_names_the_symbols_or_says_none_is_asked() -> None:
    assert asked_line(("B", "C"), 4) == (
        "Propose a flag for these 2 only, in this order: B, C; code flags the other 2 by the protocol."
    )
    assert asked_line(("B",), 1) == "Propose a flag for these 1 only, in this order: B."
    assert 'leave "symbols" empty' in asked_line((), 3)
