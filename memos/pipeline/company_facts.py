"""A company's filed figures, fetched from EDGAR into the fact store the first time a run needs them."""

from __future__ import annotations

from agents.data.edgar import load_company_facts
from agents.data.errors import DataError
from memos.models import AgentStep, Company
from memos.pipeline.context import StageContext
from memos.pipeline.data_sources import edgar_source
from memos.pipeline.errors import StageFailed
from memos.pipeline.fact_store import save_company_facts


def ensure_company_facts(ctx: StageContext, step: AgentStep, company: Company) -> None:
    """Load the company's companyfacts when the store has none; a failure fails ``step`` and the stage."""
    if company.facts.exists():
        return
    try:
        save_company_facts(load_company_facts(edgar_source(), company.ticker))
    except DataError as exc:
        ctx.fail_step(step, str(exc))
        raise StageFailed(f"no figures for {company.ticker}: {exc}") from exc
