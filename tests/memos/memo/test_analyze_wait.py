"""``manage.py analyze ... --wait`` as someone types it in a shell: the production worker runs the run, the
command follows it and exits 0 when the memo is done, 1 with the run's reason when it failed (README,
Command line)."""

from __future__ import annotations

import subprocess
import sys

import django_rq
import pytest

from agents.llm.fakes.server import FakeLLMServer
from agents.memo.roster import DEFAULT_PROFILES
from memos.models import Run
from memos.pipeline.memo.evidence import evidence_for
from memos.pipeline.memo.rehearsal import rehearsal_script
from tests.conftest import ROOT
from tests.memos.crash_harness import running_desk
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 120
ANALYZE = [sys.executable, "manage.py", "analyze", "AAPL"]


def analyze_wait(env: dict[str, str], question: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ANALYZE, "--brief", question, "--profile", "quick", "--wait", "--timeout", str(WAIT_S)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S + 60,
        check=False,
    )


def test_analyze_wait_exits_0_when_the_memo_is_done_and_1_with_the_reason_when_the_run_failed() -> None:
    company = load_desk_data("AAPL")
    analyst("analyst")
    profile = DEFAULT_PROFILES["quick"]
    evidence = {name: evidence_for(company, name) for name in profile.roster}
    django_rq.get_queue("default").empty()  # type: ignore[no-untyped-call]  # no other test's job for this worker
    script = rehearsal_script(evidence, iterations=profile.iterations)  # answers for two runs
    with FakeLLMServer(script=script) as server, running_desk(server) as desk:
        desk.worker()
        done = analyze_wait(desk.env, "Is the margin story durable?")
        # The second run's synthesis answers never fit their schema, the re-ask included.
        for _ in range(4):
            server.inject("invalid_schema", prompt="synthesizer")
        failed = analyze_wait(desk.env, "Does the buyback outlast the next downturn?")
        logs = desk.log_tails()

    first, second = Run.objects.order_by("created_at")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{logs}"
    assert first.status == Run.Status.DONE
    assert f"/runs/{first.pk}/" in done.stdout and "memo done" in done.stdout

    assert failed.returncode == 1, f"{failed.stdout}\n{failed.stderr}\n{logs}"
    assert second.status == Run.Status.FAILED and "schema" in second.status_message.lower()
    assert f"/runs/{second.pk}/" in failed.stdout
    # The reason, as the run records it, on stderr.
    assert f"analyze: run failed: {second.status_message}" in failed.stderr
