"""Seed 003 on the board's scores: three lenses, each in a judge thread of its own, never three clones of one
verdict. Each member's scores are asked through its own lens's prompt, and its scores after the debate are
asked with its own blind scores before it, never another member's."""

from __future__ import annotations

import pytest

from agents.agency.board import BOARD, MEMBERS
from memos.models import MoveScore, Run
from memos.pipeline import driver
from memos.pipeline.agency.debate import FIRST_LOOK
from memos.services.runs import create_brief
from tests.memos.agency.support import start_agency
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)


def _user_message(entry: dict[str, object]) -> str:
    body = entry["body"]
    assert isinstance(body, dict)
    return str(body["messages"][-1]["content"])


def test_each_member_scores_through_its_own_lens_in_its_own_thread() -> None:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question="Which strategic moves should the company make?")
    run = start_agency(brief, user, "quick", personas=("capital",))
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        scoring = [entry for entry in server.requests if entry["role"] == "scoring"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message

    by_prompt: dict[str, list[str]] = {}
    for entry in scoring:
        by_prompt.setdefault(str(entry["prompt_name"]), []).append(_user_message(entry))
    # Three lenses, three prompts: no member's scores are asked with another's questions.
    assert set(by_prompt) == {BOARD[m].score_prompt for m in MEMBERS}
    systems = {str(e["prompt_name"]): str(e["body"]["messages"][0]["content"]) for e in scoring}
    assert len(set(systems.values())) == 3
    for member in MEMBERS:
        assert BOARD[member].title in systems[BOARD[member].score_prompt]

    # Each lens is asked twice per move, in one thread: first blind, then after the debate with its own
    # blind scores before it.
    moves = run.moves.count()
    for member in MEMBERS:
        asked = by_prompt[BOARD[member].score_prompt]
        first = [text for text in asked if FIRST_LOOK in text]
        again = [text for text in asked if FIRST_LOOK not in text]
        assert len(first) == len(again) == moves, member
        blind = MoveScore.objects.filter(move__run=run, member=member, phase="blind")
        for row in blind:
            own = f"- impact: {row.card['impact']['score']} ({row.card['impact']['reason']})"
            assert any(own in text for text in again), member
