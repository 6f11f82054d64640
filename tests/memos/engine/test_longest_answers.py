"""No answer that its sent schema admits can fail a run later (issue 31, 2): every registered workflow, run to
its end on the fake server with every prose field of every answer (its rehearsal's and its roles' canned
ones) written to the longest its sent pattern admits (its bound in units, a space between each: about twice
the bound in characters, which a decoder that drops ``maxLength`` beside a pattern may write), finishes and
freezes its version. Code bounds each answer when it is validated (agents.text.sentences.bounded); before,
a board member's long reason failed the agency's stage three times, at its last step."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agents.llm.fakes.server import load_answers
from memos.models import ArtefactVersion, Run
from memos.pipeline import driver
from memos.pipeline.registry import WORKFLOWS, fake_answers, rehearsal
from memos.services.runs import ask, ask_watchlist
from tests.memos.engine.test_every_workflow_has_its_pages import WATCHLIST, cheapest_profile
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

Answer = Callable[[dict[str, Any], list[dict[str, Any]]], Any]


class Longest:
    """Answers made longest: ``lengthened`` counts the prose fields it wrote past their bound."""

    def __init__(self) -> None:
        self.lengthened = 0

    def of(self, answer: Any) -> Answer:
        """A scripted answer (an object, or a callable the server calls) made longest under its schema."""

        def made(schema: dict[str, Any], messages: list[dict[str, Any]]) -> Any:
            found = answer(schema, messages) if callable(answer) else answer
            return None if found is None else self.walk(found, schema, schema)

        return made

    def canned(self, role: str, roles: Mapping[str, Any]) -> Answer:
        canned = roles[role]
        return lambda schema, messages: self.walk(canned(role, schema, messages), schema, schema)

    def walk(self, value: Any, node: Any, root: dict[str, Any]) -> Any:
        node = _resolve(node, root)
        if isinstance(node, dict) and "anyOf" in node:
            node = next((b for b in node["anyOf"] if _fits(value, _resolve(b, root))), {})
        if not isinstance(node, dict):
            return value
        if isinstance(value, str) and "pattern" in node and "maxLength" in node:
            return self.longest(value, int(node["maxLength"]))
        if isinstance(value, dict):
            props = node.get("properties", {})
            return {key: self.walk(item, props.get(key, {}), root) for key, item in value.items()}
        if isinstance(value, list):
            return [self.walk(item, node.get("items", {}), root) for item in value]
        return value

    def longest(self, text: str, bound: int) -> str:
        units = sum(1 for char in text if char != " ")  # a reference counts as its characters: fewer units
        if units >= bound:
            return text
        self.lengthened += 1
        return " ".join([text, *["and"[i % 3] for i in range(bound - units)]]).strip()


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = root["$defs"][str(node["$ref"]).rsplit("/", 1)[-1]]
    return node


def _fits(value: Any, node: Any) -> bool:
    kinds = {str: "string", dict: "object", list: "array", bool: "boolean", int: "integer", float: "number"}
    wanted = node.get("type") if isinstance(node, dict) else None
    return (value is None and wanted == "null") or wanted == kinds.get(type(value))


@pytest.mark.parametrize("name", list(WORKFLOWS))
def test_every_workflow_runs_to_its_end_on_the_longest_answers_its_schemas_admit(name: str) -> None:
    workflow = WORKFLOWS[name]
    owner, question = analyst(), f"What should the committee know? ({name})"
    profile = cheapest_profile(workflow)
    if workflow.subject == "watchlist":
        run = ask_watchlist(
            owner=owner, symbols=WATCHLIST, question=question, workflow=name, profile=profile, enqueue=False
        )
    else:
        load_desk_data("AAPL")
        run = ask(
            owner=owner, ticker="AAPL", question=question, workflow=name, profile=profile, enqueue=False
        )
    long = Longest()
    script: dict[str, list[Any]] = {
        key: [long.of(answer) for answer in answers] for key, answers in rehearsal(run).items()
    }
    roles = load_answers(fake_answers())
    for role in roles:  # after the rehearsal's keys: the server tries "prompt@role" and the prompt first
        script.setdefault(role, [long.canned(role, roles)] * 400)
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert long.lengthened > 0
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    assert "could not be read back" not in run.status_message
    assert ArtefactVersion.objects.filter(run=run).exists()
