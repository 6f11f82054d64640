"""A deck's re-asks on the embedded model: every one begins with the same list of figures, so they reach the
model one after the other (each reads only its own sentences past what the slot already holds); on any
other model they are asked together, under the run's bound."""

from __future__ import annotations

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
from memos.pipeline.registry import fake_answers
from tests.memos.deck_support import deck_run, deck_settings

pytestmark = pytest.mark.django_db(transaction=True)


class Overlap:
    """The re-asks the fake server is answering at once, at most."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.calls = 0

    def reask(self, schema: Mapping[str, Any], messages: list[Any]) -> Any:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        time.sleep(0.3)
        with self.lock:
            self.now -= 1
        return {"rewrites": []}


def every_slide_types_a_figure(schema: Mapping[str, Any], messages: list[Any]) -> Any:
    slide = deck_answer("drafter", schema, messages)
    assert slide is not None and slide["bullets"]
    slide["bullets"][0] = slide["bullets"][0] | {"text": "Demand rose 9% on the quarter."}
    return slide


@pytest.mark.parametrize(("model", "together"), [(LOCAL_MODEL_ALIAS, 1), ("fake-writer", 3)])
def test_re_asks_sharing_their_figures_go_one_by_one_to_the_embedded_model(model: str, together: int) -> None:
    run = deck_run("quick")
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
    assert overlap.most == together
