"""Frozen versions and their review, end to end on real runs: the real openai client, the fake
OpenAI-compatible server, PostgreSQL and a real SMTP server on loopback that receives the notices."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from memos.models import (
    ArtefactVersion,
    AuditEvent,
    FactRecord,
    Motion,
    Notice,
    ReviewPolicy,
    SourceDocument,
    Vote,
)
from memos.pipeline import driver
from memos.services import review
from memos.services.accounts import Roles
from memos.services.review import ReviewRefused
from memos.services.runs import create_brief, start_run
from memos.services.versions import cited_sources
from tests.mail_server import smtp_inbox
from tests.memos.pipeline_support import fake_llm, finished_run, load_desk_data, person, script_for

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Should the committee add to the position ahead of the next product cycle?"
Status = ArtefactVersion.Status
Action = AuditEvent.Action


@pytest.fixture
def desk() -> dict[str, User]:
    load_desk_data("AAPL")
    people = {
        "ana": person("ana", Roles.ANALYST),
        "cm1": person("cm1", Roles.COMMITTEE),
        "cm2": person("cm2", Roles.COMMITTEE),
        "cm3": person("cm3", Roles.COMMITTEE),
        "rev": person("rev", Roles.REVIEWER),
        "rev2": person("rev2", Roles.REVIEWER),
        "boss": person("boss", Roles.EXECUTIVE),
    }
    ReviewPolicy.objects.update_or_create(pk=1, defaults={"min_votes": 2, "approval_share": 0.5})
    return people


def browser(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_finished_run_freezes_v1_and_its_committee_and_reviewers_each_get_one_email(
    desk: dict[str, User],
) -> None:
    with smtp_inbox() as inbox:
        run = finished_run(desk["ana"])
    version = ArtefactVersion.objects.get(run=run)
    assert (version.number, version.kind, version.status) == (1, "memo", Status.READY_FOR_REVIEW)
    assert version.evaluated and version.score is not None and version.score_label == "calibrated J+"
    assert len(version.content_hash) == 64 and version.data_version == run.data_version
    assert version.sections["Headline thesis"] and version.sources
    assert all(source["kind"] in ("fact", "document") for source in version.sources)
    assert set(version.model_versions) >= {"evaluator", "synthesizer"}
    assert version.changelog.startswith("first memo version of this brief")
    assert Motion.objects.get(version=version).is_open
    assert [e.action for e in version.audit.all()] == [Action.FROZEN, Action.MOTION_OPENED]

    for name in ("cm1", "cm2", "cm3"):
        (mail,) = inbox.to(f"{name}@desk.example")
        assert "your vote is needed" in str(mail["Subject"])
    for name in ("rev", "rev2"):
        (mail,) = inbox.to(f"{name}@desk.example")
        body = mail.get_payload()
        assert "ready for review" in str(mail["Subject"])
        assert f"{settings.SITE_URL.rstrip('/')}/versions/{version.pk}/" in body
        assert f"calibrated J+ {version.score:g}" in body
    assert not inbox.to("ana@desk.example") and not inbox.to("boss@desk.example")
    assert Notice.objects.filter(emailed_at__isnull=False).count() == 5

    # The link opens the version after login.
    signed_out = Client().get(f"/versions/{version.pk}/")
    assert signed_out.status_code == 302 and "/accounts/login/" in signed_out["Location"]
    page = browser(desk["cm1"]).get(f"/versions/{version.pk}/")
    assert page.status_code == 200 and b"Your vote" in page.content


def test_a_price_figure_s_source_says_the_day_it_is_as_of_beside_a_filing_s_fiscal_year(
    desk: dict[str, User],
) -> None:
    prices = FactRecord.objects.filter(fiscal_year=None, company__ticker="AAPL")
    daily = prices.order_by("-period_end").first()
    assert daily is not None  # the quant engine's figures from the bundled prices (they end in 2017)
    SourceDocument.objects.create(
        doc_id="news:cited",
        kind="news",
        title="Apple ships a phone",
        url="https://example.com/n",
        published=date(2017, 9, 1),
        source="a wire",
        text="The body is not frozen with the source.",
        tickers=["AAPL"],
    )
    price, filed, news, missing = cited_sources(
        (daily.fact_id, "AAPL:revenue:FY2024", "news:cited", "news:gone")
    )
    assert price["period"] == f"as of {daily.period_end.isoformat()}"
    assert price["value"] and price["url"] and price["label"]
    assert filed["period"] == "FY 2024" and filed["form"] == "10-K" and filed["accession"]
    assert news == {
        "id": "news:cited",
        "kind": "document",
        "label": "Apple ships a phone",
        "source": "a wire",
        "published": "2017-09-01",
        "url": "https://example.com/n",
    }
    assert missing["kind"] == "unresolved"


def test_votes_quorum_approval_and_publication_follow_the_rules_and_the_audit_trail_shows_each_step(
    desk: dict[str, User],
) -> None:
    with smtp_inbox() as inbox:
        version = ArtefactVersion.objects.get(run=finished_run(desk["ana"]))
        boss = browser(desk["boss"])
        assert boss.get(f"/versions/{version.pk}/").status_code == 404  # executives read published only

        with pytest.raises(ReviewRefused, match="says why"):
            review.cast_vote(version=version, member=desk["cm1"], choice="reject")
        with pytest.raises(ReviewRefused, match="only committee members"):
            review.cast_vote(version=version, member=desk["rev"], choice="approve")
        review.cast_vote(
            version=version, member=desk["cm1"], choice="reject", rationale="the thesis leans on one quarter"
        )
        review.cast_vote(
            version=version, member=desk["cm1"], choice="approve"
        )  # changed: replaces the first, recorded
        review.cast_vote(
            version=version, member=desk["cm2"], choice="recused", rationale="I hold the stock personally"
        )
        assert Vote.objects.filter(version=version).count() == 2

        # The ballots are sealed while the vote is open: cm3 sees the turnout, cm1 their own vote, neither
        # a choice of anyone else's.
        for name in ("cm1", "cm3"):
            page = browser(desk[name]).get(f"/versions/{version.pk}/").content.decode()
            assert "Sealed until the vote closes." in page and "1 of 3 members have voted; 1 recused" in page
            assert "1</strong> approve" not in page and "I hold the stock" not in page
        assert (
            "Change your vote (now: approve)"
            in browser(desk["cm1"]).get(f"/versions/{version.pk}/").content.decode()
        )

        with pytest.raises(ReviewRefused, match="quorum is not met: 1 of the 2"):
            review.approve(version=version, reviewer=desk["rev"])
        review.cast_vote(version=version, member=desk["cm3"], choice="approve")
        assert len(inbox.to("rev@desk.example")) == 2  # ready for review, then quorum reached
        review.approve(version=version, reviewer=desk["rev"])
        review.publish(version=version, reviewer=desk["rev2"])

    version.refresh_from_db()
    assert version.status == Status.PUBLISHED and version.published_at is not None
    assert not Motion.objects.get(version=version).is_open
    actions = [(e.action, e.actor.username if e.actor else None) for e in version.audit.all()]
    assert actions == [
        (Action.FROZEN, None),
        (Action.MOTION_OPENED, None),
        (Action.VOTED, "cm1"),
        (Action.VOTE_CHANGED, "cm1"),
        (Action.RECUSED, "cm2"),
        (Action.APPROVAL_REFUSED, "rev"),
        (Action.VOTED, "cm3"),
        (Action.APPROVED, "rev"),
        (Action.MOTION_CLOSED, "rev"),
        (Action.PUBLISHED, "rev2"),
    ]
    assert {e.content_hash for e in version.audit.all()} == {version.content_hash}
    assert [str(m["Subject"]) for m in inbox.to("boss@desk.example")] == [
        "[Analyst Desk] AAPL memo v1 was published"
    ]
    assert "approved for publication" in str(inbox.to("ana@desk.example")[0]["Subject"])
    assert boss.get(f"/versions/{version.pk}/").status_code == 200
    with pytest.raises(ReviewRefused, match="closed"):
        review.cast_vote(version=version, member=desk["cm2"], choice="approve")


def test_a_reviewer_cannot_approve_a_brief_they_started_and_changes_need_a_comment(
    desk: dict[str, User],
) -> None:
    both = person("both", Roles.ANALYST, Roles.REVIEWER)
    version = ArtefactVersion.objects.get(run=finished_run(both))
    for name in ("cm1", "cm3"):
        review.cast_vote(version=version, member=desk[name], choice="approve")
    with pytest.raises(ReviewRefused, match="you started this brief"):
        review.approve(version=version, reviewer=both)
    with pytest.raises(ReviewRefused, match="needs a comment"):
        review.request_changes(version=version, reviewer=desk["rev"], comment="   ")
    with smtp_inbox() as inbox:
        review.request_changes(
            version=version, reviewer=desk["rev"], comment="Tie the sizing to the risk budget."
        )
    (mail,) = inbox.to("both@desk.example")
    assert "changes requested" in str(mail["Subject"]) and "Tie the sizing" in mail.get_payload()
    version.refresh_from_db()
    assert version.status == Status.CHANGES_REQUESTED and not Motion.objects.get(version=version).is_open


def test_a_second_run_freezes_v2_closes_the_motion_on_v1_and_the_page_shows_the_diff(
    desk: dict[str, User],
) -> None:
    first = finished_run(desk["ana"])
    v1 = ArtefactVersion.objects.get(run=first)
    review.cast_vote(version=v1, member=desk["cm1"], choice="approve")
    second = finished_run(desk["ana"], brief_of=first)
    v2 = ArtefactVersion.objects.get(run=second)
    v1.refresh_from_db()
    assert v2.number == 2 and v1.status == Status.SUPERSEDED
    assert Motion.objects.get(version=v1).closed_because == "superseded by v2"
    assert Motion.objects.get(version=v2).is_open
    assert v2.changelog.startswith("against v1:")
    with pytest.raises(ReviewRefused, match="superseded by v2"):
        review.cast_vote(version=v1, member=desk["cm2"], choice="approve")
    page = browser(desk["cm1"]).get(f"/versions/{v2.pk}/").content.decode()
    assert "Against v1" in page and f'href="/versions/{v1.pk}/"' in page


def test_the_review_pages_refuse_with_a_reason_and_a_version_you_may_not_see_is_a_404(
    desk: dict[str, User],
) -> None:
    version = ArtefactVersion.objects.get(run=finished_run(desk["ana"]))
    member = browser(desk["cm1"])
    refused = member.post(f"/versions/{version.pk}/vote/", {"choice": "abstain", "rationale": ""})
    assert refused.status_code == 409 and b"the rationale is required" in refused.content
    assert not Vote.objects.exists()
    assert member.post(f"/versions/{version.pk}/vote/", {"choice": "approve"}).status_code == 302
    outsider = person("other", Roles.ANALYST)
    assert browser(outsider).post(f"/versions/{version.pk}/vote/", {"choice": "approve"}).status_code == 404
    assert browser(desk["boss"]).post(f"/versions/{version.pk}/approve/").status_code == 404
    approve = browser(desk["rev"]).post(f"/versions/{version.pk}/approve/")
    assert approve.status_code == 409 and b"quorum is not met" in approve.content
    assert re.search(rb"approval refused", browser(desk["rev"]).get(f"/versions/{version.pk}/").content)


def test_a_memo_delivered_not_evaluated_is_frozen_but_cannot_be_voted_on(desk: dict[str, User]) -> None:
    brief = create_brief(owner=desk["ana"], ticker="AAPL", question=QUESTION)
    run = start_run(brief=brief, user=desk["ana"], profile="quick", enqueue=False, workflow="memo")
    with fake_llm(script_for(run)) as server:
        server.inject("length", "length", "length", prompt="evaluator")
        driver.run_inline(str(run.pk))
    version = ArtefactVersion.objects.get(run=run)
    assert not version.evaluated and version.score is None
    assert not Motion.objects.filter(version=version).exists()
    with pytest.raises(ReviewRefused, match="no evaluator's verdict"):
        review.cast_vote(version=version, member=desk["cm1"], choice="approve")
    with pytest.raises(ReviewRefused, match="no evaluator's verdict"):
        review.approve(version=version, reviewer=desk["rev"])
    assert b"Your vote" not in browser(desk["cm1"]).get(f"/versions/{version.pk}/").content
