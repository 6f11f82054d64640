"""A deck's re-asks show each slide the figures it prints, not the run's whole list (4,500 tokens of it on the
embedded model, 85 s for the first re-ask of a quick deck): short prompts that no longer share their start,
so they are asked together under the run's bound on the embedded model as on any other. (Re-asks that do
share a long start, a memo's, still reach the embedded model one by one: tests/agents/llm/test_warm.py.)"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from django.test import override_settings

from agents.deck.fakes import deck_answer
from agents.llm.config import LOCAL_MODEL_ALIAS, Endpoint
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from memos.models import Run
from memos.pipeline import driver
from memos.pipeline.deck.data import deck_facts
from memos.pipeline.registry import fake_answers
from tests.memos.deck_support import deck_run, deck_settings

pytestmark = pytest.mark.django_db(transaction=True)

FACT_LINE = re.compile(r"^- (\S+): ", re.MULTILINE)


class Overlap:
    """The re-asks the fake server is answering at once, at most."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.calls = 0
        self.shown: list[list[str]] = []  # the fact ids each re-ask listed

    def reask(self, schema: Mapping[str, Any], messages: list[Any]) -> Any:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
            self.shown.append(FACT_LINE.findall(messages[-1]["content"].split("withheld sentences")[0]))
        time.sleep(0.3)
        with self.lock:
            self.now -= 1
        return {"rewrites": []}


PLACED: set[str] = set()  # every fact id a drafted slide placed


def every_slide_types_a_figure(schema: Mapping[str, Any], messages: list[Any]) -> Any:
    slide = deck_answer("drafter", schema, messages)
    assert slide is not None and slide["bullets"]
    PLACED.update(fact_id for bullet in slide["bullets"] for fact_id in bullet["figures"])
    PLACED.update([*(slide["table"] or {}).get("rows", []), *(slide["chart"] or {}).get("points", [])])
    slide["bullets"][0] = slide["bullets"][0] | {"text": "Demand rose 9% on the quarter."}
    return slide


@pytest.mark.parametrize("model", [LOCAL_MODEL_ALIAS, "fake-writer"])
def test_each_re_ask_shows_the_figures_its_slide_prints_and_they_are_asked_together(model: str) -> None:
    run = deck_run("quick")
    PLACED.clear()
    overlap = Overlap()
    script = {"deck_drafter": [every_slide_types_a_figure] * 20, "reask": [overlap.reask] * 20}
    with FakeLLMServer(script=script, answers=fake_answers()) as server:
        settings = deck_settings(server)
        drafter = Endpoint(base_url=server.url, api_key="test-key", model=model)
        roles = settings.roles | {Role.DRAFTER: drafter}
        with override_settings(LLM_SETTINGS=settings.model_copy(update={"roles": roles})):
            driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    assert overlap.calls >= 3
    assert overlap.most == 3
    # One list a slide, at most a slide's worth (3 bullets of 2, a table and a chart of 5 each), of what the
    # drafted slides placed; the run holds many more.
    assert all(0 < len(ids) <= 16 for ids in overlap.shown) and len({*map(tuple, overlap.shown)}) >= 3
    assert all(set(ids) <= PLACED for ids in overlap.shown)
    assert run.brief.company is not None and len(PLACED) < len(deck_facts(run.brief.company)) / 2
