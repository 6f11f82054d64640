"""The agency's inferences read against every figure they cite, end to end through the real openai client
and the fake server: the claims the embedded model wrote for Apple (issue 32) are withheld with code's
reason on the F1 page, and F2's advice gives way to code's lines quoting what its documents report, on the
F2 page and in the frozen version. A true claim over the right metric reaches both unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from django.test import Client

from agents.agency.outputs import InferenceOutput, SourcesOutput
from agents.llm.fakes.reading import schema_enum
from agents.text.promotion import read
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from memos.services.runs import create_brief
from tests.memos.agency.support import start_agency
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

ADVICE = (
    "Apple should consider investing in customer service.",
    "Apple should consider expanding its distribution channels.",
)


def _ids(schema: Mapping[str, Any], metric: str) -> list[str]:
    return sorted(
        ref for ref in schema_enum(schema, "citations") if f":{metric}:FY" in ref and "Q" not in ref
    )


def financial(schema: Mapping[str, Any], _messages: Any) -> dict[str, Any]:
    """F1 as the embedded model wrote it: three misreadings and one true claim, over the run's own ids."""
    return {
        "claims": [
            {
                "statement": "Apple's operating cash flow has been increasing.",
                "citations": _ids(schema, "operating_cash_flow"),
            },
            {"statement": "Apple's net margin has been increasing.", "citations": _ids(schema, "net_margin")},
            {"statement": "Apple's cash flow has been increasing.", "citations": _ids(schema, "cash")},
            {"statement": "Apple's revenue has been increasing.", "citations": _ids(schema, "revenue")},
        ],
        "gaps": ["The figures hold no segment split of revenue."],
    }


OFFERED: list[str] = []  # the ids F2 was offered to cite, as its schema listed them


def trend(schema: Mapping[str, Any], _messages: Any) -> dict[str, Any]:
    """F2 as the embedded model wrote it: advice only, each citing a post."""
    posts = schema_enum(schema, "citations")
    OFFERED[:] = posts
    return {
        "claims": [{"statement": s, "citations": [posts[i]]} for i, s in enumerate(ADVICE)],
        "gaps": ["No news from the last quarter."],
    }


def _cited_first(run: Run) -> str:
    """The id of the first document F2 was offered (the one its first claim of advice cites)."""
    return str(
        SourcesOutput.model_validate(AgentStep.objects.get(run=run, key="sources").output).documents[0].doc_id
    )


def _run() -> Run:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(
        owner=user, ticker="AAPL", question="Which strategic moves should the company make next?"
    )
    run = start_agency(brief, user, "quick", personas=("capital",))
    script = {"agency_inference_financial": [financial], "agency_inference_trend": [trend]}
    with fake_llm(script):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    return run


def test_misread_figures_and_advice_are_withheld_with_their_reasons_on_the_page_and_in_the_version(
    client: Client,
) -> None:
    run = _run()
    assert run.status == Run.Status.DONE, run.status_message
    f1_step, f2_step = (AgentStep.objects.get(run=run, key=key) for key in ("F1", "F2"))
    f1 = InferenceOutput.model_validate(f1_step.output)
    f2 = InferenceOutput.model_validate(f2_step.output)

    # F1: only the true claim over the right metric stands, unchanged.
    assert [c.statement for c in f1.claims] == ["Apple's revenue has been increasing."]
    operating, margin, cash = f1.dropped
    assert operating.startswith("claim 1 withheld: it says operating cash flow rose at each step")
    assert "FY2025 USD 111,482 M (AAPL:operating_cash_flow:FY2025)" in operating
    assert "fell 5.7% in FY2025 (the latest change)" in operating
    assert margin.startswith("claim 2 withheld: it says net margin rose at each step")
    assert "fell 1.3 points in FY2024" in margin
    assert cash.startswith(
        "claim 3 withheld: it names cash flow, but the figures it cites are the cash balance"
    )

    # F2: no advice left; code's lines quote what each cited document says.
    advice = [why for why in f2.dropped if why.endswith("it says what should be done and reports nothing")]
    assert len(advice) == len(ADVICE) and f2.claims and all(c.by_code for c in f2.claims)
    assert all(" reports: \u201c" in c.statement and "should" not in c.statement for c in f2.claims)
    # The first post cited is a news item, quoted; the second types a figure in its only sentence ("50s"):
    # nothing of it may be quoted, and code says so.
    assert [c.citations for c in f2.claims] == [[_cited_first(run)]]
    assert f2.claims[0].statement.startswith(
        "cnbc.com (2016-01-11, stale) reports: \u201cTechnology companies"
    )
    assert any("holds no sentence code may quote" in why for why in f2.dropped)

    client.force_login(run.created_by)
    f1_page = client.get(f"/runs/{run.pk}/steps/{f1_step.pk}/").content.decode()
    assert "fell 5.7% in FY2025 (the latest change)" in f1_page
    assert "it names cash flow, but the figures it cites are the cash balance" in f1_page
    f2_page = client.get(f"/runs/{run.pk}/steps/{f2_step.pk}/").content.decode()
    assert "advice, not a finding from the documents" in f2_page
    # F2 was never shown Apple's promotional posts, and its page says how many code left out and why.
    gathered = SourcesOutput.model_validate(AgentStep.objects.get(run=run, key="sources").output)
    spam = [d for d in gathered.documents if read(f"{d.title} {d.text}").promotional]
    assert any("become a successful online trader" in d.text for d in spam)
    assert OFFERED and not {d.doc_id for d in spam} & set(OFFERED)
    assert len(OFFERED) == len(gathered.documents) - len(spam)
    assert f2.promotional_note == (
        f"code left out {len(spam)} of {len(gathered.documents)} documents as promotion or spam "
        "before F2 read them"
    )
    assert [line.split(" ", 1)[0] for line in f2.promotional] == [d.doc_id for d in spam]
    assert "Code left out" in f2_page and "5 steps to become a successful online" in f2_page
    assert "code's line (every claim the model wrote here was advice" in f2_page

    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    assert "Apple's revenue has been increasing." in version.sections["F1: financial inference"]
    assert "operating cash flow" not in version.sections["F1: financial inference"]
    reported = version.sections["F2: trend and sentiment"]
    assert (
        reported.startswith("F2.1: ") and " reports: \u201c" in reported and "should consider" not in reported
    )
