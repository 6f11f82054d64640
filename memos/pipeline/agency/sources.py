"""Layer 0, by code only: the company's figures from the fact store, and the documents the desk holds about it
and its competitors (news, social posts, prediction markets), each with its date and source.

Competitors are the constituents of the company's GICS sub-industry (agents.data.industries). Social posts
come from the bundled stocknet tweets and are stored as source documents, so a turn that cites one links to
it. A document far older than the data's as-of date (``STALE_AFTER``) is marked stale, never hidden: the
bundled posts are from 2014-2015, years before the latest filing, and F2 must say so when it leans on them.
"""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Protocol

from agents.agency.board import SCORING_ROLE
from agents.agency.outputs import Source, SourceKind, SourcesOutput
from agents.data.industries import peers
from agents.evidence import EvidenceItem, FundamentalMetric
from agents.text.sentences import fit
from memos.models import Company, SourceDocument
from memos.pipeline.agency.plan import SOURCES_KIND
from memos.pipeline.company_facts import ensure_company_facts
from memos.pipeline.context import StageContext
from memos.pipeline.data_sources import constituents_file, social_source
from memos.pipeline.evidence import annual, fact_item, latest_quarter, quant
from memos.pipeline.fact_store import save_documents
from memos.pipeline.judge_families import badges

STALE_AFTER = timedelta(days=365)
YEARS_OF_HISTORY = 3
POSTS = 6  # the company's newest distinct posts
PEER_POSTS = 2  # each competitor's
NEWS = 6
PEER_NEWS = 2
MARKETS = 4
TEXT_CHARS = 500
METRICS: tuple[FundamentalMetric, ...] = (
    "revenue",
    "gross_margin",
    "operating_margin",
    "net_margin",
    "revenue_growth_yoy",
    "operating_cash_flow",
    "capex",
    "fcf",
    "cash",
    "total_liabilities",
    "rnd_expense",
    "eps_diluted",
)


def run_sources(ctx: StageContext) -> None:
    company = ctx.company
    step = ctx.step(SOURCES_KIND)
    if step.status == step.Status.DONE:
        return
    ctx.start(step)
    ensure_company_facts(ctx, step, company)
    # Seed 003: the board's family as the run recorded it when it started (memos.pipeline.judge_families).
    warning = " ".join(badges(ctx.run.verdict_families, role=SCORING_ROLE))
    output = gather(company).model_copy(update={"same_model_warning": warning})
    ctx.set_run(data_version=output.data_version)
    ctx.finish(step, output)


def gather(company: Company) -> SourcesOutput:
    filed = [fact_item(f) for f in annual(company, METRICS, YEARS_OF_HISTORY) + latest_quarter(company)]
    priced = [fact_item(f) for f in quant(company)]
    facts = filed + priced
    as_of = max((item.as_of for item in facts if item.as_of is not None), default=None)
    industry, competitors = peers(constituents_file(), company.ticker)
    posts = social_source().posts(company.ticker, limit=POSTS)
    peer_posts = [post for peer in competitors for post in social_source().posts(peer, limit=PEER_POSTS)]
    save_documents([*posts, *peer_posts])
    documents = [
        *(_source(row, "news", company.ticker, as_of) for row in _rows(company.ticker, "news", NEWS)),
        *(_source(post, "social", company.ticker, as_of) for post in posts),
        *(
            _source(row, "prediction-market", company.ticker, as_of)
            for row in _rows(company.ticker, "prediction-market", MARKETS)
        ),
        *(
            _source(row, "peer-news", peer, as_of)
            for peer in competitors
            for row in _rows(peer, "news", PEER_NEWS)
        ),
        *(_source(post, "peer-news", post.tickers[0], as_of) for post in peer_posts),
    ]
    return SourcesOutput(
        ticker=company.ticker,
        as_of=as_of,
        peers=competitors,
        facts=facts,
        documents=documents,
        gaps=_gaps(company, filed, priced, documents, industry),
        data_version=_version(facts, documents),
    )


def _rows(ticker: str, kind: str, limit: int) -> list[SourceDocument]:
    rows = SourceDocument.objects.filter(tickers__contains=[ticker], kind=kind).order_by(
        "-published", "doc_id"
    )
    return list(rows[:limit])


def _stale(published: date | None, as_of: date | None) -> bool:
    return published is not None and as_of is not None and published < as_of - STALE_AFTER


class _Dated(Protocol):
    """A stored document row or one an adapter just read: what a gathered item is made from."""

    @property
    def doc_id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def published(self) -> date | None: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...


def _source(document: _Dated, kind: SourceKind, about: str, as_of: date | None) -> Source:
    return Source(
        doc_id=document.doc_id,
        kind=kind,
        source=document.source,
        published=document.published,
        title=fit(document.title, 200),
        text=fit(document.text, TEXT_CHARS),
        about=about,
        stale=_stale(document.published, as_of),
    )


def _gaps(
    company: Company,
    filed: list[EvidenceItem],
    priced: list[EvidenceItem],
    documents: list[Source],
    industry: str,
) -> list[str]:
    kinds = {document.kind for document in documents if document.about == company.ticker}
    gaps = []
    if not filed:
        gaps.append(f"The desk holds no filed figures for {company.ticker}.")
    if not priced:
        gaps.append(f"No price history for {company.ticker}: no price-based figures.")
    for kind, words in (
        ("news", "news about"),
        ("social", "social posts about"),
        ("prediction-market", "prediction market naming"),
    ):
        if kind not in kinds:
            gaps.append(f"No {words} {company.ticker} in the desk's data.")
    if not industry:
        gaps.append(f"{company.ticker} is not in the S&P 500 list: no competitors named.")
    elif not any(document.kind == "peer-news" for document in documents):
        gaps.append("Nothing about the competitors in the desk's data.")
    stale = sum(1 for document in documents if document.stale)
    if stale:
        gaps.append(
            f"{stale} of {len(documents)} documents are more than a year older than the latest figure."
        )
    return gaps


def _version(facts: list[EvidenceItem], documents: list[Source]) -> str:
    digest = hashlib.sha256()
    for item in facts:
        digest.update(f"{item.evidence_id}|{item.value}\n".encode())
    for document in documents:
        digest.update(f"{document.doc_id}|{document.published}|{document.text}\n".encode())
    return digest.hexdigest()
