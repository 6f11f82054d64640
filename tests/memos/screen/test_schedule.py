"""The weekly screen on its schedule: after Friday's close by default, once per slot, never a stale week
unasked, and nothing when it is off."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from agents.weekly import ScheduleError, last_slot, parse_schedule
from memos.models import Run
from memos.pipeline.screen.desk.schedule import weekly_screen
from tests.memos.pipeline_support import analyst
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

# A Friday after 21:30 UTC, in the past: a run started now was created after its slot.
FRIDAY_EVENING = datetime(2026, 11, 20, 21, 45, tzinfo=UTC)


def test_the_schedule_reads_a_day_and_a_time_or_off() -> None:
    assert parse_schedule("fri 21:30") == (4, time(21, 30))
    assert parse_schedule("off") is None
    for bad in ("friday 21:30", "fri 25:00", "fri", "xyz 10:00"):
        with pytest.raises(ScheduleError):
            parse_schedule(bad)
    assert last_slot(FRIDAY_EVENING, 4, time(21, 30)) == datetime(2026, 11, 20, 21, 30, tzinfo=UTC)
    before = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)
    assert last_slot(before, 4, time(21, 30)) == datetime(2026, 11, 13, 21, 30, tzinfo=UTC)


@changed("memos.pipeline.screen", schedule="fri 21:30")  # the desk's default; off under test
def test_a_slot_starts_one_screen_and_a_stale_slot_none() -> None:
    analyst("analyst")
    said = weekly_screen(now=FRIDAY_EVENING, enqueue=False)
    assert said.startswith("Started the weekly screen")
    run = Run.objects.get()
    assert run.workflow == "screen" and run.brief.symbols
    assert run.scheduled  # the desk's own work: after people's runs, on the queue and the model's slots
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    assert weekly_screen(now=FRIDAY_EVENING, enqueue=False) == ""  # this slot is done
    assert Run.objects.count() == 1
    monday = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    assert weekly_screen(now=monday, enqueue=False) == ""  # last Friday's slot is too old to catch up
    with changed("memos.pipeline.screen", schedule="off"):
        assert weekly_screen(now=datetime(2026, 12, 4, 22, 0, tzinfo=UTC), enqueue=False) == ""
    assert Run.objects.count() == 1


def test_a_schedule_without_its_analyst_says_why() -> None:
    with changed("memos.pipeline.screen", schedule="fri 21:30", schedule_owner="nobody"):
        assert "not an active analyst" in weekly_screen(now=FRIDAY_EVENING, enqueue=False)
    assert not Run.objects.exists()
