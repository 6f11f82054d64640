"""Small factories for real rows (no mocks of models)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.management import call_command

from agents.memo.outputs import EvaluationOutput, SelfScore
from agents.memo.schemas import Evaluation, SynthesisIteration
from agents.memo.verdict import decide
from memos.models import ArtefactVersion, Brief, Company, FactRecord, LLMCall, ReviewPolicy, Run
from memos.pipeline.memo.rehearsal import evaluation_answer, iteration_answer


def company(ticker: str = "AAPL", name: str = "Apple Inc.", cik: int | None = 320193) -> Company:
    return Company.objects.create(ticker=ticker, name=name, cik=cik, taxonomy="us-gaap")


def revenue_fact(of: Company, *, year: int = 2024, value: str = "391035000000") -> FactRecord:
    return FactRecord.objects.create(
        fact_id=f"{of.ticker}:revenue:FY{year}",
        company=of,
        metric="revenue",
        value=Decimal(value),
        unit="USD",
        period_start=date(year - 1, 10, 1),
        period_end=date(year, 9, 28),
        fiscal_year=year,
        fiscal_period="FY",
        source=FactRecord.Source.COMPANYFACTS,
        concept="RevenueFromContractWithCustomerExcludingAssessedTax",
        form="10-K",
        accession="0000320193-24-000123",
        filed=date(2024, 11, 1),
        url="https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/0000320193-24-000123-index.htm",
    )


def brief_of(owner: User, question: str) -> Brief:
    """A brief on AAPL (the company made if the test has none yet)."""
    apple = Company.objects.filter(ticker="AAPL").first() or company()
    return Brief.objects.create(company=apple, question=question, owner=owner)


def version_row(
    brief: Brief, number: int, *, kind: str, content: dict[str, Any], workflow: str = "memo", **columns: Any
) -> ArtefactVersion:
    """A frozen version of ``brief``, inserted as a row (with a finished run of its own), for tests of what
    reads versions rather than of freezing."""
    run = Run.objects.create(brief=brief, created_by=brief.owner, workflow=workflow, status=Run.Status.DONE)
    defaults: dict[str, Any] = {
        "title": f"{kind} {number}: {brief.question}"[:300],
        "rendered_text": "",
        "content_hash": f"{brief.pk:032d}{number:032d}",
        "evaluated": False,
        "changelog": "",
    }
    return ArtefactVersion.objects.create(
        brief=brief, run=run, number=number, kind=kind, content=content, **(defaults | columns)
    )


def run_for(owner: User, of: Company | None = None, *, status: str = Run.Status.QUEUED) -> Run:
    brief = Brief.objects.create(
        company=of or company(), question="Is the services mix durable?", owner=owner
    )
    return Run.objects.create(brief=brief, created_by=owner, status=status)


def evaluation_output(*, same_model_warning: str = "") -> EvaluationOutput:
    """An evaluator's report of a one-iteration run, as the evaluation stage stores it."""
    iteration = SynthesisIteration.model_validate(iteration_answer(1, ["AAPL:revenue:FY2024"]))
    evaluation = Evaluation.model_validate(evaluation_answer(1))
    return EvaluationOutput(
        evaluation=evaluation,
        verdict=decide([iteration], evaluation),
        self_scores=[SelfScore(iteration=1, jplus=iteration.self_jplus, jminus=iteration.self_jminus)],
        same_model_warning=same_model_warning,
    )


def ledger_row(run: Run | None, *, raw_response: str = "the raw answer") -> LLMCall:
    """One answered call in the ledger (of ``run``, or of no run)."""
    return LLMCall.objects.create(
        run=run,
        role="fundamentals",
        prompt_name="fundamentals",
        prompt_hash="a" * 64,
        model="local",
        base_url="http://127.0.0.1:8081/v1",
        request_hash="b" * 64,
        outcome=LLMCall.Outcome.OK,
        raw_response=raw_response,
    )


def empty_database() -> None:
    """Every table emptied, then what the migrations seeded put back (the review's policy row), so the tests
    after a module that loaded the whole snapshot start from the database a fresh install has."""
    call_command("flush", interactive=False, verbosity=0)
    ReviewPolicy.objects.get_or_create(pk=1)
