"""The web server scripts/run.sh starts (``python -m agency.serve``): pages from several processes, and a run
page's sockets, wherever they landed, receiving a step's card sent from another process as RQ jobs send it."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from websockets.asyncio.client import connect

from memos.models import AgentStep, Run
from memos.pipeline.cards import publish_step
from tests.bench.live_desk import Server, running_server, session_cookies
from tests.memos.factories import run_for

SOCKETS = 8
WAIT_S = 10.0


def change_step(step_pk: int, summary: str) -> None:
    """In a thread of its own, as a worker would: the step's change, and its card sent after commit."""
    try:
        with transaction.atomic():
            step = AgentStep.objects.select_related("run__brief__company").get(pk=step_pk)
            step.summary = summary
            step.status = AgentStep.Status.DONE
            step.save(update_fields=["summary", "status"])
            publish_step(step)
    finally:
        connection.close()  # this thread's own


async def sockets_see_the_card(server: Server, run: Run, step_pk: int, cookies: list[str]) -> list[str]:
    """What each socket received for the step after the change (its card's HTML)."""
    url = server.url.replace("http://", "ws://") + f"/ws/runs/{run.pk}/"
    async with asyncio.timeout(WAIT_S * 3):
        sockets = [
            await connect(url, origin=server.url, additional_headers={"Cookie": f"sessionid={cookie}"})  # type: ignore[arg-type]
            for cookie in cookies
        ]
        try:
            for socket in sockets:  # the run's status and its one card, on connect
                for _ in range(2):
                    await socket.recv()
            await asyncio.to_thread(change_step, step_pk, "written in another process")
            cards = []
            for socket in sockets:
                event = json.loads(await asyncio.wait_for(socket.recv(), WAIT_S))
                cards.append(event["html"] if event["target"] == f"step-{step_pk}" else "")
            return cards
        finally:
            for socket in sockets:
                await socket.close()


@pytest.mark.django_db(transaction=True)
def test_pages_and_live_cards_come_from_every_web_process(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEB_WORKERS", "2")
    monkeypatch.delenv("BENCH_SERVER", raising=False)
    run = run_for(alice)
    step = AgentStep.objects.create(run=run, stage="memo", key="memo", kind="memo", title="Investment memo")
    cookies = session_cookies(alice, SOCKETS)
    with running_server() as server:
        for _ in range(4):  # answered by whichever process takes the connection
            request = urllib.request.Request(server.url + "/", headers={"Cookie": f"sessionid={cookies[0]}"})
            with urllib.request.urlopen(request, timeout=WAIT_S) as page:  # loopback only
                assert page.status == 200 and b"Fact store" in page.read()
        cards = asyncio.run(sockets_see_the_card(server, run, step.pk, cookies))
    assert len(cards) == SOCKETS
    assert all("written in another process" in card and 'data-status="done"' in card for card in cards)
