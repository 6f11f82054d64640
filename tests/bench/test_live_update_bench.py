"""Live updates under load: 100 signed-in browsers' sockets on one run's page, and the time from a step's
commit to each of them receiving the step's new card.

The sockets are served by the real web server (``agency.serve``, several processes: the sockets spread over
them; ``BENCH_SERVER=daphne`` for a single Daphne process). Each round changes one step's summary in a
transaction and publishes its card the way the pipeline does (``memos.pipeline.cards.publish_step``: after
commit, through the channel layer in Redis). Rounds are a second apart, so each event also pays the sockets'
access re-check (``memos.views.run_socket.RECHECK_S``), as a real run's events do: one batched check per
server process for all its sockets on the run (``memos.views.socket_access``). It prints p50, p95 and the
events that never arrived; it never asserts a timing.

``BENCH_CLIENTS``, ``BENCH_ROUNDS`` and ``BENCH_ROUND_GAP_S`` change the load (100, 20 and 1.0 by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from dataclasses import dataclass, field

import pytest
from django.db import connection, transaction
from websockets.asyncio.client import ClientConnection, connect

from memos.models import AgentStep
from memos.pipeline.cards import publish_step
from memos.services.accounts import Roles
from tests.bench.conftest import BenchReport
from tests.bench.live_desk import (
    CpuShare,
    Server,
    load_desk,
    percentile,
    postgres_pid,
    running_server,
    server_label,
    session_cookies,
    sockets_per_process,
)
from tests.memos.pipeline_support import person

pytestmark = [pytest.mark.bench, pytest.mark.django_db(transaction=True)]

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "100"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))
# A second apart, every event pays the sockets' access re-check; 0.2 s apart, one event in five does.
ROUND_GAP_S = float(os.environ.get("BENCH_ROUND_GAP_S", "1.0"))
ARRIVAL_TIMEOUT_S = 10.0


@dataclass
class Rounds:
    """When each round's step was committed, and when each client saw it (both ``time.perf_counter``)."""

    committed: dict[int, float] = field(default_factory=dict)
    arrived: dict[int, list[float]] = field(default_factory=dict)
    all_arrived: dict[int, asyncio.Event] = field(default_factory=dict)

    def expect(self, number: int) -> None:
        self.arrived[number] = []
        self.all_arrived[number] = asyncio.Event()

    def saw(self, number: int, at: float) -> None:
        if number not in self.arrived:
            return  # an earlier benchmark's card
        self.arrived[number].append(at)
        if len(self.arrived[number]) == CLIENTS:
            self.all_arrived[number].set()


def marker(number: int) -> str:
    return f"bench round {number:04d}"


def commit_round(step_pk: int, number: int, rounds: Rounds) -> None:
    """One step's change and its card, sent after commit as the pipeline sends it; the commit is timed."""
    with transaction.atomic():
        step = AgentStep.objects.select_related("run__brief__company").get(pk=step_pk)
        step.summary = marker(number)
        step.save(update_fields=["summary"])
        # Registered before publish_step's own callback, so it runs first: right after the commit.
        transaction.on_commit(lambda: rounds.committed.__setitem__(number, time.perf_counter()))
        publish_step(step)
    connection.close()  # this thread's; the test database is dropped at the end of the session


async def client(
    server: Server,
    path: str,
    cookie: str,
    step_pk: int,
    snapshot_size: int,
    ready: asyncio.Event,
    rounds: Rounds,
) -> None:
    host = server.url.removeprefix("http://")
    headers = {"Cookie": f"sessionid={cookie}"}
    async with connect(f"ws://{host}{path}", origin=server.url, additional_headers=headers) as socket:  # type: ignore[arg-type]
        for _ in range(snapshot_size):  # the run's status and every card, sent on connect
            await socket.recv()
        ready.set()
        await listen(socket, step_pk, rounds)


async def listen(socket: ClientConnection, step_pk: int, rounds: Rounds) -> None:
    target = f"step-{step_pk}"
    async for message in socket:
        at = time.perf_counter()
        event = json.loads(message)
        if event.get("target") != target:
            continue
        found = event["html"].split("bench round ", 1)
        if len(found) == 2 and found[1][:4].isdigit():
            rounds.saw(int(found[1][:4]), at)


async def measure(
    server: Server, run_id: str, step_pk: int, snapshot_size: int, cookies: list[str], database_pid: int
) -> dict[str, object]:
    rounds = Rounds()
    path = f"/ws/runs/{run_id}/"
    readies = [asyncio.Event() for _ in cookies]
    tasks = []
    for cookie, ready in zip(cookies, readies, strict=True):
        tasks.append(asyncio.create_task(client(server, path, cookie, step_pk, snapshot_size, ready, rounds)))
        await asyncio.sleep(0.01)  # browsers arrive over a second, not in one burst
    await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in readies)), timeout=120)
    spread = sockets_per_process(server.pid, int(server.url.rsplit(":", 1)[1]))

    with CpuShare({"server": server.pid, "postgres": database_pid}) as cpu:
        for number in range(ROUNDS):
            await asyncio.sleep(ROUND_GAP_S)
            rounds.expect(number)
            await asyncio.to_thread(commit_round, step_pk, number, rounds)
            with contextlib.suppress(TimeoutError):  # what did not arrive is counted as missing below
                await asyncio.wait_for(rounds.all_arrived[number].wait(), timeout=ARRIVAL_TIMEOUT_S)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    delays = [
        (at - rounds.committed[number]) * 1000
        for number, arrivals in rounds.arrived.items()
        for at in arrivals
        if number in rounds.committed
    ]
    expected = ROUNDS * len(cookies)
    return {
        "events": len(delays),
        "missing": expected - len(delays),
        "p50_ms": round(percentile(delays, 0.50), 1) if delays else None,
        "p95_ms": round(percentile(delays, 0.95), 1) if delays else None,
        "max_ms": round(max(delays), 1) if delays else None,
        "sockets_per_process": spread,
        "cpu": cpu.shares,
    }


def test_bench_live_updates_reach_every_socket(bench_report: BenchReport) -> None:
    desk = load_desk()
    # A hundred readers of the committee, a browser each: one user's hundred sockets would meet the desk's
    # own bound on a user's sockets (SOCKETS_PER_USER) and be closed.
    cookies = [session_cookies(person(f"member{n}", Roles.COMMITTEE), 1)[0] for n in range(CLIENTS)]
    snapshot_size = 1 + desk.run.steps.count()
    with running_server() as server:
        numbers = asyncio.run(
            measure(server, str(desk.run.pk), desk.memo.pk, snapshot_size, cookies, postgres_pid())
        )
    bench_report.add(
        f"live updates, {CLIENTS} sockets on one run, {ROUNDS} step commits {ROUND_GAP_S} s apart "
        f"({server_label()})",
        **numbers,
    )
