"""Each role's home page leads with what that person has to do: the analyst's runs and schedules, the votes a
committee member owes and the latest digest, the motions at quorum a reviewer decides, what was published;
and each list says plainly when it is empty."""

from __future__ import annotations

import re
from datetime import time

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from memos.models import ArtefactVersion, Brief, MemoSchedule, RefineSchedule, Run
from memos.services.accounts import Roles
from memos.services.review import approve, cast_vote
from tests.memos.factories import brief_of, version_row
from tests.memos.review.support import frozen, member

pytestmark = pytest.mark.django_db


def home_of(user: User) -> str:
    client = Client()
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def part(page: str, part_id: str) -> str:
    """The HTML of one part of the home page ("" when the page has no such part)."""
    found = re.search(rf'<section class="panel home-part" id="{part_id}">.*?</section>', page, re.DOTALL)
    return found.group(0) if found else ""


def digest(brief: Brief, number: int) -> ArtefactVersion:
    """A week's digest as the week workflow freezes it: a version of kind "week" (inserted as a row here, so
    the page's part is tested before that workflow is registered on this branch)."""
    return version_row(brief, number, kind="week", content={}, workflow="week")


def committee(*names: str) -> list[User]:
    return [member(name, Roles.COMMITTEE) for name in names]


# --- the committee member


def test_a_member_sees_a_version_awaiting_their_vote_until_they_have_voted(alice: User) -> None:
    bob, carol = committee("bob", "carol")
    version = frozen(alice)
    link = f'href="/versions/{version.pk}/"'
    for person in (bob, carol):
        awaiting = part(home_of(person), "awaiting-vote")
        assert link in awaiting and "0 of 2 members have voted" in awaiting

    cast_vote(version=version, member=bob, choice="approve")
    bobs = part(home_of(bob), "awaiting-vote")
    assert link not in bobs and "No versions await your vote." in bobs
    carols = part(home_of(carol), "awaiting-vote")
    assert link in carols and "1 of 2 members have voted" in carols


def test_a_member_is_not_asked_to_vote_on_their_own_brief_nor_on_a_version_no_vote_is_open_on(
    alice: User,
) -> None:
    (bob,) = committee("bob")
    dana = member("dana", Roles.COMMITTEE, Roles.ANALYST)
    own = frozen(dana)  # dana's brief: its analyst does not vote on it
    unevaluated = frozen(alice, thesis="No verdict.", evaluated=False)  # no motion opens
    others = frozen(alice, thesis="Another line.")

    danas = part(home_of(dana), "awaiting-vote")
    assert f'href="/versions/{own.pk}/"' not in danas and f'href="/versions/{others.pk}/"' in danas
    bobs = part(home_of(bob), "awaiting-vote")
    assert f'href="/versions/{unevaluated.pk}/"' not in bobs
    assert f'href="/versions/{own.pk}/"' in bobs and f'href="/versions/{others.pk}/"' in bobs


def test_a_member_finds_the_latest_weeks_digest_or_is_told_there_is_none(alice: User) -> None:
    (bob,) = committee("bob")
    digest_part = part(home_of(bob), "latest-digest")
    assert "No week has been digested yet." in digest_part

    week_brief = brief_of(alice, "What did this week need from the committee?")
    older, newer = digest(week_brief, 1), digest(week_brief, 2)
    frozen(alice, thesis="A memo, not a digest.")
    digest_part = part(home_of(bob), "latest-digest")
    assert f'href="/versions/{newer.pk}/"' in digest_part
    assert (
        f'href="/versions/{older.pk}/"' not in digest_part and "No week has been digested" not in digest_part
    )


# --- the analyst


def test_an_analyst_sees_their_own_runs_active_first_and_never_another_analysts(alice: User) -> None:
    dave = member("dave", Roles.ANALYST)
    finished = Run.objects.create(
        brief=brief_of(alice, "Alice finished question?"), created_by=alice, status=Run.Status.DONE
    )
    active = Run.objects.create(
        brief=brief_of(alice, "Alice running question?"), created_by=alice, status=Run.Status.RUNNING
    )
    Run.objects.create(brief=brief_of(dave, "Dave own question?"), created_by=dave)

    runs = part(home_of(alice), "your-runs")
    assert "Alice finished question?" in runs and "Alice running question?" in runs
    assert runs.index(f'href="/runs/{active.pk}/"') < runs.index(f'href="/runs/{finished.pk}/"')
    assert "Dave own question?" not in runs
    assert "You have no runs yet." in part(home_of(member("erin", Roles.ANALYST)), "your-runs")


def test_an_analyst_on_the_committee_sees_only_their_own_runs_though_they_may_read_all(alice: User) -> None:
    dana = member("dana", Roles.COMMITTEE, Roles.ANALYST)
    Run.objects.create(brief=brief_of(dana, "Dana question?"), created_by=dana)
    Run.objects.create(brief=brief_of(alice, "Alice question?"), created_by=alice)
    page = home_of(dana)
    runs = part(page, "your-runs")
    assert "Dana question?" in runs and "Alice question?" not in runs
    assert part(page, "awaiting-vote") and part(page, "latest-digest")  # and her committee's part


def test_an_analyst_sees_their_schedules_and_not_another_analysts(alice: User) -> None:
    dave = member("dave", Roles.ANALYST)
    now = timezone.now()
    MemoSchedule.objects.create(
        brief=brief_of(alice, "Weekly: keep the position?"), set_by=alice, set_at=now, weekday=4, at=time(7)
    )
    RefineSchedule.objects.create(brief=brief_of(alice, "Deck: the services story"), set_by=alice, set_at=now)
    MemoSchedule.objects.create(brief=brief_of(dave, "Dave weekly?"), set_by=dave, set_at=now)

    schedules = part(home_of(alice), "your-schedules")
    assert "weekly memo" in schedules and "every Friday at 07:00 UTC" in schedules
    assert "deck refinement" in schedules and "once a day at 06:00 UTC" in schedules
    assert "Dave weekly?" not in schedules and "weekly screen" not in schedules
    daves = part(home_of(dave), "your-schedules")
    assert "Dave weekly?" in daves and "Weekly: keep the position?" not in daves
    assert "You have no schedules." in part(home_of(member("erin", Roles.ANALYST)), "your-schedules")


def test_the_weekly_screens_owner_sees_it_among_their_schedules() -> None:
    owner = member("analyst", Roles.ANALYST)  # SCREEN_SCHEDULE_OWNER's default
    schedules = part(home_of(owner), "your-schedules")
    assert "weekly screen" in schedules and "off (SCREEN_SCHEDULE)" in schedules  # off under test


# --- the reviewer


def test_a_reviewer_sees_a_motion_once_its_quorum_is_met_and_an_approved_version_to_publish(
    alice: User,
) -> None:
    reviewer = member("rita", Roles.REVIEWER)
    voters = committee("bob", "carol", "dan")
    version = frozen(alice)
    link = f'href="/versions/{version.pk}/"'
    for voter in voters[:2]:
        cast_vote(version=version, member=voter, choice="approve")
    before = part(home_of(reviewer), "motions-at-quorum")
    assert link not in before and "No motion has reached its quorum" in before

    cast_vote(version=version, member=voters[2], choice="approve")
    at_quorum = part(home_of(reviewer), "motions-at-quorum")
    assert link in at_quorum and "quorum met: approve, or request changes" in at_quorum

    approve(version=version, reviewer=reviewer)
    assert "approved: publish it" in part(home_of(reviewer), "motions-at-quorum")
    ArtefactVersion.objects.filter(pk=version.pk).update(
        status=ArtefactVersion.Status.PUBLISHED, published_at=timezone.now()
    )
    assert link not in part(home_of(reviewer), "motions-at-quorum")


def test_a_reviewer_is_not_asked_to_decide_on_a_brief_they_started(alice: User) -> None:
    rex = member("rex", Roles.REVIEWER, Roles.ANALYST)
    voters = committee("bob", "carol", "dan")
    own = frozen(rex)
    for voter in voters:
        cast_vote(version=own, member=voter, choice="approve")
    assert f'href="/versions/{own.pk}/"' not in part(home_of(rex), "motions-at-quorum")
    assert f'href="/versions/{own.pk}/"' in part(home_of(member("rita", Roles.REVIEWER)), "motions-at-quorum")


# --- who sees which part


def test_an_admin_sees_the_analysts_and_the_reviewers_parts_and_no_vote_to_cast(admin_user: User) -> None:
    page = home_of(admin_user)
    for shown in ("your-runs", "your-schedules", "motions-at-quorum"):
        assert part(page, shown), shown
    assert "Runs on the desk" in page and not part(page, "awaiting-vote")
    assert "weekly screen" in part(page, "your-schedules")


def test_each_role_sees_its_parts_and_only_those(alice: User) -> None:
    executive = member("eve", Roles.EXECUTIVE)
    reviewer = member("rita", Roles.REVIEWER)
    (bob,) = committee("bob")
    expected = {
        alice: {"your-runs", "your-schedules"},
        bob: {"awaiting-vote", "latest-digest"},
        reviewer: {"motions-at-quorum"},
        executive: {"published"},
    }
    every = set().union(*expected.values())
    for user, parts in expected.items():
        page = home_of(user)
        assert {name for name in every if part(page, name)} == parts, user.username
    assert "Nothing has been published yet." in part(home_of(executive), "published")
    both = member("mo", Roles.COMMITTEE, Roles.REVIEWER)
    assert {name for name in every if part(home_of(both), name)} == {
        "awaiting-vote",
        "latest-digest",
        "motions-at-quorum",
    }


# --- a watchlist in a list of runs


def test_a_watchlist_run_in_the_list_shows_its_size_and_five_symbols_with_the_rest_behind_a_click(
    alice: User,
) -> None:
    symbols = [f"S{number:02d}" for number in range(87)]
    brief = Brief.objects.create(symbols=symbols, question="Weekly screen?", owner=alice)
    Run.objects.create(brief=brief, created_by=alice, workflow="screen")
    runs = part(home_of(alice), "your-runs")
    assert "watchlist of 87 symbols" in runs and "S00, S01, S02, S03, S04" in runs
    shown, hidden = runs.split("<details", 1)
    assert "S05" not in shown and "S86" not in shown
    assert "and 82 more" in hidden and "S05, S06" in hidden and "S86" in hidden
