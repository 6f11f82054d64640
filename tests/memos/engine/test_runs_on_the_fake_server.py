"""A first try as a new user makes it, on the fake server: ``manage.py fake_llm`` started as a subprocess on a
free loopback port, the bundled snapshot loaded as ``bootstrap_demo`` loads it, and ``manage.py analyze`` and
``manage.py deck`` (both ``--inline``, quick profile) pointed at it, as ``LLM_BASE_URL`` points them.

The fake answers every schema of the product validly by itself (agents.llm.fakes.schema_example): twenty
briefs on the snapshot's tickers each end done or needs-review, as a memo and as a deck, never failed. A
date the fake wrote from a digit pattern (a catalyst's) was rarely a calendar date, so the synthesis failed
twice in three runs: a date is declared ``format: date`` and the fake writes one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from agents.llm.config import load_llm_settings
from memos.models import Company, Run
from memos.services.snapshot import load_snapshot
from tests.conftest import ROOT
from tests.memos.engine.test_llm_commands import read_line
from tests.memos.pipeline_support import analyst

# Forty runs take about 110 s on two shared cores, past the default suite's budget: this runs with the
# end-to-end tests (scripts/test.sh: pytest -m e2e).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.e2e]

QUESTIONS = (
    "Is the buyback pace sustainable?",
    "Does services growth offset a flat hardware cycle?",
    "Are gross margins at risk from pricing pressure over the next 12 months?",
    "Should the committee add to the position before the next annual filing?",
    "Is the dividend covered by operating cash flow?",
    "What would make us sell?",
    "How exposed is revenue to one region?",
    "Is the valuation stretched after the rally?",
    "Can capital spending keep rising without hurting free cash flow?",
    "Is net income growth driven by operations or by one-off items?",
)
SNAPSHOT_TICKERS = ("AAPL", "NVDA", "TSM", "TSLA")
BRIEFS = [(SNAPSHOT_TICKERS[i % len(SNAPSHOT_TICKERS)], QUESTIONS[i % len(QUESTIONS)]) for i in range(20)]
ENDED_WELL = {Run.Status.DONE, Run.Status.NEEDS_REVIEW}


@pytest.fixture(scope="module")
def fake_llm_url() -> Iterator[str]:
    command = [sys.executable, "manage.py", "fake_llm", "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield read_line(process, timeout_s=30).split()[-4]
    finally:
        process.terminate()
        process.communicate(timeout=10)


def run_command(name: str, ticker: str, question: str, user: str) -> str:
    """``manage.py <name> TICKER --brief QUESTION --inline --profile quick``: the run's status and message."""
    out, err = StringIO(), StringIO()
    try:
        call_command(
            name,
            ticker,
            "--brief",
            question,
            "--inline",
            "--profile",
            "quick",
            "--user",
            user,
            stdout=out,
            stderr=err,
        )
    except SystemExit as exited:  # the commands exit 1 for a failed run, 2 for bad input
        if exited.code == 2:
            return f"refused: {err.getvalue().strip()}"
    workflow = "deck" if name == "deck" else "memo"  # the memo's command is analyze
    run = Run.objects.filter(
        workflow=workflow, brief__question=question, brief__company__ticker=ticker
    ).first()
    assert run is not None, err.getvalue()
    if run.status in ENDED_WELL:
        return run.status
    # What each step ended as, so that a failure says which step gave out and why.
    steps = [
        f"{step.stage}/{step.key} {step.status}: {step.summary or step.error[:300]}"
        for step in run.steps.order_by("stage", "position")
    ]
    return f"{run.status}: {run.status_message} [" + "; ".join(steps) + "]"


def test_twenty_briefs_end_done_or_needing_review_as_memos_and_as_decks(fake_llm_url: str) -> None:
    load_snapshot(root=settings.SNAPSHOT_DIR)
    assert set(SNAPSHOT_TICKERS) <= set(Company.objects.values_list("ticker", flat=True))
    user = analyst().username
    endpoint = {"LLM_BASE_URL": fake_llm_url, "LLM_API_KEY": "fake", "LLM_MODEL": "fake-model"}
    ended: dict[tuple[str, str, str], str] = {}
    with override_settings(LLM_SETTINGS=load_llm_settings(endpoint)):
        for ticker, question in BRIEFS:
            for command in ("analyze", "deck"):
                ended[(command, ticker, question)] = run_command(command, ticker, question, user)
    failed = {brief: status for brief, status in ended.items() if status not in ENDED_WELL}
    assert not failed, failed
