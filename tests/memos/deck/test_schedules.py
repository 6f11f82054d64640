"""Refinement cycles on a schedule: a deck brief refines once or twice a day at its times of day (UTC), the
scheduler's check starts each due cycle once and records a refusal, and only the brief's analyst or an
admin sets the schedule. The clock is injected (``now``); nothing sleeps."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, time, timedelta
from io import StringIO

import django_rq
import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.template.loader import render_to_string
from django.test import Client, RequestFactory
from django.utils import timezone
from rq import SimpleWorker

from memos.management.commands.refine_cycles import cron_scheduler
from memos.models import ArtefactVersion, Brief, RefineSchedule, Run
from memos.pipeline.deck.desk.schedule import run_due, schedule_panel, set_schedule
from memos.pipeline.workflows import Artefact
from memos.services.errors import ServiceError
from memos.services.versions import freeze
from memos.views.schedules import local_path
from tests.memos.factories import company
from tests.memos.pipeline_support import person

pytestmark = pytest.mark.django_db

# A Tuesday morning, before the default 06:00 and 18:00 times of day.
MORNING = datetime(2026, 11, 17, 5, 0, tzinfo=UTC)


def at(hour: int, minute: int = 0, *, days: int = 0) -> datetime:
    return MORNING.replace(hour=hour, minute=minute) + timedelta(days=days)


def deck_brief(owner: User, ticker: str = "AAPL", *, kind: str = "deck") -> Brief:
    """A brief with one finished run that froze a version of ``kind`` (a deck by default)."""
    brief = Brief.objects.create(
        company=company(ticker, f"{ticker} Inc.", None),
        question=f"Should the board keep {ticker}?",
        owner=owner,
    )
    run = Run.objects.create(
        brief=brief, created_by=owner, workflow=kind, profile="quick", status=Run.Status.DONE
    )
    with transaction.atomic():
        freeze(
            run=run,
            artefact=Artefact(
                kind=kind,
                title=f"{ticker} {kind}",
                content={"title": f"{ticker} {kind}"},
                sections={"Thesis": "Keep it."},
                evaluated=True,
                score=3.9,
                score_label="R2",
            ),
        )
    return brief


@pytest.fixture
def brief(alice: User) -> Brief:
    return deck_brief(alice)


def scheduled(brief: Brief, cycles: int = 2, *, now: datetime = MORNING) -> RefineSchedule:
    return set_schedule(brief=brief, user=brief.owner, cycles_per_day=cycles, now=now)


def cycles_of(brief: Brief) -> list[Run]:
    return list(Run.objects.filter(brief=brief, workflow="deck").exclude(status=Run.Status.DONE))


# --- the schedule's rules


def test_the_database_refuses_three_cycles_a_day(alice: User, brief: Brief) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        RefineSchedule.objects.create(brief=brief, cycles_per_day=3, set_by=alice, set_at=MORNING)
    assert not RefineSchedule.objects.exists()


def test_the_database_refuses_two_cycles_at_the_same_time_of_day(alice: User, brief: Brief) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        RefineSchedule.objects.create(
            brief=brief,
            cycles_per_day=2,
            first_slot=time(9),
            second_slot=time(9),
            set_by=alice,
            set_at=MORNING,
        )


def test_setting_three_cycles_a_day_is_refused_with_the_cap(brief: Brief) -> None:
    with pytest.raises(ServiceError, match="at most 2 times a day"):
        scheduled(brief, 3)
    assert not RefineSchedule.objects.exists()


def test_only_a_brief_with_a_deck_line_gets_a_schedule(alice: User) -> None:
    memo_brief = deck_brief(alice, "MSFT", kind="memo")
    with pytest.raises(ServiceError, match="has no deck version"):
        scheduled(memo_brief)


def test_the_defaults_are_06_00_and_18_00_utc_and_the_next_cycle_is_the_next_of_them(brief: Brief) -> None:
    schedule = scheduled(brief, 2, now=at(10))
    assert schedule.slots == [time(6), time(18)]
    assert schedule.next_due(at(10)) == at(18)
    assert schedule.next_due(at(19)) == at(18)  # passed and not yet acted on: the next check starts it
    once = scheduled(brief, 1, now=at(19))
    assert once.next_due(at(19)) == at(6, days=1)


# --- the scheduler's check


def test_a_new_schedule_starts_nothing_until_its_next_time_of_day_then_one_cycle(brief: Brief) -> None:
    scheduled(brief, 2, now=at(10))

    assert run_due(now=at(10, 5)) == []
    assert cycles_of(brief) == []

    [outcome] = run_due(now=at(18, 2))
    [cycle] = cycles_of(brief)
    assert outcome.started
    assert outcome.run_id == cycle.pk
    assert cycle.status == Run.Status.QUEUED
    assert cycle.scheduled  # the schedule's cycle goes after people's runs
    assert cycle.config["base_version"] == ArtefactVersion.objects.get(brief=brief).pk
    schedule = RefineSchedule.objects.get(brief=brief)
    assert schedule.last_run == cycle
    assert schedule.last_cycle_at == at(18, 2)
    assert schedule.last_outcome.startswith("Started cycle run")

    # Later checks on the same time of day do nothing, however many there are.
    assert run_due(now=at(18, 2)) == []
    assert run_due(now=at(18, 7)) == []
    assert len(cycles_of(brief)) == 1


def test_run_due_starts_one_cycle_per_due_schedule_and_none_for_the_others(alice: User) -> None:
    due_a, due_b = deck_brief(alice, "AAPL"), deck_brief(alice, "MSFT")
    switched_off, set_late = deck_brief(alice, "NVDA"), deck_brief(alice, "AMZN")
    scheduled(due_a, 1)
    scheduled(due_b, 2)
    scheduled(switched_off, 0)
    scheduled(set_late, 1, now=at(6, 1))  # set just after today's 06:00: its first cycle is tomorrow's

    outcomes = run_due(now=at(6, 3))

    assert sorted(o.brief_id for o in outcomes) == sorted([due_a.pk, due_b.pk])
    assert all(o.started for o in outcomes)
    assert [len(cycles_of(b)) for b in (due_a, due_b, switched_off, set_late)] == [1, 1, 0, 0]


def test_a_check_while_a_cycle_runs_records_the_refusal(brief: Brief) -> None:
    scheduled(brief, 2)
    [first] = run_due(now=at(6, 1))  # its run is still queued at 18:00

    [second] = run_due(now=at(18, 1))

    assert not second.started
    assert "already queued or running" in second.message
    schedule = RefineSchedule.objects.get(brief=brief)
    assert schedule.last_outcome.startswith("Not started:")
    assert "already queued or running" in schedule.last_outcome
    assert schedule.last_outcome_at == at(18, 1)
    assert schedule.last_run_id == first.run_id  # the cycle that runs, not the refused one
    assert len(cycles_of(brief)) == 1
    assert run_due(now=at(18, 6)) == []  # the refused time of day is not tried again


def test_the_next_time_of_day_after_a_finished_cycle_starts_another(brief: Brief) -> None:
    scheduled(brief, 2)
    [first] = run_due(now=at(6, 1))
    Run.objects.filter(pk=str(first.run_id)).update(status=Run.Status.NEEDS_REVIEW)

    [second] = run_due(now=at(18, 1))

    assert second.started
    assert second.run_id != first.run_id


def test_a_check_after_a_long_outage_starts_one_catch_up_cycle(brief: Brief) -> None:
    scheduled(brief, 2)
    assert len(run_due(now=at(9, days=3))) == 1
    assert run_due(now=at(9, 5, days=3)) == []


def test_the_command_checks_once_and_says_what_it_did(brief: Brief) -> None:
    now = timezone.now()
    scheduled(brief, 1, now=now - timedelta(days=2))
    out = call_command_output("refine_cycles", "--once")
    assert "Started cycle run" in out
    assert f"brief {brief.pk}" in out
    assert "no refinement cycle is due" in call_command_output("refine_cycles", "--once")


def call_command_output(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_rq_cron_queues_the_check_and_a_worker_running_it_starts_the_due_cycle(
    brief: Brief, redis_url: str
) -> None:
    scheduled(brief, 1, now=timezone.now() - timedelta(days=2))
    queue = django_rq.get_queue("default")
    queue.empty()  # type: ignore[no-untyped-call]  # rq leaves Queue.empty unannotated
    scheduler = cron_scheduler(every=60)

    [cron_job] = scheduler.enqueue_jobs()

    assert cron_job.func_name == "memos.services.scheduler.tick"
    [job] = queue.get_jobs()
    assert job.ttl == 60  # a check the busy worker could not reach in time is dropped, not piled up
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert job.get_status() == "finished", job.latest_result()
    [line] = job.return_value(refresh=True) or []
    assert "Started cycle run" in line
    assert len(cycles_of(brief)) == 1
    assert scheduler.enqueue_jobs() == []  # the next tick waits for its interval


# --- two checks at once


@pytest.mark.django_db(transaction=True)
def test_a_check_leaves_a_schedule_another_check_holds_and_it_starts_one_cycle_in_all(alice: User) -> None:
    brief = deck_brief(alice)
    schedule = scheduled(brief, 1)
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def other_check() -> None:
        # Another check, in its own connection, in the middle of acting on the schedule.
        try:
            with transaction.atomic():
                RefineSchedule.objects.select_for_update().get(pk=schedule.pk)
                held.set()
                release.wait(10)
        finally:
            connection.close()
            done.set()

    thread = threading.Thread(target=other_check)
    thread.start()
    try:
        assert held.wait(10)
        assert run_due(now=at(6, 1), enqueue=False) == []  # skipped, not waited for
        assert cycles_of(brief) == []
    finally:
        release.set()
        thread.join(10)
    assert done.is_set()

    assert len(run_due(now=at(6, 1), enqueue=False)) == 1
    assert run_due(now=at(6, 1), enqueue=False) == []
    assert len(cycles_of(brief)) == 1


@pytest.mark.django_db(transaction=True)
def test_two_checks_racing_start_one_cycle_and_record_no_refusal(alice: User) -> None:
    brief = deck_brief(alice)
    scheduled(brief, 1)
    start = threading.Barrier(2)
    outcomes: list[list[object]] = []

    def check() -> None:
        try:
            start.wait(10)
            outcomes.append(list(run_due(now=at(6, 1), enqueue=False)))
        finally:
            connection.close()

    threads = [threading.Thread(target=check) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(len(found) for found in outcomes) == [0, 1]
    assert len(cycles_of(brief)) == 1
    assert RefineSchedule.objects.get(brief=brief).last_outcome.startswith("Started cycle run")


# --- the form on the deck's page


def post_schedule(client: Client, brief: Brief, **data: str) -> tuple[int, str]:
    response = client.post(f"/briefs/{brief.pk}/schedule/", data)
    return response.status_code, response.get("Location", "")


def signed_in(user: User, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def test_the_owner_sets_twice_a_day_and_goes_back_to_the_page_they_came_from(
    alice: User, brief: Brief
) -> None:
    version = ArtefactVersion.objects.get(brief=brief)
    status, location = post_schedule(
        signed_in(alice),
        brief,
        cycles="2",
        first_slot="07:30",
        second_slot="19:00",
        next=f"/versions/{version.pk}/",
    )
    assert (status, location) == (302, f"/versions/{version.pk}/")
    schedule = RefineSchedule.objects.get(brief=brief)
    assert (schedule.enabled, schedule.cycles_per_day) == (True, 2)
    assert schedule.slots == [time(7, 30), time(19)]
    assert schedule.set_by == alice

    assert post_schedule(signed_in(alice), brief, cycles="0", first_slot="07:30")[0] == 302
    assert not RefineSchedule.objects.get(brief=brief).enabled


@pytest.mark.parametrize(
    "target", ["https://evil.example/", "//evil.example/", "/\\evil.example/", "javascript:alert(1)", ""]
)
def test_a_next_that_is_not_a_local_path_sends_the_owner_to_the_version_instead(
    alice: User, brief: Brief, target: str
) -> None:
    version = ArtefactVersion.objects.get(brief=brief)
    status, location = post_schedule(signed_in(alice), brief, cycles="1", next=target)
    assert (status, location) == (302, f"/versions/{version.pk}/")
    assert local_path(target) is None


def test_three_a_day_from_the_form_is_refused_on_the_page_and_changes_nothing(
    alice: User, brief: Brief
) -> None:
    response = signed_in(alice).post(f"/briefs/{brief.pk}/schedule/", {"cycles": "3"})
    assert response.status_code == 409
    assert "The schedule was not changed" in response.content.decode()
    assert not RefineSchedule.objects.exists()


def test_two_cycles_at_one_time_of_day_are_refused_with_why(alice: User, brief: Brief) -> None:
    response = signed_in(alice).post(
        f"/briefs/{brief.pk}/schedule/", {"cycles": "2", "first_slot": "09:00", "second_slot": "09:00"}
    )
    assert response.status_code == 409
    assert "two different times of day" in response.content.decode()
    assert not RefineSchedule.objects.exists()


def test_an_admin_may_set_the_schedule(brief: Brief, admin_user: User) -> None:
    assert post_schedule(signed_in(admin_user), brief, cycles="1")[0] == 302
    assert RefineSchedule.objects.get(brief=brief).set_by == admin_user


def test_another_analyst_gets_a_404_and_a_committee_member_a_403(brief: Brief, bob: User) -> None:
    dave = person("dave", "analyst")
    assert post_schedule(signed_in(dave), brief, cycles="2")[0] == 404
    assert post_schedule(signed_in(bob), brief, cycles="2")[0] == 403
    assert not RefineSchedule.objects.exists()


def test_an_executive_never_sets_it_even_on_a_published_deck(brief: Brief) -> None:
    erin = person("erin", "executive")
    assert post_schedule(signed_in(erin), brief, cycles="2")[0] == 404  # not published: not theirs to see
    ArtefactVersion.objects.filter(brief=brief).update(status=ArtefactVersion.Status.APPROVED)
    ArtefactVersion.objects.filter(brief=brief).update(
        status=ArtefactVersion.Status.PUBLISHED, published_at=timezone.now()
    )
    assert post_schedule(signed_in(erin), brief, cycles="2")[0] == 403
    assert not RefineSchedule.objects.exists()


def test_a_post_without_the_csrf_token_is_refused(alice: User, brief: Brief) -> None:
    assert post_schedule(signed_in(alice, csrf=True), brief, cycles="2")[0] == 403
    assert not RefineSchedule.objects.exists()


def test_a_get_is_not_allowed(alice: User, brief: Brief) -> None:
    assert signed_in(alice).get(f"/briefs/{brief.pk}/schedule/").status_code == 405


def panel_html(user: User, brief: Brief, *, now: datetime) -> str:
    request = RequestFactory().get(f"/versions/{ArtefactVersion.objects.get(brief=brief).pk}/")
    request.user = user
    context = {"brief": brief, "schedule": schedule_panel(user, brief, now=now)}
    return render_to_string("memos/decks/_schedule.html", context, request=request)


def test_the_panel_shows_the_cadence_the_next_cycle_and_the_form_to_the_owner(
    alice: User, brief: Brief
) -> None:
    scheduled(brief, 2, now=at(10))
    html = panel_html(alice, brief, now=at(10))
    assert "Twice a day, at 06:00 and 18:00 UTC" in html
    assert "Next cycle: 2026-11-17 18:00 UTC." in html
    assert 'id="schedule-form"' in html
    assert 'value="2" required checked' in html
    assert 'name="next" value="/versions/' in html


def test_the_panel_shows_the_last_refusal_to_a_reader_without_the_form(brief: Brief, bob: User) -> None:
    scheduled(brief, 2)
    run_due(now=at(6, 1))
    run_due(now=at(18, 1))
    html = panel_html(bob, brief, now=at(18, 2))
    assert "Not started:" in html
    assert "Next cycle: 2026-11-18 06:00 UTC." in html
    assert "schedule-form" not in html
    assert "Open the run" in html  # the committee reads runs


def test_the_panel_says_off_and_offers_the_form_before_anything_is_set(alice: User, brief: Brief) -> None:
    html = panel_html(alice, brief, now=at(10))
    assert "Off: this deck is refined only when someone starts a cycle." in html
    assert 'value="0" required checked' in html


def test_no_panel_for_a_brief_that_is_not_a_deck(alice: User) -> None:
    assert schedule_panel(alice, deck_brief(alice, "MSFT", kind="memo")) is None


# --- the admin


def test_the_admin_lists_schedules_and_switches_them_off(brief: Brief, admin_user: User) -> None:
    scheduled(brief, 2)
    run_due(now=at(6, 1))
    client = signed_in(admin_user)

    page = client.get("/admin/memos/refineschedule/").content.decode()

    assert "AAPL: Should the board keep AAPL?" in page
    assert "twice a day at 06:00 and 18:00 UTC" in page
    assert "Started cycle run" in page
    schedule = RefineSchedule.objects.get(brief=brief)
    response = client.post(
        "/admin/memos/refineschedule/",
        {"action": "switch_off", "_selected_action": [schedule.pk]},
        follow=True,
    )
    assert "Switched off 1 schedule." in response.content.decode()
    assert not RefineSchedule.objects.get(brief=brief).enabled
    assert run_due(now=at(18, 1)) == []


def test_the_admin_page_is_for_superusers_only_not_staff_with_every_permission(alice: User) -> None:
    assert signed_in(alice).get("/admin/memos/refineschedule/").status_code == 302
    dora = User.objects.create_user(username="dora", password="dora-secret-pass", is_staff=True)
    dora.user_permissions.set(Permission.objects.filter(content_type__app_label="memos"))
    assert signed_in(dora).get("/admin/memos/refineschedule/").status_code == 403


# --- runs the system starts: only for an active analyst; an admin's switch-off holds


@pytest.mark.parametrize("how", ["no longer in the analyst group", "deactivated"])
def test_no_cycle_starts_for_an_analyst_who_left_and_the_schedule_says_why(
    alice: User, brief: Brief, bob: User, how: str
) -> None:
    scheduled(brief, 1)
    if how == "deactivated":
        alice.is_active = False
        alice.save(update_fields=["is_active"])
    else:
        alice.groups.clear()
    (outcome,) = run_due(now=at(6, 5), enqueue=False)
    assert not outcome.started
    assert "alice is no longer an active analyst" in outcome.message
    assert cycles_of(brief) == []
    schedule = RefineSchedule.objects.get(brief=brief)
    assert schedule.last_outcome == outcome.message and schedule.last_run is None
    assert "alice is no longer an active analyst" in panel_html(bob, brief, now=at(6, 6))


def test_an_admins_switch_off_holds_against_the_analyst_and_the_scheduler(
    alice: User, brief: Brief, admin_user: User
) -> None:
    scheduled(brief, 2)
    set_schedule(brief=brief, user=admin_user, cycles_per_day=0, now=at(5, 30))
    with pytest.raises(ServiceError, match="only an admin switches it back on"):
        set_schedule(brief=brief, user=alice, cycles_per_day=2, now=at(5, 40))
    response = signed_in(alice).post(f"/briefs/{brief.pk}/schedule/", {"cycles": "1"})
    assert response.status_code == 409 and "only an admin switches it back on" in response.content.decode()
    schedule = RefineSchedule.objects.get(brief=brief)
    assert (schedule.enabled, schedule.held_off_by_admin, schedule.set_by) == (False, True, admin_user)
    assert run_due(now=at(6, 5)) == [] and run_due(now=at(18, 5, days=3)) == []
    assert cycles_of(brief) == []
    html = panel_html(alice, brief, now=at(10))
    assert "Switched off by an admin" in html and "schedule-form" not in html
    # The admin switches it back on; from then on its analyst sets it again.
    set_schedule(brief=brief, user=admin_user, cycles_per_day=1, now=at(7))
    set_schedule(brief=brief, user=alice, cycles_per_day=2, now=at(8))
    schedule.refresh_from_db()
    assert (schedule.enabled, schedule.held_off_by_admin, schedule.cycles_per_day) == (True, False, 2)


def test_the_admins_switch_off_action_holds_too(alice: User, brief: Brief, admin_user: User) -> None:
    schedule = scheduled(brief, 1)
    signed_in(admin_user).post(
        "/admin/memos/refineschedule/", {"action": "switch_off", "_selected_action": [schedule.pk]}
    )
    schedule.refresh_from_db()
    assert (schedule.enabled, schedule.held_off_by_admin, schedule.set_by) == (False, True, admin_user)
    with pytest.raises(ServiceError, match="only an admin switches it back on"):
        set_schedule(brief=brief, user=alice, cycles_per_day=1, now=at(5, 40))


def test_the_database_refuses_a_schedule_held_off_by_an_admin_that_is_on(brief: Brief) -> None:
    schedule = scheduled(brief, 1)
    with pytest.raises(IntegrityError, match="refine_schedule_held_off_is_off"), transaction.atomic():
        RefineSchedule.objects.filter(pk=schedule.pk).update(held_off_by_admin=True)


# --- "refine now"


def test_refine_now_starts_a_cycle_and_counts_within_the_day_s_two(brief: Brief) -> None:
    client = Client()
    client.force_login(brief.owner)
    first = client.post(f"/briefs/{brief.pk}/refine-now/")
    assert first.status_code == 302 and len(cycles_of(brief)) == 1
    Run.objects.filter(brief=brief).exclude(status=Run.Status.DONE).update(status=Run.Status.NEEDS_REVIEW)

    assert "1 of 2 cycles today (UTC)" in panel_html(brief.owner, brief, now=timezone.now())

    # The schedule's cycle later the same day is the second; a third, by hand, is refused with the reason.
    scheduled(brief, 2, now=timezone.now() - timedelta(minutes=1))
    assert client.post(f"/briefs/{brief.pk}/refine-now/").status_code == 302
    Run.objects.filter(brief=brief).exclude(status=Run.Status.DONE).update(status=Run.Status.NEEDS_REVIEW)
    third = client.post(f"/briefs/{brief.pk}/refine-now/")
    assert third.status_code == 409
    assert "had its 2 refinement cycles today (UTC)" in third.content.decode()
    panel = panel_html(brief.owner, brief, now=timezone.now())
    assert "2 of 2 cycles today (UTC)" in panel and "disabled>Refine now" in panel


def test_refine_now_holds_to_an_admins_switch_off_for_the_analyst_but_not_for_an_admin(
    brief: Brief, admin_user: User
) -> None:
    scheduled(brief, 1)
    set_schedule(brief=brief, user=admin_user, cycles_per_day=0, now=timezone.now())
    refused = signed_in(brief.owner).post(f"/briefs/{brief.pk}/refine-now/")
    assert refused.status_code == 409 and "only an admin may start a cycle now" in refused.content.decode()
    assert cycles_of(brief) == []
    started = signed_in(admin_user).post(f"/briefs/{brief.pk}/refine-now/")
    assert started.status_code == 302 and len(cycles_of(brief)) == 1


def test_only_the_brief_s_analyst_or_an_admin_refines_now(brief: Brief) -> None:
    member = person("carol", "committee")
    client = Client()
    client.force_login(member)
    assert client.post(f"/briefs/{brief.pk}/refine-now/").status_code == 403
    assert not cycles_of(brief)
