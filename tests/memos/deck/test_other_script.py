"""A deck whose drafter slips into Chinese, end to end: what a new user hit on the embedded model.

The fake server's drafter writes one slide with "市场" (market) in an English bullet, as Qwen2.5 1.5B did.
Through the real pipeline, the PDF draws it in the fallback face and reads it back as written, the
fact-check finds nothing wrong with the figures, the step's JSON is stored, the humanizer names the slide
and the characters, every lap's work order is code's (rewrite that slide in the brief's language), and the
delivered deck withholds the sentence no lap fixed. Nothing fails.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import pytest
from django.test import Client
from pypdf import PdfReader

from agents.deck.fakes import deck_answer
from agents.deck.outputs import DeckOutput, DraftOutput, LapOutput
from agents.deck.render.pdf import render_pdf
from memos.models import AgentStep, ArtefactVersion, Run
from memos.pipeline import driver
from tests.agents.render.pdf_fonts import embedded_fonts
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)

SLIP = "市场"


def drafter_slips(schema: Mapping[str, Any], messages: list[Any]) -> Any:
    """The fake drafter's own slide for whichever section asks first, with Chinese in its first bullet."""
    slide = deck_answer("drafter", schema, messages)
    assert slide is not None and slide["bullets"], slide
    first = slide["bullets"][0]
    slide["bullets"][0] = first | {"text": f"Services {SLIP} share held up this year"}
    return slide


def output(run: Run, key: str) -> Any:
    return AgentStep.objects.get(run=run, key=key).output


def test_a_deck_whose_drafter_slips_into_chinese_is_drawn_checked_ordered_fixed_and_delivered_clean() -> None:
    run = deck_run("full")  # more than one lap: the slip is code's work order on each (quick runs one)
    # Asked again about the sentence before the draft is built, the drafter leaves it as it is: the slip
    # reaches the draft, and the loop's own path is what is tested here.
    with fake_deck_llm({"deck_drafter": [drafter_slips], "reask": [{"rewrites": []}]}) as server:
        driver.run_inline(str(run.pk))
        asked = [(entry["role"], entry["body"]["messages"]) for entry in server.requests]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message

    # The draft: rendered, read back and fact-checked clean, the slip found on its slide, and stored.
    draft = DraftOutput.model_validate(output(run, "draft-1"))
    [slipped] = [s for s in draft.candidate.deck.slides if any(SLIP in b.text for b in s.bullets)]
    [reasked] = [r for r in draft.repairs if r.asked]
    assert (reasked.section, reasked.reasked, reasked.withheld) == (f"slide {slipped.number}", 0, 1)
    assert draft.r1.passed and draft.candidate.mismatches == []
    [finding] = [f for f in draft.candidate.humanizer if f.rule == "other_script"]
    assert (finding.slide, finding.shape) == (slipped.number, "bullet 1")
    assert finding.message == (
        f"text in another script than the brief's (Han): write it in the brief's language: \"{SLIP}\""
    )
    pdf = render_pdf(draft.candidate.deck).pdf
    assert "WenQuanYi-Micro-Hei" in embedded_fonts(pdf, page=slipped.number - 1)  # drawn, not empty boxes
    text = PdfReader(io.BytesIO(pdf)).pages[slipped.number - 1].extract_text()
    assert f"Services {SLIP} share held up this year" in text

    # Every lap: code's work order on that slide, the reviser shown what slipped; the planner never asked.
    steps = AgentStep.objects.filter(run=run, kind="lap", status="done").order_by("position")
    laps = [LapOutput.model_validate(step.output) for step in steps]
    assert len(laps) >= 2
    for lap in laps:
        assert lap.work_order is not None and lap.work_order.slides == [slipped.number]
        assert lap.work_order.action == "humanize_text"
    roles = [role for role, _ in asked]
    assert "planner" not in roles and roles.count("reviser") == len(laps)
    reviser_prompts = [str(messages) for role, messages in asked if role == "reviser"]
    assert all(
        "other_script: text in another script" in prompt and SLIP in prompt for prompt in reviser_prompts
    )

    # Delivered: the sentence no lap fixed is withheld, and said so.
    deck = DeckOutput.model_validate(output(run, "deck"))
    assert deck.withheld == [f"slide {slipped.number}: bullet 1 (Han '{SLIP}')"]
    assert SLIP not in deck.deck.model_dump_json()
    assert not [f for f in deck.findings if f.rule == "other_script"]  # a later cycle has nothing to fix
    version = ArtefactVersion.objects.get(run=run)
    assert SLIP not in str(version.content["deck"]) and SLIP not in str(version.sections)
    client = Client()
    client.force_login(run.brief.owner)
    step = AgentStep.objects.get(run=run, key="deck")
    shown = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "Withheld by code, for words in another script than the brief's" in shown
