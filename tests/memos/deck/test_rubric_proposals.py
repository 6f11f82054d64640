"""An administrator adopts a deck run's brief-specific anchors: the next R1 and R2 versions carry them,
are active for the next run, and change nothing else; nobody else may, and a step without a proposal is
refused."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents.rubrics import parse_rubric
from memos.models import AgentStep, RubricVersion
from memos.pipeline import driver
from tests.memos.deck_support import deck_run, fake_deck_llm

pytestmark = pytest.mark.django_db(transaction=True)

PROPOSAL = {
    "descriptors": [
        {
            "dimension": "actionability",
            "five": "Ends with the keep, add or trim call the committee votes on.",
        },
        {
            "dimension": "thesis_clarity",
            "five": "Says on slide one why the services mix carries the position.",
        },
    ]
}


def _rubric_step() -> AgentStep:
    call_command("seed_governance", verbosity=0)
    run = deck_run("quick")
    with fake_deck_llm({"deck_rubric": [PROPOSAL]}):
        driver.run_inline(str(run.pk))
    return AgentStep.objects.get(run=run, key="rubric")


def test_an_admin_adopts_the_anchors_into_new_active_rubric_versions() -> None:
    step = _rubric_step()
    before = {
        v.name: v for v in RubricVersion.objects.filter(is_active=True, name__in=["deck_r1", "deck_r2"])
    }
    admin = User.objects.create_superuser("root", "root@desk.example", "root-secret-pass")
    client = Client()
    client.force_login(admin)
    page = client.get(f"/runs/{step.run_id}/steps/{step.pk}/")
    assert b"Adopt these anchors" in page.content
    response = client.post(f"/runs/{step.run_id}/steps/{step.pk}/adopt-rubric/")
    assert response.status_code == 302
    for name in ("deck_r1", "deck_r2"):
        active = RubricVersion.objects.get(name=name, is_active=True)
        assert active.version == before[name].version + 1 and active.based_on_id == before[name].pk
        new = parse_rubric(active.content.encode(), origin=name)
        old = parse_rubric(before[name].content.encode(), origin=name)
        assert new.thresholds == old.thresholds
        dims = {d.key: d for d in new.objective("composite").dimensions}
        assert dims["actionability"].anchors[5] == PROPOSAL["descriptors"][0]["five"]
        assert [d.weight for d in new.objective("composite").dimensions] == [
            d.weight for d in old.objective("composite").dimensions
        ]
    r1 = parse_rubric(RubricVersion.objects.get(name="deck_r1", is_active=True).content.encode(), origin="r1")
    assert (
        {d.key: d for d in r1.objective("composite").dimensions}["thesis_clarity"]
        .anchors[5]
        .startswith("Says")
    )


def test_the_analyst_may_not_adopt_and_a_step_without_a_proposal_is_refused() -> None:
    step = _rubric_step()
    client = Client()
    client.force_login(step.run.brief.owner)
    assert b"Adopt these anchors" not in client.get(f"/runs/{step.run_id}/steps/{step.pk}/").content
    assert client.post(f"/runs/{step.run_id}/steps/{step.pk}/adopt-rubric/").status_code == 403
    admin = User.objects.create_superuser("root", "root@desk.example", "root-secret-pass")
    client.force_login(admin)
    scope = AgentStep.objects.get(run=step.run, key="scope")
    refused = client.post(f"/runs/{step.run_id}/steps/{scope.pk}/adopt-rubric/")
    assert refused.status_code == 409 and b"no rubric proposal" in refused.content
    assert RubricVersion.objects.filter(name="deck_r2").count() == 1
