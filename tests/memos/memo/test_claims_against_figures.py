"""A memo run on the fake server whose fundamentals specialist writes what the embedded agency wrote for Apple
(issue 32): a trend its series does not bear out and a cash flow that cites the cash balance. The audit reads
each claim against every figure it cites (agents.text.figure_claims), drops it to LOW and lists code's reason
with the series on the audit page; the specialist's true claim stays as it was."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.memo.outputs import AuditOutput
from memos.models import AgentStep, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, evidence_of, fake_llm, load_desk_data, script_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_specialist_s_misread_series_and_wrong_metric_drop_to_low_with_code_s_reason(
    client: Client,
) -> None:
    load_desk_data("AAPL")
    owner = analyst()
    brief = create_brief(owner=owner, ticker="AAPL", question="Keep the position through the cycle?")
    run = start_run(brief=brief, user=owner, profile="quick", enqueue=False, workflow="memo")
    held = [item.evidence_id for items in evidence_of(run).values() for item in items if item.kind == "fact"]

    def annual(metric: str) -> list[str]:
        return sorted({i for i in held if f":{metric}:FY" in i and "Q" not in i.rsplit(":", 1)[1]})

    operating, cash, revenue = annual("operating_cash_flow"), annual("cash"), annual("revenue")
    assert (
        operating[-3:] == [f"AAPL:operating_cash_flow:FY{y}" for y in (2023, 2024, 2025)] and cash and revenue
    )
    script = script_for(run)
    fundamentals = dict(script["specialist_fundamentals"][0])
    template = dict(fundamentals["claims"][0])
    claims = {
        "Apple's operating cash flow has been increasing.": operating[-3:],
        "Apple's cash flow has been increasing.": cash[-2:],
        "Apple's revenue has been increasing.": revenue[-2:],
    }
    fundamentals["claims"] = [template | {"statement": s, "citations": c} for s, c in claims.items()]
    script["specialist_fundamentals"] = [fundamentals] * 2
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message

    audit = AuditOutput.model_validate(AgentStep.objects.get(run=run, key="audit").output)
    tiers = {c.statement: c.tier for c in audit.claims}
    assert tiers["Apple's operating cash flow has been increasing."] == "LOW"
    assert tiers["Apple's cash flow has been increasing."] == "LOW"
    assert tiers["Apple's revenue has been increasing."] == template["tier"]
    by_kind = {c.kind: c.detail for c in audit.contradictions if c.shards == ("fundamentals",)}
    assert "fell 5.7% in FY2025 (the latest change)" in by_kind["direction vs figures"]
    assert "FY2024 USD 118,254 M (AAPL:operating_cash_flow:FY2024)" in by_kind["direction vs figures"]
    assert by_kind["metric vs figures"].startswith(
        "the fundamentals brief: it names cash flow, but the figures it cites are the cash balance"
    )

    client.force_login(owner)
    step = AgentStep.objects.get(run=run, key="audit")
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "fell 5.7% in FY2025 (the latest change)" in page
    assert "it names cash flow, but the figures it cites are the cash balance" in page
