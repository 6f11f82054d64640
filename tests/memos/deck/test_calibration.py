"""Seed 001 section 2: the deck judge is checked against people's gold scores before its rubric is trusted.

Deck runs finish on the fake server, whose judge answers 4 on every dimension; people's gold scores of the
frozen decks are then near that judge or far from it.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client, override_settings

from agents.data.edgar import SnapshotEdgarSource, load_company_facts
from agents.deck.rubrics import DECK_R1, DECK_R2
from agents.llm.config import Endpoint, LLMSettings
from agents.llm.fakes.server import FakeLLMServer
from agents.llm.roles import Role
from memos.models import ArtefactVersion, Brief, Calibration, Company, GoldScore, LLMCall, Run
from memos.pipeline import driver
from memos.pipeline.deck.calibration import is_calibrated
from memos.pipeline.deck.desk.calibration import agreement, calibrate, record_gold_score
from memos.pipeline.fact_store import save_company_facts
from memos.pipeline.workflows import Artefact
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from memos.services.versions import freeze
from tests.agents.data import SNAPSHOT
from tests.agents.deck.samples import cleared_r1, sample_deck
from tests.memos.deck_support import deck_settings, fake_deck_llm
from tests.memos.factories import company, run_for
from tests.memos.pipeline_support import analyst, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)

R2_KEYS = (
    "actionability",
    "executive_altitude",
    "visual_digestibility",
    "clean_concise_story",
    "metric_traceability",
)
R1_KEYS = ("thesis_clarity", "coverage_depth", "narrative_flow", "visual_baseline", "actionability")
# Five distinct decks (a pass needs five, distinct by content: the fake drafter writes the same deck for one
# company and profile, so they differ by company and profile), each its own brief and version line.
DECKS = (("AAPL", "quick"), ("AAPL", "full"), ("TSLA", "quick"), ("NVDA", "quick"), ("TSM", "quick"))


def finished_decks(count: int, owner: User) -> list[ArtefactVersion]:
    load_desk_data("AAPL")  # its prices too; the others' filed figures suffice for a deck
    versions = []
    for ticker, profile in DECKS[:count]:
        if ticker != "AAPL":
            save_company_facts(load_company_facts(SnapshotEdgarSource(SNAPSHOT), ticker))
        brief = create_brief(owner=owner, ticker=ticker, question=f"Should the board keep {ticker}?")
        run = start_run(brief=brief, user=owner, profile=profile, workflow="deck", enqueue=False)
        driver.run_inline(str(run.pk))
        run.refresh_from_db()
        assert run.status == Run.Status.DONE, run.status_message
        versions.append(ArtefactVersion.objects.get(run=run))
    assert len({version.content_hash for version in versions}) == count
    return versions


def score_all(versions: list[ArtefactVersion], user: User, values: list[int], rubric: str = DECK_R2) -> None:
    keys = R2_KEYS if rubric == DECK_R2 else R1_KEYS
    for version, value in zip(versions, values, strict=True):
        record_gold_score(version=version, rubric_name=rubric, scores=dict.fromkeys(keys, value), user=user)


def run_command(rubric: str = DECK_R2) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("calibrate_judge", "--rubric", rubric, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(str(exc.code)), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def another_judge(server: FakeLLMServer) -> LLMSettings:
    configured = deck_settings(server)
    other = Endpoint(base_url=server.url, api_key="test-key", model="another-judge")
    return configured.model_copy(update={"roles": {**configured.roles, Role.SCORER: other}})


def judge_elsewhere(server: FakeLLMServer) -> LLMSettings:
    """The same model name, served at another address (issue 31: calibrations were keyed by the name)."""
    configured = deck_settings(server)
    scorer = configured.endpoint_for(Role.SCORER)
    moved = scorer.model_copy(update={"base_url": server.url.replace("127.0.0.1", "localhost")})
    return configured.model_copy(update={"roles": {**configured.roles, Role.SCORER: moved}})


def test_a_judge_within_one_point_of_the_people_passes_and_one_far_from_them_does_not() -> None:
    owner = analyst()
    cara, dan, eve = (person(name, "committee") for name in ("cara", "dan", "eve"))
    with fake_deck_llm() as server:
        versions = finished_decks(5, owner)
        pins = versions[0].run.rubric_versions
        assert not is_calibrated(DECK_R2, pins)  # never checked

        # Two people score five decks; the judge says 4: off by 1, 0, 1, 0 and 0.
        score_all(versions[:3], cara, [3, 4, 5])
        score_all(versions[3:], dan, [4, 4])
        near = calibrate(rubric_name=DECK_R2)
        # One judge call per deck, in the ledger; the loop asked the very same prompt of the final deck, so
        # the ledger's cache answers it with the score the loop acted on.
        asked = LLMCall.objects.filter(stage="calibration", role="scorer")
        assert sorted(asked.values_list("prompt_name", flat=True)) == ["deck_scorer"] * 5
        assert near.passed and near.examples == 5 and near.pairs == 25 and near.within_one == 1.0
        assert (near.decks, near.raters) == (5, 2)
        judge = f"fake-judge at {server.url.removeprefix('http://')}"
        assert near.scorer_model == judge and near.rubric_version.name == DECK_R2
        assert near.by_dimension["actionability"]["mean_abs_diff"] == pytest.approx(2 / 5)
        assert is_calibrated(DECK_R2, pins)
        with override_settings(LLM_SETTINGS=another_judge(server)):
            assert not is_calibrated(DECK_R2, pins)  # passed on fake-judge says nothing of another model
        with override_settings(LLM_SETTINGS=judge_elsewhere(server)):
            assert not is_calibrated(DECK_R2, pins)  # nor of a model of the same name on another endpoint

        code, out, err = run_command()
        assert code == 0 and err == ""
        # The fake judge says 4 to every deck: no spread, so no correlation to speak of.
        assert "actionability: within +-1 100%, judge - person +0.00, correlation n/a, 5 pairs" in out
        verdict = out.strip().splitlines()[-1]
        assert verdict.startswith(f"PASSED: deck_r2 v1 on {judge}, within +-1 100%, judge - person +0.00")
        assert verdict.endswith(
            ", correlation n/a, 25 pairs over 5 examples (5 decks, 2 people) "
            "(needs 80% within +-1 over at least 5 decks scored by at least 2 people)"
        )

        # A pass is earned (issue 31): one person copying the judge onto five decks is not one ...
        GoldScore.objects.all().delete()
        score_all(versions, cara, [4, 4, 4, 4, 4])
        alone = calibrate(rubric_name=DECK_R2)
        assert alone.within_one == 1.0 and alone.raters == 1 and not alone.passed
        # ... nor three people scoring one deck.
        GoldScore.objects.all().delete()
        for rater in (cara, dan, eve):
            score_all(versions[:1], rater, [4])
        one_deck = calibrate(rubric_name=DECK_R2)
        assert one_deck.within_one == 1.0 and (one_deck.decks, one_deck.raters) == (1, 3)
        assert not one_deck.passed and not is_calibrated(DECK_R2, pins)

        GoldScore.objects.all().delete()
        score_all(versions[:3], cara, [1, 1, 1])  # three points below the judge everywhere
        score_all(versions[3:], dan, [1, 1])
        far = calibrate(rubric_name=DECK_R2)
        assert not far.passed and far.within_one == 0.0
        assert {key: found["mean_abs_diff"] for key, found in far.by_dimension.items()} == dict.fromkeys(
            R2_KEYS, 3.0
        )
        assert not is_calibrated(DECK_R2, pins)  # the latest check withdrew the earlier pass
        code, out, _ = run_command()
        assert code == 1
        assert "metric_traceability: within +-1 0%, judge - person +3.00" in out  # the judge is the kinder
        assert out.strip().splitlines()[-1].startswith("NOT PASSED")

        # The gate's judge, asked as the gate asks.
        score_all(versions[:3], cara, [4, 5, 3], rubric=DECK_R1)
        score_all(versions[3:], dan, [4, 4], rubric=DECK_R1)
        gate = calibrate(rubric_name=DECK_R1)
        assert LLMCall.objects.filter(stage="calibration", prompt_name="deck_gate").count() == 5
        assert gate.passed and gate.rubric_version.name == DECK_R1 and set(gate.by_dimension) == set(R1_KEYS)
    assert Calibration.objects.count() == 7


def frozen_deck(owner: User, on: Company | None = None) -> ArtefactVersion:
    """A deck version frozen without a run behind it: enough for the gold score's own checks."""
    brief = Brief.objects.create(
        company=on or company(), question="Which slides does the board need?", owner=owner
    )
    run = Run.objects.create(brief=brief, created_by=owner, status=Run.Status.DONE, workflow="deck")
    deck = sample_deck(3)
    content = cleared_r1(deck, composite=3.6).model_dump(mode="json")
    with transaction.atomic():
        return freeze(
            run=run,
            artefact=Artefact(kind="deck", title="AAPL deck", content=content, sections={}, evaluated=False),
        )


def test_a_gold_score_refuses_a_memo_version_a_missing_dimension_and_a_second_score_by_the_same_person() -> (
    None
):
    owner = analyst()
    memo_run = run_for(owner, company("MSFT", "Microsoft Corp.", 789019))
    with transaction.atomic():
        memo = freeze(
            run=memo_run,
            artefact=Artefact(
                kind="memo", title="memo", content={}, sections={"Thesis": "Hold."}, evaluated=True
            ),
        )
    full = dict.fromkeys(R2_KEYS, 3)
    with pytest.raises(ServiceError, match="only a deck version"):
        record_gold_score(version=memo, rubric_name=DECK_R2, scores=full, user=owner)

    deck = frozen_deck(owner)
    partial = {key: 3 for key in R2_KEYS if key != "metric_traceability"}
    with pytest.raises(ServiceError, match="no score for metric_traceability"):
        record_gold_score(version=deck, rubric_name=DECK_R2, scores=partial, user=owner)
    with pytest.raises(ServiceError, match="whole numbers 0-5: actionability"):
        record_gold_score(version=deck, rubric_name=DECK_R2, scores=full | {"actionability": 6}, user=owner)

    record_gold_score(version=deck, rubric_name=DECK_R2, scores=full, user=owner)
    with pytest.raises(ServiceError, match="already scored"):
        record_gold_score(version=deck, rubric_name=DECK_R2, scores=full, user=owner)
    assert GoldScore.objects.count() == 1


def test_the_command_refuses_an_unknown_rubric_and_a_rubric_without_gold_scores() -> None:
    code, out, err = run_command("deck_r9")
    assert (code, out) == (
        2,
        "",
    ) and err.strip() == "calibrate_judge: unknown rubric 'deck_r9': one of deck_r1, deck_r2"
    code, out, err = run_command(DECK_R2)
    assert (
        (code, out) == (2, "") and "no gold scores for deck_r2" in err and len(err.strip().splitlines()) == 1
    )
    assert not Calibration.objects.exists()


def test_a_superuser_adds_a_gold_score_with_one_field_per_dimension_and_the_form_names_a_missing_one(
    client: Client,
) -> None:
    root = User.objects.create_superuser(username="root", password="root-secret-pass")
    deck = frozen_deck(analyst())
    client.force_login(root)
    page = client.get("/admin/memos/goldscore/add/").content.decode()
    assert 'name="score_metric_traceability"' in page and 'name="score_thesis_clarity"' in page

    form = {"version": str(deck.pk), "rubric": DECK_R2} | {f"score_{key}": "4" for key in R2_KEYS}
    missing = {k: v for k, v in form.items() if k != "score_actionability"}
    refused = client.post("/admin/memos/goldscore/add/", missing)
    assert refused.status_code == 200 and "no score for actionability" in refused.content.decode()
    assert client.post("/admin/memos/goldscore/add/", form).status_code == 302
    gold = GoldScore.objects.get()
    assert gold.scored_by == root and gold.scores == dict.fromkeys(R2_KEYS, 4)

    # The admin keeps the page's rules on whose deck it is (issue 31): not a brief of one's own.
    own = frozen_deck(root, on=deck.brief.company)
    mine = client.post("/admin/memos/goldscore/add/", form | {"version": str(own.pk)})
    assert mine.status_code == 200 and "You own this brief" in mine.content.decode()
    assert GoldScore.objects.count() == 1


def test_the_agreement_figures_are_the_share_within_one_the_signed_difference_and_the_correlation() -> None:
    # (judge, person): the judge one point kinder on the first two, in step with the person throughout.
    found = agreement([(4, 3), (5, 4), (2, 2), (1, 1)])
    assert found.within_one == 1.0 and found.pairs == 4
    assert found.mean_diff == pytest.approx(0.5) and found.mean_abs_diff == pytest.approx(0.5)
    assert found.correlation == pytest.approx(0.98995, abs=1e-4)
    opposed = agreement([(5, 0), (0, 5), (3, 2)])
    assert (
        opposed.correlation is not None
        and opposed.correlation < -0.9
        and opposed.within_one == pytest.approx(1 / 3)
    )
    assert agreement([(4, 1), (4, 5)]).correlation is None  # a judge who never varies correlates with nothing
    assert agreement([]).pairs == 0
