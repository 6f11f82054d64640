"""Shared set-up for pipeline tests: real snapshot data in the database and the fake LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib.auth.models import User
from django.test import override_settings

from agents.data.edgar import SnapshotEdgarSource, load_company_facts
from agents.data.markets import SnapshotMarketSource, market_document
from agents.data.news import SnapshotNewsSource
from agents.data.prices import SnapshotPriceSource
from agents.data.types import Citation
from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from agents.memo.evidence import EvidenceItem
from agents.memo.outputs import EvidenceOutput
from agents.memo.roster import MemoConfig
from agents.quant import compute_profile, quant_facts
from memos.models import AgentStep, Company, Run
from memos.pipeline.memo.evidence import select_evidence
from memos.pipeline.memo.rehearsal import script_for_run
from memos.services.facts import save_company_facts, save_documents, save_facts
from tests.agents.data import SNAPSHOT


def load_desk_data(ticker: str = "AAPL") -> Company:
    """The ticker's companyfacts, its quant profile against SPY, and the snapshot's news and markets."""
    save_company_facts(load_company_facts(SnapshotEdgarSource(SNAPSHOT), ticker))
    company = Company.objects.get(ticker=ticker)
    prices = SnapshotPriceSource(SNAPSHOT)
    profile = compute_profile(prices.series(ticker), benchmark=prices.series("SPY"))
    citation = Citation(
        source="prices", url=f"https://finance.yahoo.com/quote/{ticker}/history", label="test"
    )
    save_facts(company=company, facts=quant_facts(profile, ticker=ticker, citation=citation))
    save_documents(SnapshotNewsSource(SNAPSHOT).all_documents())
    save_documents(market_document(m) for m in SnapshotMarketSource(SNAPSHOT).markets())
    return company


def fake_settings(server: FakeLLMServer, *, concurrency: int = 3) -> LLMSettings:
    synthesizer = Endpoint(base_url=server.url, api_key="test-key", model="fake-synthesizer")
    return LLMSettings(
        default=synthesizer,
        roles={Role.EVALUATOR: Endpoint(base_url=server.url, api_key="test-key", model="fake-evaluator")},
        max_retries=1,
        max_concurrency=concurrency,
        loopback_only=True,
        timeout_s=20,
    )


@contextmanager
def fake_llm(script: dict[str, list[Any]] | None = None, *, latency_ms: float = 0) -> Iterator[FakeLLMServer]:
    with (
        FakeLLMServer(latency_ms=latency_ms, script=script or {}) as server,
        override_settings(LLM_SETTINGS=fake_settings(server)),
    ):
        yield server


def script_for(run: Run) -> dict[str, list[Any]]:
    return script_for_run(run)


def evidence_of(run: Run) -> dict[str, list[EvidenceItem]]:
    """What the run's specialists were (or, before its data stage, will be) shown."""
    frozen = AgentStep.objects.filter(run=run, kind="evidence", status="done").values_list(
        "output", flat=True
    )
    if frozen:
        return EvidenceOutput.model_validate(frozen[0]).by_specialist()
    return select_evidence(run.brief.company, MemoConfig.model_validate(run.config).roster)


def analyst(username: str = "ana") -> User:
    from memos.services.accounts import ensure_groups

    user = User.objects.create_user(username=username, password=f"{username}-secret-pass")
    user.groups.add(ensure_groups()["analyst"])
    return user
