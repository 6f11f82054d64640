"""The news analyst (seed 002, option A: after the quant, knowing where the alpha is): the market overview and
one reading per sector, in parallel. Code runs the searches the plan names (agents.screen.search), the model
reads what came back; a sector whose searches found nothing is not asked (the protocol: no evidence, no
narrative). Code checks every citation and symbol, withholds typed figures, and caps the evidence quality
the model claims at what its cited documents support (agents.screen.flags.evidence_ceiling)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from agents.data.types import SourceDocument
from agents.llm.gateway import LLMGateway
from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.screen.config import ScreenConfig
from agents.screen.flags import LIMITED, NO_NEWS, Evidence, capped, evidence_ceiling
from agents.screen.narrowing import overview_schema, sector_news_schema
from agents.screen.outputs import Document, DriverOut, EventOut, NewsOutput, QuantStep, Searched
from agents.screen.search import Query, overview_queries, sector_queries
from agents.text.promotion import Verdict
from agents.text.sentences import trim_cut
from agents.text.shown import shown
from memos.pipeline.context import StageContext
from memos.pipeline.data_sources import live_search
from memos.pipeline.errors import StageFailed
from memos.pipeline.gateway import gateway
from memos.pipeline.inputs import language
from memos.pipeline.prompts import template
from memos.pipeline.screen.breadths import SECTOR_NEWS
from memos.pipeline.screen.handoffs import (
    NEWS_FIGURES,
    document_block,
    document_of,
    market_block,
    market_ids,
    sector_block,
    sector_ids,
)
from memos.pipeline.screen.plan import NEWS, OVERVIEW, PREPARE, QUANT, news_key
from memos.pipeline.screen.searcher import DeskSearcher

NO_MARKET_NEWS = "No market-wide news found for the week. Unable to identify a market-wide catalyst."


def quant_of(ctx: StageContext) -> QuantStep:
    step = ctx.output(PREPARE, QUANT, QuantStep)
    if step is None:
        raise StageFailed("the quant analyst's hand-off is missing")
    return step


def run_news(ctx: StageContext) -> None:
    screen = ScreenConfig.model_validate(ctx.config)
    quant = quant_of(ctx)
    gw = gateway(screen.strategy.models)
    reading = Reading(gw, ctx, screen, quant, DeskSearcher(live_search()))
    work: dict[str, Callable[[], NewsOutput]] = {OVERVIEW: reading.overview}
    for sector in screen.sector_names:
        work[news_key(sector)] = partial(reading.sector, sector)
    ctx.fan_out(work, NewsOutput, limit=gw.settings.max_concurrency, breadth=SECTOR_NEWS)


@dataclass(frozen=True)
class Found:
    searched: list[Searched]
    documents: list[Document]
    promotional: dict[str, Verdict]  # doc id -> why code left it out as promotion or spam


def search(searcher: DeskSearcher, queries: list[Query]) -> Found:
    searched: list[Searched] = []
    found: dict[str, SourceDocument] = {}
    spam: dict[str, Verdict] = {}
    for query in queries:
        answer = searcher.answer(query)
        searched.append(
            Searched(query=query, found=[doc.doc_id for doc in answer.documents], failed=answer.failed)
        )
        for doc in answer.documents:
            found.setdefault(doc.doc_id, doc)
        for doc, verdict in answer.promotional:
            spam.setdefault(doc.doc_id, verdict)
    return Found(searched, [document_of(doc) for doc in found.values()], spam)


def promotion_notes(spam: dict[str, Verdict]) -> list[str]:
    """Code's note on the promotion and spam the searches matched and left out, counted by what gave each
    away, so a reader of the reading knows what it was not shown and why."""
    if not spam:
        return []
    counted = Counter(name for verdict in spam.values() for name in verdict.features)
    why = ", ".join(f"{name} {count}" for name, count in counted.most_common())
    return [
        f"code left out {len(spam)} promotional or spam post{'s' if len(spam) != 1 else ''} the searches "
        f"matched, never quoted as evidence ({why})"
    ]


def search_notes(searched: list[Searched]) -> list[str]:
    """Code's notes on searches the API did not answer: each reason once, first among the reading's notes,
    so the sector's evidence says what it was not given."""
    failures = list(dict.fromkeys(search.failed for search in searched if search.failed))
    return [f"{failure}; this reading rests on the desk's own documents alone" for failure in failures]


@dataclass(frozen=True)
class Reading:
    """What every reading of one run's news stage shares."""

    gw: LLMGateway
    ctx: StageContext
    screen: ScreenConfig
    step: QuantStep
    searcher: DeskSearcher

    def overview(self) -> NewsOutput:
        gw, ctx, screen, quant = self.gw, self.ctx, self.screen, self.step.quant
        queries = overview_queries(quant.market.as_of, screen.strategy.news, screen.universe.symbols)
        found = search(self.searcher, queries)
        searched, documents = found.searched, found.documents
        if not documents:
            return _silent("", searched, NO_MARKET_NEWS, found.promotional)
        facts = tuple(market_ids(quant))
        ids = tuple(doc.doc_id for doc in documents)
        ctx.check()
        prompt = template("screen_news_overview", ctx.run).render(
            {"as_of": str(quant.market.as_of), "market": market_block(quant)},
            {"documents": document_block(documents)},
            nonce=ctx.run.nonce,
        )
        context = CallContext(run_id=ctx.run_id, stage=NEWS, role=Role.NEWS_ANALYST)
        answer, _ = trim_cut(gw.complete(prompt, overview_schema(ids, facts), context=context))
        known = frozenset(facts)
        said_in = language(ctx)
        dropped = promotion_notes(found.promotional)
        events = []
        for index, event in enumerate(answer.key_events, start=1):
            text = shown(event.event, known, language=said_in)
            unknown = [ref for ref in event.citations if ref not in ids]
            if unknown:
                dropped.append(
                    f"event {index} cited documents the search did not find ({', '.join(unknown)})"
                )
            elif text.withheld or text.empty:
                dropped.append(f"event {index}: {text.note or 'nothing left to show'}")
            else:
                events.append(EventOut(event=text.text, citations=list(event.citations)))
        cited = list(dict.fromkeys(ref for event in events for ref in event.citations))
        return _graded(
            sector="",
            searched=searched,
            documents=documents,
            summary=shown(answer.summary, known, language=said_in).text,
            claimed=answer.evidence_quality,
            cited=cited,
            events=events,
            dropped=dropped,
            nothing=NO_MARKET_NEWS,
        )

    def sector(self, sector: str) -> NewsOutput:
        gw, ctx, screen, quant = self.gw, self.ctx, self.screen, self.step.quant
        group = quant.sector(sector)
        if group is None:
            return _silent(sector, [], "No symbol of this sector has prices up to the as-of session.")
        profiles = [p for p in (quant.symbol(s) for s in group.symbols) if p is not None]
        queries = sector_queries(
            group,
            profiles,
            as_of=quant.market.as_of,
            effort=screen.strategy.news,
            thresholds=screen.strategy.thresholds,
        )
        found = search(self.searcher, queries)
        searched, documents = found.searched, found.documents
        if not documents:
            return _silent(sector, searched, NO_NEWS, found.promotional)
        facts = tuple(sector_ids(profiles, NEWS_FIGURES))
        ids = tuple(doc.doc_id for doc in documents)
        symbols = tuple(group.symbols)
        ctx.check()
        prompt = template("screen_news_sector", ctx.run).render(
            {
                "sector": sector,
                "as_of": str(quant.market.as_of),
                "quant": sector_block(quant, group, profiles, NEWS_FIGURES),
            },
            {"documents": document_block(documents)},
            nonce=ctx.run.nonce,
        )
        context = CallContext(run_id=ctx.run_id, stage=NEWS, role=Role.NEWS_ANALYST)
        answer, _ = trim_cut(gw.complete(prompt, sector_news_schema(ids, symbols, facts), context=context))
        known = frozenset(facts)
        said_in = language(ctx)
        dropped = promotion_notes(found.promotional)
        drivers = []
        for index, driver in enumerate(answer.key_drivers, start=1):
            unknown = [ref for ref in driver.citations if ref not in ids]
            strangers = [s for s in driver.affected_symbols if s not in symbols]
            name, evidence = (
                shown(driver.driver, known, language=said_in),
                shown(driver.evidence, known, language=said_in),
            )
            if unknown:
                dropped.append(
                    f"driver {index} cited documents the search did not find ({', '.join(unknown)})"
                )
            elif not driver.citations:
                dropped.append(f"driver {index} cited no document")
            elif name.withheld or name.empty or evidence.withheld or evidence.empty:
                dropped.append(f"driver {index}: {name.note or evidence.note or 'nothing left to show'}")
            else:
                if strangers:
                    dropped.append(f"driver {index}: {', '.join(strangers)} are not in {sector}; left out")
                drivers.append(
                    DriverOut(
                        driver=name.text,
                        type=driver.type,
                        evidence=evidence.text,
                        citations=list(driver.citations),
                        affected_symbols=[s for s in driver.affected_symbols if s in symbols],
                    )
                )
        cited = list(dict.fromkeys(ref for driver in drivers for ref in driver.citations))
        return _graded(
            sector=sector,
            searched=searched,
            documents=documents,
            summary=shown(answer.news_summary, known, language=said_in).text,
            claimed=answer.evidence_quality,
            cited=cited,
            drivers=drivers,
            dropped=dropped,
            nothing=NO_NEWS,
        )


def _graded(
    *,
    sector: str,
    searched: list[Searched],
    documents: list[Document],
    summary: str,
    claimed: Evidence,
    cited: list[str],
    dropped: list[str],
    nothing: str,
    drivers: list[DriverOut] | None = None,
    events: list[EventOut] | None = None,
) -> NewsOutput:
    """The reading with its evidence quality capped by code, and the protocol's words where it applies: no
    evidence, no narrative; weak evidence begins "Limited evidence found" and names what exists."""
    social = {d.doc_id for d in documents if d.kind == "social"}
    ceiling = evidence_ceiling(cited, social)
    evidence = capped(claimed, ceiling)
    if evidence == "none":
        summary, drivers, events = nothing, [], []
    elif evidence == "weak" and not summary.startswith("Limited evidence found"):
        titles = {d.doc_id: d.title for d in documents}
        named = "; ".join(f'"{titles[ref][:80]}"' for ref in cited[:3])
        summary = f"{LIMITED.format(cited=named)} {summary}".strip()
    if evidence != claimed:
        dropped.append(f"the model said its evidence was {claimed}; its cited documents support {ceiling}")
    dropped = [*search_notes(searched), *dropped]
    return NewsOutput(
        sector=sector,
        searches=searched,
        documents=documents,
        summary=summary or nothing,
        drivers=drivers or [],
        events=events or [],
        claimed=claimed,
        ceiling=ceiling,
        evidence_quality=evidence,
        cited=cited,
        dropped=dropped,
    )


def _silent(
    sector: str, searched: list[Searched], sentence: str, spam: dict[str, Verdict] | None = None
) -> NewsOutput:
    return NewsOutput(
        sector=sector,
        searches=searched,
        documents=[],
        summary=sentence,
        claimed="none",
        ceiling="none",
        evidence_quality="none",
        dropped=[*search_notes(searched), *promotion_notes(spam or {})],
        asked_model=False,
    )
