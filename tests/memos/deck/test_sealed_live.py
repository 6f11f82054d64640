"""A deck run's live updates keep the judge's scores sealed (issue 31, 4): a committee member who has not
scored the deck gets its cards and its line without them, on (re)connect and as the pipeline sends them;
its analyst gets them whole."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils.html import escape

from memos.models import AgentStep, Run
from memos.pipeline.cards import SEALED_LINE, SEALED_SUMMARY, publish_step
from memos.services.accounts import Roles
from tests.memos.deck.test_calibration import finished_decks
from tests.memos.deck_support import fake_deck_llm
from tests.memos.pages.test_run_socket import communicator
from tests.memos.pipeline_support import analyst
from tests.memos.review.support import member

pytestmark = pytest.mark.django_db(transaction=True)

SCORE = re.compile(r"R[12] \d")


def _deck() -> tuple[Run, User, User]:
    owner = analyst("ana")
    with fake_deck_llm():
        (version,) = finished_decks(1, owner)
    return Run.objects.get(pk=version.run_id), owner, member("carol", Roles.COMMITTEE)


async def _snapshot(run: Run, user: User) -> list[dict[str, str]]:
    socket = communicator(run, user)
    connected, _ = await socket.connect()
    assert connected
    events = [await socket.receive_json_from(timeout=5)]
    while not await socket.receive_nothing(timeout=0.2):
        events.append(await socket.receive_json_from(timeout=5))
    lap = await sync_to_async(
        lambda: AgentStep.objects.select_related("run__brief__company").filter(run=run, kind="lap").first()
    )()
    assert lap is not None
    await sync_to_async(publish_step)(lap)  # a card sent live, as a running lap sends it
    events.append(await socket.receive_json_from(timeout=5))
    await socket.disconnect()
    return events


async def test_a_member_who_has_not_scored_the_deck_follows_its_run_without_the_judge_s_scores() -> None:
    run, owner, carol = await sync_to_async(_deck)()
    sealed = await _snapshot(run, carol)
    html = " ".join(event["html"] for event in sealed)
    assert not SCORE.search(html)
    assert escape(SEALED_SUMMARY) in html and escape(SEALED_LINE) in sealed[0]["html"]
    whole = await _snapshot(run, owner)
    assert SCORE.search(" ".join(event["html"] for event in whole))
    assert escape(SEALED_SUMMARY) not in " ".join(event["html"] for event in whole)
