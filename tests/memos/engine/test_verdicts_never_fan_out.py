"""Seed 003: never fan out a verdict across clones of one model. A verdict role asked from a fan-out of
generators is refused by the gateway, whatever code sends it; a fan-out that declares what makes each verdict
its own (another move, lens or model) may ask one."""

from __future__ import annotations

import pytest

from agents.llm.fanning import VerdictFannedOut
from agents.llm.gateway import LLMGateway
from agents.llm.ping import PingAnswer
from agents.llm.roles import VERDICT_ROLES, Role
from agents.llm.types import CallContext
from memos.pipeline import fanout
from memos.pipeline.agency.breadths import SCORES, TURNS
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import template
from memos.pipeline.registry import WORKFLOWS
from tests.memos.pipeline_support import fake_llm

PINGS = {"llm_ping": [{"status": "ok", "summary": "ok"}] * 10}


def ask(gw: LLMGateway, role: Role, n: int = 0) -> PingAnswer:
    """One small call of ``role`` (the connectivity check's prompt, which the fake server answers); ``n``
    makes each ask of a fan-out its own prompt, so none is answered by the ledger from another's answer."""
    prompt = template("llm_ping").render({"role": f"{role} (ask {n})"})
    return gw.complete(prompt, PingAnswer, context=CallContext(stage="test", role=role))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", sorted(VERDICT_ROLES))
def test_a_verdict_role_sent_through_a_fan_out_of_generators_is_refused(role: Role) -> None:
    with fake_llm(PINGS) as server:
        gw = gateway()
        tasks = [(n, lambda: ask(gw, role)) for n in range(3)]
        for _, future in fanout.in_parallel(tasks, limit=3, breadth=TURNS):
            with pytest.raises(VerdictFannedOut, match="never fans a verdict out"):
                future.result()
        assert server.request_count == 0  # refused before anything was sent


@pytest.mark.django_db(transaction=True)
def test_generators_fan_out_and_a_declared_fan_out_of_distinct_verdicts_may_ask_a_verdict() -> None:
    with fake_llm(PINGS) as server:
        gw = gateway()
        generators = [(n, lambda n=n: ask(gw, Role.ANALYST, n)) for n in range(2)]
        for _, future in fanout.in_parallel(generators, limit=2, breadth=TURNS):
            assert future.result()
        lenses = [(n, lambda n=n: ask(gw, Role.SCORING, n)) for n in range(2)]
        for _, future in fanout.in_parallel(lenses, limit=2, breadth=SCORES):
            assert future.result()
        # Asked once, outside any fan-out, a verdict is a verdict.
        assert ask(gw, Role.EVALUATOR)
        assert server.request_count == 5


def test_every_declared_fan_out_of_verdicts_says_what_makes_each_its_own() -> None:
    for workflow in WORKFLOWS.values():
        for stage in workflow.stages:
            for breadth in stage.fan_outs:
                assert breadth.why, breadth.name
                assert breadth.distinct_verdicts == "" or len(breadth.distinct_verdicts.split()) >= 3
