"""Shared set-up for deck runs: the fake server with the judge on its own model (seed 001: Reviewer !=
Reviser), and a deck brief on the snapshot's AAPL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.test import override_settings

from agents.deck.outputs import DeckOutput
from agents.deck.spec import Deck
from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from memos.pipeline.registry import fake_answers
from memos.services.runs import create_brief, start_run
from tests import db_snapshot
from tests.memos.pipeline_support import analyst, load_desk_data

QUESTION = "Should the board keep the position through the next product cycle?"


def deck_settings(server: FakeLLMServer, *, concurrency: int = 3) -> LLMSettings:
    def endpoint(model: str) -> Endpoint:
        return Endpoint(base_url=server.url, api_key="test-key", model=model)

    return LLMSettings(
        default=endpoint("fake-writer"),
        roles={Role.SCORER: endpoint("fake-judge"), Role.EVALUATOR: endpoint("fake-judge")},
        max_retries=1,
        max_concurrency=concurrency,
        loopback_only=True,
        timeout_s=20,
    )


@contextmanager
def fake_deck_llm(script: dict[str, list[Any]] | None = None) -> Iterator[FakeLLMServer]:
    with (
        FakeLLMServer(script=script or {}, answers=fake_answers()) as server,
        override_settings(LLM_SETTINGS=deck_settings(server)),
    ):
        yield server


# The models the deck tests' desk is configured with (``deck_settings``), read when a run starts to record its
# verdict's families: the judge on a model of its own.
STARTED_WITH = LLMSettings(
    default=Endpoint(base_url="http://127.0.0.1:9/v1", api_key="test-key", model="fake-writer"),
    roles={
        Role.SCORER: Endpoint(base_url="http://127.0.0.1:9/v1", api_key="test-key", model="fake-judge"),
    },
    loopback_only=True,
)


def deck_run(
    profile: str = "quick",
    *,
    user: User | None = None,
    question: str = QUESTION,
    started_with: LLMSettings = STARTED_WITH,
) -> Run:
    load_desk_data("AAPL")
    owner = user or analyst()
    brief = create_brief(owner=owner, ticker="AAPL", question=question)
    with override_settings(LLM_SETTINGS=started_with):
        return start_run(brief=brief, user=owner, profile=profile, workflow="deck", enqueue=False)


@dataclass
class Finished:
    """A deck run that ran to its end, the version it froze, and the deck in it."""

    run: Run
    version: ArtefactVersion
    output: DeckOutput

    @property
    def deck(self) -> Deck:
        return self.output.deck

    def step(self, kind: str) -> AgentStep:
        """The run's first finished step of ``kind``."""
        found = AgentStep.objects.filter(run=self.run, kind=kind, status="done").order_by("position").first()
        assert found is not None, kind
        return found


def finished_deck(profile: str = "quick") -> Finished:
    """A deck run on the fake server, run here to its end and frozen."""
    run = deck_run(profile)
    with fake_deck_llm():
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    version = ArtefactVersion.objects.get(run=run)
    return Finished(run, version, DeckOutput.model_validate(version.content))


@dataclass(frozen=True)
class FinishedSnapshot:
    """The rows of a finished deck run (``finished_deck``), and which run and version in them it is."""

    rows: db_snapshot.Snapshot
    run_id: str
    version_id: int


def finished_deck_snapshot(profile: str = "quick") -> FinishedSnapshot:
    """A finished deck run built once, for a module's tests to restore (``restored_deck``) instead of each
    running its own: the same fake answers give the same deck every time, and a run takes seconds of
    rendering. Call it with the database unblocked, outside any test; the database is left as it was."""
    rows, done = db_snapshot.committed(lambda: finished_deck(profile))
    return FinishedSnapshot(rows, str(done.run.pk), done.version.pk)


def restored_deck(snapshot: FinishedSnapshot) -> Finished:
    """The snapshot's rows in the test database, and its finished run read back from them. Only for a
    transactional test (``django_db(transaction=True)``): its flush removes the rows afterwards."""
    db_snapshot.restore(snapshot.rows)
    version = ArtefactVersion.objects.get(pk=snapshot.version_id)
    return Finished(Run.objects.get(pk=snapshot.run_id), version, DeckOutput.model_validate(version.content))
