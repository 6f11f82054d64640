"""A memo run whose specialist reads revenue in FY2024 both ways has the pair flagged before synthesis: both
claims quoted on the audit's page, in the synthesizer's prompt (the figure by its id, never its value), in
the frozen memo and at the top of its version page. A later brief on the same company whose claim the first
brief's memo contradicts is flagged against that memo, linked; a brief of another analyst is not compared
with a memo its analyst may not read."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.memo.outputs import AuditOutput, MemoOutput
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, person, script_for

pytestmark = pytest.mark.django_db(transaction=True)

ROSE = "Revenue rose into the latest fiscal year on iPhone upgrades."
FELL = "Revenue fell in the latest fiscal year as China demand weakened."


def claim(statement: str, *citations: str) -> dict[str, Any]:
    return {"layer": "MICRO", "statement": statement, "citations": list(citations), "tier": "HIGH"}


def memo_run(owner: User, question: str, claims: list[dict[str, Any]]) -> tuple[Run, list[dict[str, Any]]]:
    """A quick AAPL memo whose fundamentals specialist answers ``claims`` (at most four, the quick profile's
    bound); the requests the model got."""
    brief = create_brief(owner=owner, ticker="AAPL", question=question)
    run = start_run(brief=brief, user=owner, profile="quick", enqueue=False, workflow="memo")
    script = script_for(run)
    answer = dict(script["specialist_fundamentals"][0]) | {"claims": claims}
    script["specialist_fundamentals"] = [answer, answer]
    with fake_llm(script) as server:
        driver.run_inline(str(run.pk))
        requests = server.requests
    run.refresh_from_db()
    assert run.status in (Run.Status.DONE, Run.Status.NEEDS_REVIEW), run.status_message
    return run, requests


def audit_of(run: Run) -> AuditOutput:
    return AuditOutput.model_validate(AgentStep.objects.get(run=run, kind="audit").output)


def panel(page: str) -> str:
    start = page.index('id="contradictions"')
    return page[start : page.index("</section>", start)].replace("&#x27;", "'")


def test_a_specialist_reading_revenue_both_ways_is_flagged_before_synthesis_and_on_the_version_page() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    run, requests = memo_run(
        owner,
        "Should the committee add to the position ahead of the next product cycle?",
        [
            claim(ROSE, "AAPL:revenue:FY2023", "AAPL:revenue:FY2024"),
            claim(FELL, "AAPL:revenue:FY2024"),
            claim("Operating cash flow strengthened.", "AAPL:operating_cash_flow:FY2025"),
            claim("Operating cash flow weakened.", "AAPL:operating_cash_flow:FY2025"),
        ],
    )
    flag, cash = audit_of(run).claim_contradictions
    assert (flag.kind, flag.metric, flag.period) == ("specialists", "revenue", "FY2024")
    assert {flag.first.statement, flag.second.statement} == {ROSE, FELL}
    assert (cash.metric, cash.period) == ("operating_cash_flow", "FY2025")

    synthesizer = [r for r in requests if r["prompt_name"] == "synthesizer"]
    assert synthesizer
    user = synthesizer[0]["body"]["messages"][-1]["content"]
    assert f'fundamentals says it fell: "{FELL}"' in user and "[[AAPL:revenue:FY2024]]" in user
    system = synthesizer[0]["body"]["messages"][0]["content"]
    assert FELL not in system  # model-written quotes stay out of the system message

    version = ArtefactVersion.objects.get(run=run)
    frozen = MemoOutput.model_validate(version.content)
    assert [f.first.statement for f in frozen.contradictions] == [ROSE, "Operating cash flow strengthened."]
    assert len(frozen.claims) == 4  # every claim with one direction on one figure, kept for later briefs

    client = Client()
    client.force_login(owner)
    page = client.get(f"/versions/{version.pk}/").content.decode()
    shown = panel(page)
    assert "Contradictions between claims: 2 flagged" in shown
    assert "The fundamentals brief reads revenue for FY2024 (AAPL) both ways" in shown
    assert ROSE in shown and FELL in shown
    # The rehearsal's memo builds on [[AAPL:revenue:FY2023]] and never names operating cash flow.
    revenue = shown[shown.index("reads revenue for FY2024") :]
    assert revenue.index("taken up in the memo") < revenue.index("</li>")
    cash_flag = shown[shown.index("reads operating cash flow for FY2025") :]
    assert cash_flag.index("not mentioned in the memo") < cash_flag.index("</li>")
    assert "the memo's text never mentions the figure of 1 of them" in shown
    assert "No other brief on the company had a frozen memo to compare with." in shown
    assert page.index('id="contradictions"') < page.index('id="review"')
    step = AgentStep.objects.get(run=run, kind="audit")
    audit_page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert 'id="claim-contradictions"' in audit_page and "both ways" in audit_page


def test_a_claim_the_latest_memo_of_another_brief_contradicts_is_flagged_and_links_that_memo() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    first, _ = memo_run(owner, "Is the services mix worth a premium?", [claim(ROSE, "AAPL:revenue:FY2024")])
    other = ArtefactVersion.objects.get(run=first)
    assert audit_of(first).claim_contradictions == []  # alone, it contradicts nothing

    second, requests = memo_run(
        owner,
        "Should the committee trim ahead of the China data?",
        [claim(FELL, "AAPL:revenue:FY2024"), claim("Revenue rose.", "AAPL:revenue:FY2025")],
    )
    audited = audit_of(second)
    (flag,) = audited.claim_contradictions
    assert flag.kind == "other brief" and flag.other is not None
    assert (flag.other.version_id, flag.first.statement, flag.second.statement) == (other.pk, FELL, ROSE)
    assert [memo.version_id for memo in audited.compared_with] == [other.pk]
    prompt = next(r for r in requests if r["prompt_name"] == "synthesizer")["body"]["messages"][-1]["content"]
    assert "against the memo v1 of another brief" in prompt and ROSE in prompt

    client = Client()
    client.force_login(owner)
    version = ArtefactVersion.objects.get(run=second)
    shown = panel(client.get(f"/versions/{version.pk}/").content.decode())
    assert f'href="/versions/{other.pk}/"' in shown
    assert "Is the services mix worth a premium?" in shown
    assert FELL in shown and ROSE in shown

    # Another analyst's brief is not compared with a memo only ana may read.
    bob = person("bob", "analyst")
    theirs, _ = memo_run(bob, "Does the buyback still make sense?", [claim(FELL, "AAPL:revenue:FY2024")])
    assert audit_of(theirs).compared_with == [] and audit_of(theirs).claim_contradictions == []
