"""The digest on its page: the week as code wrote it, every new version linked with its vote's state, and a
committee member voting on each from the digest under the same rules as on the version's page."""

from __future__ import annotations

from datetime import date

import pytest
from django.test import Client, override_settings
from django.utils.html import escape

from memos.models import ArtefactVersion, Run, Vote
from memos.pipeline import driver
from memos.pipeline.judge_families import badges
from memos.pipeline.week.desk.start import start_week
from tests.memos.pipeline_support import analyst, fake_llm, fake_settings, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def week() -> Run:
    analyst("analyst")
    load_desk_data("AAPL")
    run = start_week(
        as_of=date(2015, 8, 21), max_names=1, symbols=["AAPL", "XOM", "CVX", "JPM"], enqueue=False
    )
    # Every role on one model, as on the embedded default: each verdict is of its work's own family.
    with (
        fake_llm() as server,
        override_settings(LLM_SETTINGS=fake_settings(server).model_copy(update={"roles": {}})),
    ):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    return run


def _reader(*roles: str) -> Client:
    client = Client()
    client.force_login(person("-".join(roles) or "nobody", *roles))
    return client


def test_a_committee_member_votes_on_the_weeks_memo_from_the_digest(week: Run) -> None:
    digest = ArtefactVersion.objects.get(run=week)
    memo = ArtefactVersion.objects.get(run__part_of=week, kind="memo")
    member = _reader("committee")
    page = member.get(f"/versions/{digest.pk}/").content.decode()
    assert "The market's week" in page and "Closer looks" in page
    tokens = digest.content["tokens"]
    assert tokens >= 1_000 and f"{tokens:,} tokens of the week's budget of 2,000,000" in page
    assert f'action="/versions/{memo.pk}/vote/"' in page  # the same vote as on the memo's page
    assert f'href="/versions/{memo.pk}/"' in page
    answer = member.post(f"/versions/{memo.pk}/vote/", {"choice": "approve", "back_to": digest.pk})
    assert answer.status_code == 302 and answer["Location"] == f"/versions/{digest.pk}/"
    assert Vote.objects.get(version=memo).choice == "approve"
    again = member.get(f"/versions/{digest.pk}/").content.decode()
    assert "You voted (approve)" in again


def test_a_reviewer_reads_the_digest_without_a_vote_and_an_executive_not_at_all(week: Run) -> None:
    digest = ArtefactVersion.objects.get(run=week)
    memo = ArtefactVersion.objects.get(run__part_of=week, kind="memo")
    page = _reader("reviewer").get(f"/versions/{digest.pk}/").content.decode()
    assert f'href="/versions/{memo.pk}/"' in page
    assert f'action="/versions/{memo.pk}/vote/"' not in page
    assert _reader("executive").get(f"/versions/{digest.pk}/").status_code == 404


def test_a_vote_sent_back_to_a_page_the_member_may_not_open_lands_on_the_voted_version(week: Run) -> None:
    memo = ArtefactVersion.objects.get(run__part_of=week, kind="memo")
    member = _reader("committee")
    answer = member.post(f"/versions/{memo.pk}/vote/", {"choice": "approve", "back_to": "999999"})
    assert answer["Location"] == f"/versions/{memo.pk}/"


def test_the_digest_badges_each_verdict_of_the_works_own_family(week: Run) -> None:
    # The memo's evaluator and the screen's managing director judge their own family's work: the digest says
    # so beside each, as their versions froze it.
    digest = ArtefactVersion.objects.get(run=week)
    memo = ArtefactVersion.objects.get(run__part_of=week, kind="memo")
    screen = ArtefactVersion.objects.get(run__part_of=week, kind="screen")
    page = _reader("committee").get(f"/versions/{digest.pk}/").content.decode()
    assert badges(memo.verdict_families) and badges(screen.verdict_families)
    for version in (memo, screen):
        for badge in badges(version.verdict_families):
            assert escape(badge) in page
            assert badge in digest.rendered_text
