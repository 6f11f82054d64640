"""Which memos of other briefs a run's claims are compared with (memos.pipeline.memo.others): the newest
memo of each other brief of the same analyst, at most three briefs, newest first; the claims frozen with a
memo are read as frozen, and a memo frozen before its claims were is read again from its run's audit."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memos.models import ArtefactVersion, Brief, Run
from memos.pipeline.memo.others import MAX_OTHER_BRIEFS, claims_of, other_memos
from tests.memos.factories import brief_of, version_row
from tests.memos.memo.test_contradictions_page import ROSE, claim, memo_run
from tests.memos.pipeline_support import analyst, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)


def directed(statement: str) -> dict[str, Any]:
    return {
        "specialist": "fundamentals",
        "statement": statement,
        "ticker": "AAPL",
        "metric": "revenue",
        "period": "FY2024",
        "direction": "up",
        "figure": "AAPL:revenue:FY2024",
        "citations": ["AAPL:revenue:FY2024"],
    }


def frozen(brief: Brief, number: int, statement: str, minutes_ago: int) -> ArtefactVersion:
    return version_row(
        brief,
        number,
        kind="memo",
        content={"claims": [directed(statement)]},
        evaluated=True,
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
    )


def test_the_newest_memo_of_each_other_brief_is_compared_at_most_three_newest_first() -> None:
    owner = analyst()
    services = brief_of(owner, "Is the services mix worth a premium?")
    frozen(services, 1, "Revenue fell in v1.", minutes_ago=50)
    frozen(services, 2, "Revenue rose in v2.", minutes_ago=5)  # the brief's newest: the one compared
    for n, minutes in enumerate((40, 30, 20, 10), start=1):
        frozen(brief_of(owner, f"Question {n}?"), 1, f"Claim of question {n}.", minutes_ago=minutes)
    theirs = brief_of(person("bob", "analyst"), "Bob's own question?")
    frozen(theirs, 1, "Bob's claim.", minutes_ago=1)  # another analyst's: never compared
    this = Run.objects.create(brief=brief_of(owner, "This run's question?"), created_by=owner)

    found = other_memos(Run.objects.select_related("brief").get(pk=this.pk))

    assert len(found) == MAX_OTHER_BRIEFS
    assert [(memo.question, memo.label) for memo, _ in found] == [
        ("Is the services mix worth a premium?", "v2"),
        ("Question 4?", "v1"),
        ("Question 3?", "v1"),
    ]
    assert [[c.statement for c in claims] for _, claims in found] == [
        ["Revenue rose in v2."],
        ["Claim of question 4."],
        ["Claim of question 3."],
    ]


def test_a_memo_frozen_before_its_claims_were_is_read_again_from_its_runs_audit() -> None:
    load_desk_data("AAPL")
    run, _ = memo_run(analyst(), "Is the services mix worth a premium?", [claim(ROSE, "AAPL:revenue:FY2024")])
    version = ArtefactVersion.objects.get(run=run)
    as_frozen = claims_of(version)
    assert [c.statement for c in as_frozen] == [ROSE]
    older = ArtefactVersion(
        run_id=version.run_id, content={k: v for k, v in version.content.items() if k != "claims"}
    )
    assert claims_of(older) == as_frozen  # read from the run's audit and evidence, the same claims
    assert claims_of(ArtefactVersion(run_id=version.run_id, content={"memo": "not a memo"})) == []
