"""The weekly sector screen (seed 002) as a workflow of the run engine: a watchlist grouped by sector, the
quant analyst's alpha/beta split by code, the news analyst per sector (effort where the alpha is), the
senior analyst per sector and across them, the managing director's review, and flags by code under the
epistemic honesty protocol. Its runs are ``Run.workflow == "screen"``; its versions are kind ``screen``.
"""

from __future__ import annotations

from agents.llm.roles import Role
from agents.screen.outputs import (
    ChartsOutput,
    DirectorOutput,
    NewsOutput,
    OverallOutput,
    QuantStep,
    ScreenResult,
    SynthesisOutput,
)
from memos.pipeline.judge_families import Judged
from memos.pipeline.screen import plan, profiles
from memos.pipeline.screen.breadths import SECTOR_NEWS, SECTOR_REPORTS, SENT_BACK
from memos.pipeline.screen.director import run_director
from memos.pipeline.screen.final import ending, run_final, screen_artefact
from memos.pipeline.screen.news import run_news
from memos.pipeline.screen.plan import CHARTS, DIRECTOR, FLAGS, NEWS_KIND, OVERALL, QUANT, SYNTHESIS_KIND
from memos.pipeline.screen.prepare import run_prepare
from memos.pipeline.screen.profiles import default_strategy
from memos.pipeline.screen.synthesis import run_synthesis
from memos.pipeline.screen.universe import default_symbols
from memos.pipeline.warming import warm_asked
from memos.pipeline.workflows import Stage, StepKind, Workflow

TEMPLATES = "memos/step_documents/screen"


def _quant(output: QuantStep) -> str:
    quant = output.quant
    return (
        f"{len(quant.symbols)} symbols · {len(quant.sectors)} sectors · {quant.market.regime} · "
        f"{output.seconds:.2f} s"
    )


def _charts(output: ChartsOutput) -> str:
    return f"{len(output.charts)} charts"


def _news(output: NewsOutput) -> str:
    if not output.asked_model:
        return f"nothing found: evidence none ({len(output.searches)} searches)"
    return (
        f"{len(output.documents)} documents · {len(output.drivers) or len(output.events)} drivers · "
        f"evidence {output.evidence_quality}"
    )


def _synthesis(output: SynthesisOutput) -> str:
    return f"{output.drop_type}, confidence {output.confidence} · {len(output.calls)} symbols"


def _overall(output: OverallOutput) -> str:
    return f"{len(output.themes)} themes"


def _director(output: DirectorOutput) -> str:
    line = f"quality {output.quality_score}/10 · {len(output.flag_adjustments)} flag changes asked"
    return line + (" · same family" if output.same_model_warning else "")


def _flags(output: ScreenResult) -> str:
    counts = output.flag_counts
    return (
        f"{counts['GREEN']} green · {counts['YELLOW']} yellow · {counts['RED']} red · "
        f"{output.llm_calls} calls (bound {output.call_bound}), {output.paid_requests} paid"
    )


WORKFLOW = Workflow(
    name=plan.NAME,
    choice="Screen: a watchlist by sector, flags under the honesty protocol",
    subject="watchlist",
    stages=(
        Stage(plan.PREPARE, "Quant analyst", "Code only: prices, alpha and beta, sectors", run_prepare),
        Stage(
            plan.NEWS,
            "News analyst",
            "Searches per sector, where the alpha is; reads what came back",
            run_news,
            fan_outs=(SECTOR_NEWS,),
        ),
        Stage(
            plan.SYNTHESIS,
            "Senior analyst",
            "Merges the quant and the news per sector, then across sectors",
            run_synthesis,
            fan_outs=(SECTOR_REPORTS,),
        ),
        Stage(
            plan.DIRECTOR_STAGE,
            "Managing director",
            "Sees everything: consistency, blind spots, summary; may send a sector back once",
            run_director,
            fan_outs=(SENT_BACK,),
        ),
        Stage(
            plan.FINAL,
            "Flags",
            "Code decides each flag under the honesty protocol, and stores the price charts",
            run_final,
        ),
    ),
    kinds={
        QUANT: StepKind(QUANT, QuantStep, f"{TEMPLATES}/quant.html", _quant),
        CHARTS: StepKind(CHARTS, ChartsOutput, f"{TEMPLATES}/charts.html", _charts),
        NEWS_KIND: StepKind(NEWS_KIND, NewsOutput, f"{TEMPLATES}/news.html", _news),
        SYNTHESIS_KIND: StepKind(SYNTHESIS_KIND, SynthesisOutput, f"{TEMPLATES}/synthesis.html", _synthesis),
        OVERALL: StepKind(OVERALL, OverallOutput, f"{TEMPLATES}/overall.html", _overall),
        DIRECTOR: StepKind(DIRECTOR, DirectorOutput, f"{TEMPLATES}/director.html", _director),
        FLAGS: StepKind(FLAGS, ScreenResult, f"{TEMPLATES}/flags.html", _flags),
    },
    plan=plan.plan,
    ending=ending,
    profiles=profiles.profiles,
    configure=profiles.configure,
    describe=profiles.describe,
    artefact=screen_artefact,
    budget=profiles.budget,
    # Seed 003: the managing director reviews the news and senior analysts' work.
    verdicts=(
        Judged(
            Role.MANAGING_DIRECTOR,
            (Role.NEWS_ANALYST, Role.SENIOR_ANALYST),
            "the managing director's review",
            "the news and senior analysts' sector reports",
        ),
    ),
    run_models=profiles.run_models,
    separate_judge=profiles.separate_judge,
    run_banner="memos/screen/run_banner.html",
    fakes="agents.screen.fakes",
    surface="memos.pipeline.screen.desk",
    default_watchlist=lambda: default_symbols(default_strategy()),
    warm_prompts=lambda run: warm_asked(
        run,
        [
            ("screen_news_overview", Role.NEWS_ANALYST),
            ("screen_news_sector", Role.NEWS_ANALYST),
            ("screen_senior_sector", Role.SENIOR_ANALYST),
            ("screen_senior_revise", Role.SENIOR_ANALYST),
            ("screen_senior_overall", Role.SENIOR_ANALYST),
            ("screen_director", Role.MANAGING_DIRECTOR),
        ],
    ),
)
