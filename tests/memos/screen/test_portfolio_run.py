"""A screen's portfolio, lists and market paragraph are code's, end to end through the fake server (issue 32,
4): the managing director is handed the portfolio as figures with ids and may cite them; the dashboard and
the report print code's paragraphs, code's lists with the flags, a model list code's ranking does not bear
out withheld and said so, every text labelled with its writer, and the yield curve declared not held. A
sector the managing director finds inconsistent goes back to the senior analyst once, the bound raised by
that call and said; a rerun pays for none of it again."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from agents.screen.outputs import DirectorOutput, ScreenResult, SynthesisOutput
from memos.models import AgentStep, ArtefactVersion, LLMCall, Run
from memos.pipeline import driver
from tests.memos.pipeline_support import fake_llm
from tests.memos.screen.test_screen_run import _screen

pytestmark = pytest.mark.django_db(transaction=True)

TWO_SECTORS = ["XOM", "CVX", "DUK", "NEE"]
THREE_SECTORS = ["XOM", "CVX", "BP", "DUK", "NEE", "D", "JPM", "BAC"]
DAY = "2015-08-21"


def _director(**fields: Any) -> dict[str, Any]:
    answer = {
        "quality_score": 6,
        "quality_rationale": "The flags follow the evidence.",
        "flag_adjustments": [],
        "strongest_candidates": ["XOM", "CVX"],
        "weakest_candidates": [],
        "blind_spots": ["No view on rates."],
        "executive_summary": (
            "The week was a broad sell-off, with the market's beta being ouch. The market's alpha was ouch. "
            "Strongest candidates: XOM, CVX. Utilities held up better than energy."
        ),
        "portfolio_note": f"Energy holds [[watchlist:largest_sector_share:{DAY}]] of the candidates.",
        "inconsistent_sectors": [],
    }
    return answer | fields


def _page(run: Run) -> str:
    version = ArtefactVersion.objects.get(run=run)
    client = Client()
    client.force_login(run.brief.owner)
    return client.get(f"/versions/{version.pk}/").content.decode()


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


def test_the_director_reads_the_portfolio_by_id_and_the_page_prints_code_s_figures_and_lists() -> None:
    run = _screen(TWO_SECTORS)
    with fake_llm({"screen_director": [_director()]}) as server:
        driver.run_inline(str(run.pk))
        asked = [e for e in server.requests if e["prompt_name"] == "screen_director"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    prompt = " ".join(m["content"] for m in asked[0]["body"]["messages"])
    for ref in ("watchlist:hhi", "watchlist:candidates", "watchlist:review_share_red"):
        assert f"[{ref}:{DAY}]" in prompt
    assert "Not held: yield curve" in prompt
    director = DirectorOutput.model_validate(AgentStep.objects.get(run=run, key="director").output)
    result = ScreenResult.model_validate(AgentStep.objects.get(run=run, key="flags").output)
    assert result.portfolio is not None and result.portfolio.candidates == 4
    assert {c.sector: c.candidates for c in result.portfolio.sectors} == {
        "Basic Materials": 2,
        "Utilities": 2,
    }
    hhi = result.portfolio.figure("hhi")
    assert hhi is not None and hhi.value == pytest.approx(0.5)
    # The director's summary lost its fillers and its list; what code cannot say stayed.
    assert director.executive_summary == "Utilities held up better than energy."
    assert director.strongest_check is not None and not director.strongest_check.kept
    page = _page(run)
    text = _text(page)
    # Code's paragraphs, their figures printed by code, labelled as code's.
    assert "code SPY returned" in text and "4 candidates in 2 sectors" in text
    assert "sector concentration, HHI, 0.500" in text
    assert "managing director Energy holds 50.0% of the candidates." in text
    assert "managing director Utilities held up better than energy." in text
    assert "ouch" not in text
    assert "it put a word that is no figure where a figure belongs" in text
    # Code's strongest by the week's own move, with flags; the director's list withheld, and why.
    strongest = text[text.index("Strongest and weakest") : text.index("The market")]
    ranked = re.findall(r"([A-Z]+) [+-]\d+\.\d\d% (GREEN|YELLOW|RED)", strongest)
    flags = {a.symbol: a.flag for a in result.assessments}
    assert [s for s, _ in ranked] == ["DUK", "NEE", "XOM", "CVX"] or {s for s, _ in ranked[:2]} == {
        "DUK",
        "NEE",
    }
    assert all(flags[s] == f for s, f in ranked)
    assert "The managing director named XOM, CVX as the strongest; code withheld that list" in text
    assert "Not held: yield curve" in text
    for role in ("news analyst", "senior analyst", "managing director", "code"):
        assert f'class="by by-{role.replace(" ", "-")}"' in _page(run)
    # The frozen version's text says the same, printed by code.
    section = ArtefactVersion.objects.get(run=run).sections["Executive summary"]
    assert section.startswith("SPY returned -5.60% in the week ending 2015-08-21")
    assert "4 candidates in 2 sectors" in section and "[[" not in section
    # The director's step page shows what it was given, printed by code, and what code withheld.
    step = AgentStep.objects.get(run=run, key="director")
    client = Client()
    client.force_login(run.brief.owner)
    doc = _text(client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode())
    assert f"watchlist:hhi:{DAY} 0.500" in doc and f"watchlist:review_share_red:{DAY}" in doc
    assert "code withheld that list" in doc
    # Two sectors: the fake director sends none back; the slots are skipped and the bound is seed 002's.
    assert result.revised == [] and result.call_bound == 2 * 2 + 3
    skipped = AgentStep.objects.filter(run=run, key__startswith="revise-", status="skipped").count()
    assert skipped == 2
    assert not LLMCall.objects.filter(run=run, prompt_name="screen_senior_revise").exists()


def test_a_sector_sent_back_is_rewritten_once_and_the_bound_rises_by_that_call() -> None:
    run = _screen(THREE_SECTORS)
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        revise = [e for e in server.requests if e["prompt_name"] == "screen_senior_revise"]
        run.refresh_from_db()
        assert run.status == Run.Status.DONE, run.status_message
        director = DirectorOutput.model_validate(AgentStep.objects.get(run=run, key="director").output)
        result = ScreenResult.model_validate(AgentStep.objects.get(run=run, key="flags").output)
        assert [r.sector for r in director.revisits] == result.revised == ["Basic Materials"]
        assert len(revise) == 1
        said = " ".join(m["content"] for m in revise[0]["body"]["messages"])
        assert "The managing director's reason for sending it back" in said
        assert "Its flags read more certain than its evidence allows." in said
        assert result.call_bound == 2 * 3 + 3 + 1
        assert result.llm_calls == LLMCall.objects.filter(run=run).count() <= result.call_bound
        rewritten = next(s for s in result.sectors if s.sector == "Basic Materials")
        assert rewritten.synthesis.startswith("Revised after the managing director's review")
        text = _text(_page(run))
        assert (
            f"seed 002's bound 9 + 1 for the sector the managing director sent back = {result.call_bound}"
            in text
        )
        assert "sent Basic Materials back to the senior analyst" in text

        # The same screen again: every call, the revision included, is answered by the ledger.
        paid = server.request_count
        again = _screen(THREE_SECTORS)
        driver.run_inline(str(again.pk))
        assert server.request_count == paid
    redone = ScreenResult.model_validate(AgentStep.objects.get(run=again, key="flags").output)
    assert redone.revised == result.revised and redone.assessments == result.assessments
    revision = AgentStep.objects.get(run=again, key="revise-1")
    assert SynthesisOutput.model_validate(revision.output).sector == "Basic Materials"
    assert LLMCall.objects.get(run=again, prompt_name="screen_senior_revise").outcome == "cached"


def test_a_version_frozen_before_code_wrote_the_lists_shows_code_s_lists_and_withholds_the_fillers() -> None:
    """A version frozen before this (its director's review without code's lists or portfolio), as the
    desk's schedule froze the demo week: the dashboard computes them from the version's own figures."""
    from memos.pipeline.screen.desk.dashboard import build
    from tests.memos.screen.samples import sample_screen_content

    content = sample_screen_content()
    content["director"] = {
        "quality_score": 5,
        "quality_rationale": "Thin evidence.",
        "flag_adjustments": [],
        "strongest_candidates": ["XOM"],
        "weakest_candidates": ["DUK"],
        "blind_spots": [],
        "executive_summary": (
            "The market's beta being ouch. Strongest candidates: XOM. Weakest: DUK. Energy fell hardest."
        ),
        "portfolio_note": "Two sectors.",
    }
    dash = build(content)
    assert "".join(p.text for p in dash.executive_summary) == "Energy fell hardest."
    assert len(dash.summary_notes) == 3
    strongest, weakest = dash.lists
    assert [r.symbol for r in strongest.ranked] == ["DUK"] and [r.symbol for r in weakest.ranked] == ["XOM"]
    assert strongest.check is not None and not strongest.check.kept and not strongest.named_kept
    assert dash.portfolio is not None and dash.portfolio.candidates == 2
    assert "".join(p.text for p in dash.portfolio_text).startswith("2 candidates in 2 sectors")
    assert [i.name for i in dash.inputs if not i.held] == ["documents the searches found", "yield curve"]
