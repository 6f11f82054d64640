"""The committee scores decks beside its vote, and those scores become the judge's gold set: a member scores
every dimension of the judge's two rubrics on the version page; a bad or partial answer is refused and
records nothing; from five scored decks the calibration is queued and the deck run page shows how far the
judge agrees with people."""

from __future__ import annotations

import re

import django_rq
import pytest
from django.contrib.auth.models import User
from django.test import Client
from rq import Queue

from agents.deck.rubrics import DECK_R1, DECK_R2
from memos.models import ArtefactVersion, GoldScore
from memos.pipeline import driver
from memos.pipeline.deck.desk.gold_scores import run_calibration
from memos.services.accounts import Roles
from tests.memos.deck.test_calibration import R1_KEYS, R2_KEYS, finished_decks
from tests.memos.deck_support import fake_deck_llm
from tests.memos.pipeline_support import analyst
from tests.memos.review.support import frozen, member

pytestmark = pytest.mark.django_db(transaction=True)

KEYS = list(dict.fromkeys(R2_KEYS + R1_KEYS))  # actionability counts toward both: one field


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def answers(value: int | str, **override: int | str) -> dict[str, str]:
    return {f"score_{key}": str(override.get(key, value)) for key in KEYS}


def test_a_committee_member_scores_a_deck_once_and_both_rubrics_keep_it_as_gold() -> None:
    owner = analyst()
    with fake_deck_llm():
        (version,) = finished_decks(1, owner)
    carol = member("carol", Roles.COMMITTEE)
    client = signed_in(carol)
    page = client.get(f"/versions/{version.pk}/").content.decode()
    form = page[page.index('id="score-form"') :]
    assert sorted(set(re.findall(r'name="score_([a-z_]+)"', form))) == sorted(KEYS)
    assert "Every section ends in a decision-relevant takeaway" in form  # each dimension's anchors

    score_url = f"/versions/{version.pk}/score/"
    partial = answers(4)
    del partial["score_metric_traceability"]
    refused = client.post(score_url, partial)
    assert refused.status_code == 409
    assert "give every dimension a score: Metric traceability has none" in refused.content.decode()
    refused = client.post(score_url, answers(4, narrative_flow=7))
    assert "a score is a whole number 0-5: Narrative flow" in refused.content.decode()
    assert not GoldScore.objects.exists()

    assert client.post(score_url, answers(4, actionability=2)).status_code == 302
    gold = {g.rubric: g.scores for g in GoldScore.objects.filter(version=version, scored_by=carol)}
    assert gold == {
        DECK_R2: {**dict.fromkeys(R2_KEYS, 4), "actionability": 2},
        DECK_R1: {**dict.fromkeys(R1_KEYS, 4), "actionability": 2},
    }
    page = client.get(f"/versions/{version.pk}/").content.decode()
    assert 'id="score-form"' not in page and "Your scores of" in page and "Actionability 2" in page
    again = client.post(score_url, answers(1))
    assert again.status_code == 409 and "a gold score is not changed once given" in again.content.decode()
    assert GoldScore.objects.count() == 2

    # Whoever owns the brief does not grade its deck; a reviewer off the committee is not asked at all.
    own_page = signed_in(owner).get(f"/versions/{version.pk}/").content.decode()
    assert 'id="score-form"' not in own_page
    rita = signed_in(member("rita", Roles.REVIEWER))
    reviewer_page = rita.get(f"/versions/{version.pk}/")
    assert reviewer_page.status_code == 200 and 'id="scoring"' not in reviewer_page.content.decode()
    assert "only committee members score" in rita.post(score_url, answers(3)).content.decode()
    assert GoldScore.objects.count() == 2


def test_a_memo_is_not_scored_on_the_deck_judge_s_rubrics() -> None:
    memo = frozen(analyst(), kind="memo")
    carol = member("carol", Roles.COMMITTEE)
    response = signed_in(carol).post(f"/versions/{memo.pk}/score/", answers(3))
    assert response.status_code == 409
    assert "only a deck is scored on the judge&#x27;s rubrics" in response.content.decode()
    assert not GoldScore.objects.exists()


def test_from_five_scored_decks_the_judge_is_compared_and_the_run_page_shows_how_far_it_agrees() -> None:
    owner = analyst()
    carol, dave = member("carol", Roles.COMMITTEE), member("dave", Roles.COMMITTEE)
    queue = django_rq.get_queue(driver.QUEUE)
    earlier = set(queue.job_ids)
    client = signed_in(carol)
    with fake_deck_llm():
        versions: list[ArtefactVersion] = finished_decks(5, owner)
        for version, value in zip(versions[:4], [3, 4, 5, 4], strict=True):
            client.post(f"/versions/{version.pk}/score/", answers(value))
        run_page = client.get(f"/runs/{versions[0].run_id}/").content.decode()
        assert "4 of 5 decks scored by the committee" in run_page
        assert not calibrations(queue, earlier)

        # The fifth deck is another member's to score: a pass needs two people (issue 31).
        signed_in(dave).post(f"/versions/{versions[4].pk}/score/", answers(4))
        queued = calibrations(queue, earlier)
        assert queued == [DECK_R1, DECK_R2]
        for rubric in queued:  # what the worker does with the jobs
            assert run_calibration(rubric)["passed"] is True
        for job in queue.jobs:  # done here: no later test's worker finds them
            if job.id not in earlier:
                job.delete()
        run_page = client.get(f"/runs/{versions[0].run_id}/").content.decode()  # the same judge configured
    panel = run_page[run_page.index('id="judge-agreement"') :]
    # The fake judge says 4 to every deck; the committee said 3, 4, 5, 4, 4.
    assert "R2: within +-1 100%, judge - person +0.00, correlation n/a, 25 pairs" in panel
    assert "calibrated" in panel and "actionability" in panel


def calibrations(queue: Queue, earlier: set[str]) -> list[str]:
    """The rubrics of the calibration jobs queued since ``earlier``."""
    jobs = [job for job in queue.jobs if job.id not in earlier]
    return sorted(str(job.args[0]) for job in jobs if (job.func_name or "").endswith(".run_calibration"))


def test_a_member_sees_the_judge_s_scores_only_after_scoring_the_deck() -> None:
    owner = analyst()
    with fake_deck_llm():
        (version,) = finished_decks(1, owner)
    carol = member("carol", Roles.COMMITTEE)
    client = signed_in(carol)
    deck_step = version.run.steps.get(kind="deck")
    urls = {
        "page": f"/versions/{version.pk}/",
        "scores": f"/versions/{version.pk}/scores.json",
        "step": f"/runs/{version.run_id}/steps/{deck_step.pk}/",
        "run": f"/runs/{version.run_id}/",
    }

    def shown(client: Client) -> dict[str, tuple[int, str]]:
        found = {}
        for name, url in urls.items():
            response = client.get(url)
            found[name] = (response.status_code, response.content.decode())
        return found

    # Before scoring: the form, and none of the judge's scores (its tables, its composite, the step's).
    sealed = shown(client)
    page = sealed["page"][1]
    assert 'id="score-form"' in page and 'id="judge-sealed"' in page and 'id="score-sealed"' in page
    assert "R2: the best deck" not in page and "R1: hard gates" not in page
    assert sealed["scores"][0] == 403 and "once you have scored it yourself" in sealed["scores"][1]
    assert 'id="judge-sealed"' in sealed["step"][1] and "R2" not in sealed["step"][1].split("doc-head")[-1]
    # The run's page: its cards and its line name no score either.
    assert "hidden until you have scored it" in sealed["run"][1]
    assert not re.search(r"R2 \d", sealed["run"][1])

    # Its analyst, and a reviewer off the committee, who score nothing, read them.
    for reader in (owner, member("rita", Roles.REVIEWER)):
        seen = shown(signed_in(reader))
        assert "R2: the best deck" in seen["page"][1] and 'id="judge-sealed"' not in seen["page"][1]
        assert seen["scores"][0] == 200 and seen["step"][0] == 200
        assert 'id="judge-sealed"' not in seen["step"][1] and re.search(r"R2 \d", seen["run"][1])

    # Once scored, the member reads them too.
    assert client.post(f"/versions/{version.pk}/score/", answers(3)).status_code == 302
    scored = shown(client)
    assert "R2: the best deck" in scored["page"][1] and 'id="judge-sealed"' not in scored["page"][1]
    assert scored["scores"][0] == 200 and 'id="judge-sealed"' not in scored["step"][1]
    assert re.search(r"R2 \d", scored["run"][1]) and "hidden until you have scored" not in scored["run"][1]
