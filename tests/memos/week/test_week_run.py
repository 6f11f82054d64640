"""The desk's week end to end on the fake OpenAI-compatible server: the screen, the names code picks and the
question it writes for each, a quick memo on each as the week's scheduled parts, the digest frozen and
announced once per person, a second week that compares each memo with the week before, a week killed in
the middle that resumes without a second memo, and ``manage.py week --json``."""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from agents.screen.outputs import ScreenResult
from agents.week.outputs import DigestOutput, Part
from memos.models import ArtefactVersion, LLMCall, Notice, Run
from memos.pipeline import driver
from memos.pipeline.week import parts
from memos.pipeline.week.desk.start import start_week
from memos.services.notifications import deliver_pending
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, person
from tests.memos.workflow_settings import changed

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.django_db(transaction=True)

WATCHLIST = ["AAPL", "XOM", "CVX", "DUK", "NEE", "JPM", "BAC"]
AS_OF = date(2015, 8, 21)


@pytest.fixture
def desk() -> None:
    analyst("analyst")
    person("committee", "committee")
    person("reviewer", "reviewer")
    load_desk_data("AAPL")


def _week(max_names: int = 2) -> Run:
    return start_week(as_of=AS_OF, max_names=max_names, symbols=WATCHLIST, enqueue=False)


def _run(week: Run) -> Run:
    with fake_llm():
        driver.run_inline(str(week.pk))
    week.refresh_from_db()
    return week


def _digest(week: Run) -> DigestOutput:
    return DigestOutput.model_validate(ArtefactVersion.objects.get(run=week).content)


def _expected_names(screen: Run, bound: int) -> list[str]:
    """The seed's order, from the frozen screen: REDs, then YELLOWs, each by |alpha| from the largest."""
    result = ScreenResult.model_validate(screen.versions.get().content["result"])
    alpha = {
        p["symbol"]: p["figures"].get("alpha_1w")
        for p in screen.versions.get().content["quant"]["quant"]["symbols"]
    }
    flagged = [a for a in result.assessments if a.flag in ("RED", "YELLOW")]
    flagged.sort(key=lambda a: (a.flag != "RED", -abs(alpha[a.symbol] or 0.0), a.symbol))
    return [a.symbol for a in flagged[:bound]]


def test_a_week_looks_closer_at_the_names_code_picks_and_freezes_one_digest(desk: None) -> None:
    week = _run(_week())
    assert week.status == Run.Status.DONE, week.status_message
    assert week.scheduled
    screen = Run.objects.get(part_of=week, workflow="screen")
    memos = list(Run.objects.filter(part_of=week, workflow="memo").order_by("created_at"))
    # Every part is the desk's scheduled work, the week's own, in the week owner's name.
    assert all(run.scheduled and run.brief.owner.username == "analyst" for run in [screen, *memos])
    expected = _expected_names(screen, 2)
    by_symbol = {run.brief.company.ticker: run for run in memos}  # type: ignore[union-attr]
    assert set(by_symbol) == set(expected)
    digest = _digest(week)
    assert [look.symbol for look in digest.looks] == expected
    assert digest.names is not None and [pick.name.symbol for pick in digest.names.chosen] == expected
    for pick in digest.names.chosen:
        run = by_symbol[pick.name.symbol]
        # Code wrote each memo's question from its flag; the memo carries it beside its brief.
        assert run.config["focus"] == pick.question
        assert pick.name.flag in pick.question and pick.name.symbol in pick.question
    flagged = [n.symbol for n in digest.screen.flagged]
    assert {s.symbol for s in digest.names.skipped} == set(flagged) - set(expected)
    assert all("bound of 2" in s.reason for s in digest.names.skipped)
    assert digest.screen.market and digest.screen.as_of == AS_OF
    for look in digest.looks:
        assert look.recommendation in ("BUY", "HOLD", "SELL", "WATCH")
        assert look.part is not None and look.part.version_id is not None and look.part.calls > 0
        assert look.previous == ""  # a first memo
    assert digest.llm_calls == LLMCall.objects.filter(run__part_of=week).count() > 0
    assert digest.tokens == sum(run.tokens_spent for run in Run.objects.filter(part_of=week)) > 0
    assert digest.unfinished == []

    # One notice per committee member and reviewer, for the digest; none for its parts.
    notices = list(Notice.objects.values_list("recipient__username", "version__kind"))
    assert sorted(notices) == [("committee", "week"), ("reviewer", "week")]
    deliver_pending()
    bodies = {message.to[0]: message.body for message in mail.outbox}
    body = bodies["committee@desk.example"]
    assert "The market's week" in body and digest.screen.market in body
    for look in digest.looks:
        assert f"{look.symbol}: {look.recommendation}" in body


def test_a_second_week_compares_each_memo_with_the_week_before(desk: None) -> None:
    first = _digest(_run(_week()))
    second_run = _run(_week())
    second = _digest(second_run)
    assert [look.symbol for look in second.looks] == [look.symbol for look in first.looks]
    for look in second.looks:
        assert look.previous == "v1"  # that company's memo of the week before: drift is read against it
        assert look.part is not None and look.part.version_label == "memo v2"
    # Each week's screen is the next version of one screen line, and each memo of its company's line.
    assert second.screen.part is not None and second.screen.part.version_label == "screen v2"
    assert second_run.versions.get().number == 2


class Killed(BaseException):
    """The worker dies (a kill -9 seen from inside): nothing of the stage catches it."""


def test_a_week_killed_after_a_memo_finished_resumes_without_a_second_memo(
    desk: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    week = _week()
    read = parts.read
    died: list[str] = []

    def dies_once(run: Run) -> Part:
        if run.workflow == "memo" and not died:
            died.append(str(run.pk))
            raise Killed
        return read(run)

    monkeypatch.setattr(parts, "read", dies_once)
    with fake_llm(), pytest.raises(Killed):
        driver.run_inline(str(week.pk))
    monkeypatch.setattr(parts, "read", read)
    week.refresh_from_db()
    assert week.is_active and week.stage == "looks"
    memos_before = set(Run.objects.filter(part_of=week, workflow="memo").values_list("pk", flat=True))
    resumed_at = timezone.now()

    with fake_llm():
        driver.run_inline(str(week.pk))  # the watchdog's resumption, in this process
    week.refresh_from_db()
    assert week.status == Run.Status.DONE, week.status_message
    # The same memos: none started twice, and the one that had finished was not asked again.
    assert set(Run.objects.filter(part_of=week, workflow="memo").values_list("pk", flat=True)) == memos_before
    finished = Run.objects.get(pk=died[0])
    assert finished.versions.count() == 1
    assert finished.finished_at is not None
    assert not LLMCall.objects.filter(run=finished, created_at__gt=finished.finished_at).exists()
    # What was paid before the kill stays paid once, and the resumed week asked only the other memo's calls
    # (counted by time, not by the finished memo's end: the two memos run side by side, and the other's last
    # call may land after the first memo finished and before the kill).
    other = Run.objects.filter(part_of=week, workflow="memo").exclude(pk=finished.pk).get()
    answered = LLMCall.objects.filter(run__part_of=week, outcome=LLMCall.Outcome.OK)
    assert answered.count() == answered.values("request_hash").distinct().count()
    assert not answered.filter(created_at__gt=resumed_at).exclude(run=other).exists()
    assert {look.symbol for look in _digest(week).looks} == {
        run.brief.company.ticker  # type: ignore[union-attr]
        for run in Run.objects.filter(part_of=week, workflow="memo")
    }


def test_week_json_names_the_screen_the_names_their_memos_and_the_digest(desk: None, tmp_path: Path) -> None:
    # The desk's strategy on a small watchlist of its own: what the week screens when nobody names one.
    strategy = tmp_path / "strategy.yaml"
    demo = (ROOT / "data" / "screen" / "strategy.yaml").read_text(encoding="utf-8")
    strategy.write_text(
        demo.replace("  symbols: []", f"  symbols: [{', '.join(WATCHLIST)}]"), encoding="utf-8"
    )
    out = StringIO()
    with (
        changed("memos.pipeline.week", max_names=1),
        changed("memos.pipeline.screen", strategy=strategy),
        fake_llm(),
    ):
        call_command("week", "--inline", "--json", "--as-of", "2015-08-21", stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue())
    assert set(report) >= {
        "as_of",
        "status",
        "screen",
        "names",
        "skipped",
        "digest",
        "unfinished",
        "llm_calls",
        "tokens",
        "wall_s",
    }
    assert report["as_of"] == "2015-08-21" and report["status"] == "done"
    assert set(report["screen"]["flags"]) == {"RED", "YELLOW", "GREEN"}
    assert report["screen"]["version"].endswith(f"/versions/{ArtefactVersion.objects.get(kind='screen').pk}/")
    [name] = report["names"]
    assert set(name) >= {"symbol", "flag", "alpha_1w", "reason", "memo"}
    assert isinstance(name["alpha_1w"], float)
    assert set(name["memo"]) >= {"version", "recommendation", "drift"}
    assert report["digest"].endswith(f"/versions/{ArtefactVersion.objects.get(kind='week').pk}/")
    assert report["llm_calls"] > 0 and report["tokens"] > 0
    assert all(set(s) == {"symbol", "reason"} for s in report["skipped"])


def test_week_refuses_a_malformed_date_and_changes_nothing(desk: None) -> None:
    err = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("week", "--as-of", "last friday", stderr=err)
    assert exited.value.code == 2 and "--as-of must be a date" in err.getvalue()
    assert not Run.objects.exists()


def test_every_run_of_the_week_is_charged_to_the_weeks_budget(desk: None) -> None:
    # A week whose budget the screen alone outspends: the screen stops saying so, no memo starts, and the
    # digest says what did not finish.
    with changed("memos.pipeline.week", budget_tokens=3_000):
        week = _run(_week())
    assert week.budget_tokens == 3_000
    screen = Run.objects.get(part_of=week, workflow="screen")
    assert screen.budget_tokens is not None and screen.budget_tokens <= 3_000
    assert screen.status == Run.Status.FAILED and "budget" in screen.status_message
    assert not Run.objects.filter(part_of=week, workflow="memo").exists()
    digest = _digest(week)
    assert week.status == Run.Status.NEEDS_REVIEW
    assert [u.what for u in digest.unfinished] == ["the week's screen"]
    assert "budget" in digest.unfinished[0].reason


def test_the_weeks_page_counts_what_its_parts_spent_while_they_run(desk: None) -> None:
    # A part's tokens reach the week's own count only through its parts: its page adds them as they go, so
    # a running week whose screen has spent 22,000 tokens does not read "0 tokens of its budget".
    week = _week()
    screen = Run.objects.create(
        brief=week.brief,
        workflow="screen",
        status=Run.Status.DONE,
        created_by=week.created_by,
        part_of=week,
        tokens_spent=22_345,
    )
    Run.objects.filter(pk=week.pk).update(status=Run.Status.RUNNING)
    client = Client()
    client.force_login(week.created_by)
    page = client.get(f"/runs/{week.pk}/").content.decode()
    assert "22,345 tokens (its parts' included) of its 2,000,000-token budget" in page
    # A run with no parts reads its own count, unqualified.
    own = client.get(f"/runs/{screen.pk}/").content.decode()
    assert "22,345 tokens of its" in own or "22,345 tokens (no budget)" in own
