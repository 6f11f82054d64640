"""A memo run on the fake server whose specialist names what its sources do not hold: the audit marks the
claim (LOW, listed with the names), grades the specialists' declared gaps, and the verdict caps "source
anchored" for it, saying why."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.memo.outputs import AuditOutput, EvaluationOutput
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_unsupported_name_is_marked_and_counts_against_the_evaluation(client: Client) -> None:
    load_desk_data("AAPL")
    owner = analyst()
    brief = create_brief(owner=owner, ticker="AAPL", question="Keep the position through the cycle?")
    run = start_run(brief=brief, user=owner, profile="quick", enqueue=False, workflow="memo")
    script = script_for(run)
    fundamentals = dict(script["specialist_fundamentals"][0])
    first = dict(fundamentals["claims"][0])
    first["statement"] = "Revenue held because Samsung lost share to the company in India."
    fundamentals["claims"] = [first, *fundamentals["claims"][1:]]
    script["specialist_fundamentals"] = [fundamentals] * 2
    evaluation = dict(script["evaluator"][0])
    grades = [dict(grade) for grade in evaluation["grades"]]
    grades[-1] = grades[-1] | {"jplus": grades[-1]["jplus"] | {"source_anchored": 2}}
    script["evaluator"] = [evaluation | {"grades": grades}] * 2
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message

    audit = AuditOutput.model_validate(AgentStep.objects.get(run=run, key="audit").output)
    [marked] = audit.unsupported_entities
    assert marked.entities == ["Samsung", "India"] and marked.shard_id == "fundamentals"
    assert next(c for c in audit.claims if c.statement == first["statement"]).tier == "LOW"
    assert audit.gap_grades and all(
        g.real for g in audit.gap_grades
    )  # "No management guidance ...": none held
    assert audit.penalties == 1

    evaluated = EvaluationOutput.model_validate(AgentStep.objects.get(run=run, key="evaluation").output)
    assert evaluated.verdict.audit_penalty == (
        "1 claim rests on names, dates or facts their sources lack: source anchored 2 -> 1"
    )
    assert evaluated.verdict.audit_penalty in evaluated.verdict.reason

    client.force_login(owner)
    step = AgentStep.objects.get(run=run, key="audit")
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert 'id="entity-audit"' in page and "Samsung, India" in page
    assert "credit: a real gap" in page
