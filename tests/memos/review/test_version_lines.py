"""A brief's memos and decks are lines of versions of their own: memo v1, v2 and deck v1, v2 side by side.
A version supersedes, and is compared with, only the versions of its line (a deck's R2 is not a memo's J+),
and every page, notice and helper that walks versions walks the line."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from memos.models import ArtefactVersion, Brief, Motion, Notice, Run
from memos.pipeline.deck.desk.cycles import latest_deck
from memos.pipeline.workflows import Artefact
from memos.services import review
from memos.services.accounts import Roles
from memos.services.versions import freeze, previous_of
from tests.agents.deck.samples import cleared_r1, sample_deck
from tests.memos.factories import company
from tests.memos.pipeline_support import person

pytestmark = pytest.mark.django_db

Status = ArtefactVersion.Status


@pytest.fixture
def brief() -> Brief:
    person("cm1", Roles.COMMITTEE)
    return Brief.objects.create(
        company=company(), question="Keep the position?", owner=person("ana", "analyst")
    )


def deck_content(composite: float, slides: int = 3) -> dict[str, Any]:
    return cleared_r1(sample_deck(slides), composite=composite).model_dump(mode="json")


def frozen(
    brief: Brief, kind: str, score: float | None, *, label: str = "", text: str = ""
) -> ArtefactVersion:
    """The artefact a finished run of ``kind`` freezes, from a run of its own on ``brief``."""
    run = Run.objects.create(brief=brief, created_by=brief.owner, workflow=kind, status=Run.Status.DONE)
    if kind == "deck":
        content = deck_content(score or 3.0)
        sections = {"Slide 1: Thesis": text or f"Deck at {score}"}
    else:
        content = {"memo": {"headline_thesis": text or f"Memo at {score}"}}
        sections = {"Headline thesis": text or f"Memo at {score}"}
    with transaction.atomic():
        return freeze(
            run=run,
            artefact=Artefact(
                kind=kind,
                title=f"AAPL {kind}",
                content=content,
                sections=sections,
                evaluated=True,
                score=score,
                score_label=label or ("R2" if kind == "deck" else "calibrated J+"),
            ),
        )


def fresh(version: ArtefactVersion) -> ArtefactVersion:
    version.refresh_from_db()
    return version


def test_a_deck_frozen_on_a_brief_leaves_its_memo_under_vote_and_is_compared_only_with_decks(
    brief: Brief,
) -> None:
    memo_v1 = frozen(brief, "memo", 7.5)
    deck_v1 = frozen(brief, "deck", 3.9)

    assert (memo_v1.number, deck_v1.number) == (1, 1)
    assert fresh(memo_v1).status == Status.READY_FOR_REVIEW and Motion.objects.get(version=memo_v1).is_open
    assert deck_v1.score_delta is None, "a deck's R2 is never compared with a memo's J+"
    assert deck_v1.changelog.startswith("first deck version of this brief")

    deck_v2 = frozen(brief, "deck", 4.2)
    assert deck_v2.number == 2 and deck_v2.score_delta == pytest.approx(0.3)
    assert deck_v2.changelog.startswith("against v1:")
    assert fresh(deck_v1).status == Status.SUPERSEDED
    assert Motion.objects.get(version=deck_v1).closed_because == "superseded by v2"
    assert fresh(memo_v1).status == Status.READY_FOR_REVIEW and Motion.objects.get(version=memo_v1).is_open

    memo_v2 = frozen(brief, "memo", 8.0)
    assert memo_v2.number == 2 and memo_v2.score_delta == pytest.approx(0.5)
    assert fresh(memo_v1).status == Status.SUPERSEDED
    assert fresh(deck_v2).status == Status.READY_FOR_REVIEW and Motion.objects.get(version=deck_v2).is_open

    assert previous_of(deck_v2) == deck_v1 and previous_of(memo_v2) == memo_v1
    assert previous_of(deck_v1) is None and previous_of(memo_v1) is None
    assert latest_deck(brief) == deck_v2

    # The committee's notice names the line, and the delta is the line's.
    notice = Notice.objects.get(version=deck_v2, recipient__username="cm1")
    assert notice.subject == "[Analyst Desk] AAPL deck v2 is ready: your vote is needed"
    # A deck's judge is sealed from a committee member until they have scored it (issue 31, 4): the notice,
    # one message for all, leaves its score on the page.
    assert "Score: R2, on its page" in notice.body and "4.2" not in notice.body and "+0.3" not in notice.body


def test_a_deck_escalated_at_its_entry_gate_is_not_compared_with_the_loops_r2(brief: Brief) -> None:
    frozen(brief, "deck", 4.0)
    escalated = frozen(brief, "deck", 2.8, label="R1, escalated: can't clear the entry bar")
    assert escalated.number == 2 and escalated.score_delta is None
    assert escalated.changelog.endswith("R1, escalated: can't clear the entry bar 2.8")


def test_the_version_page_diffs_against_its_own_line_and_names_the_kind_of_the_other_lines(
    brief: Brief,
) -> None:
    memo_v1 = frozen(brief, "memo", 7.5, text="Services carry the margin.")
    deck_v1 = frozen(brief, "deck", 3.9, text="The deck's first thesis.")
    memo_v2 = frozen(brief, "memo", 7.0, text="Services no longer carry the margin.")
    deck_v2 = frozen(brief, "deck", 4.1, text="The deck's second thesis.")
    client = Client()
    client.force_login(brief.owner)

    page = client.get(f"/versions/{deck_v2.pk}/").content.decode()
    assert "Against v1" in page and "The deck&#x27;s first thesis." in page
    assert "Services carry the margin." not in page, "a deck is never diffed against a memo"
    assert "against the deck before" in page
    assert f'<a href="/versions/{deck_v1.pk}/">v1</a>' in page
    assert f'<a href="/versions/{memo_v2.pk}/">memo v2</a>' in page
    assert f'<a href="/versions/{memo_v1.pk}/">memo v1</a>' in page

    memo_page = client.get(f"/versions/{memo_v2.pk}/").content.decode()
    assert "Against v1" in memo_page and "Services carry the margin." in memo_page
    assert f'<a href="/versions/{deck_v2.pk}/">deck v2</a>' in memo_page


def test_publishing_a_deck_leaves_the_briefs_published_memo_published(brief: Brief) -> None:
    reviewer = person("rev", Roles.REVIEWER)
    memo = frozen(brief, "memo", 7.5)
    deck = frozen(brief, "deck", 4.1)
    for version in (memo, deck):
        # Approval's own rules are the review's tests; here only what publishing supersedes.
        ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.APPROVED)
        review.publish(version=version, reviewer=reviewer)
    assert (fresh(memo).status, fresh(deck).status) == (Status.PUBLISHED, Status.PUBLISHED)

    newer = frozen(brief, "deck", 4.3)
    ArtefactVersion.objects.filter(pk=newer.pk).update(status=Status.APPROVED)
    review.publish(version=newer, reviewer=reviewer)
    assert (fresh(memo).status, fresh(deck).status) == (Status.PUBLISHED, Status.SUPERSEDED)


def test_two_versions_of_one_line_cannot_share_a_number_but_two_lines_can(brief: Brief) -> None:
    memo = frozen(brief, "memo", 7.5)
    deck = frozen(brief, "deck", 3.9)
    assert memo.number == deck.number == 1
    copy = {
        field.name: getattr(deck, field.name)
        for field in ArtefactVersion._meta.concrete_fields
        if field.name not in ("id", "run", "content_hash")
    }
    with pytest.raises(IntegrityError, match="one_version_number_per_line"), transaction.atomic():
        ArtefactVersion.objects.create(**copy, run=deck.run, content_hash="e" * 64)
