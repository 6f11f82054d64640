"""The committee's own scores of a deck, given beside its vote, become the judge's gold set (seed 001
section 2: "calibration is not optional").

A committee member who may read a frozen deck gives it one whole score 0-5 on every dimension of the
judge's two composites (the entry bar R1 and the loop's R2; the active rubric versions say which
dimensions there are, each with its anchors). Both rubrics' gold scores are recorded together, once: a score
already compared with the judge is never changed. Once a rubric has gold scores of ``AGREEMENT_AT``
versions, every new score queues the calibration (memos.pipeline.deck.desk.calibration.calibrate) on the
worker, and the deck run page shows its figures (memos.templatetags.calibration).

The rules mirror the vote's: only committee members score; an admin adds gold scores in the admin instead;
whoever owns the brief or started the run does not grade its deck; and a deck that never cleared the entry
bar has no R2 judgement to compare with, so it is not a gold example.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

import django_rq
from django.contrib.auth.models import User
from django.db import transaction
from pydantic import ValidationError

from agents.deck.outputs import DeckOutput
from agents.deck.rubrics import DECK_R1, DECK_R2
from memos.models import ArtefactVersion, Calibration, GoldScore, Run
from memos.models.calibration import DECK_KIND, SCORE_MAX, SCORE_MIN
from memos.pipeline import driver
from memos.pipeline.deck.desk.calibration import (
    CalibrationError,
    active_rubric,
    agreement_text,
    calibrate,
    overall_of,
    record_gold_score,
)
from memos.services.accounts import Roles, has_role
from memos.services.errors import ServiceError
from memos.services.queued import enqueue_once
from memos.services.review import ReviewRefused

log = logging.getLogger(__name__)

# Below this many scored versions, one deck would decide the agreement figures: the run page waits for five.
AGREEMENT_AT = 5
RUBRICS = (DECK_R2, DECK_R1)  # the loop's composite first: it is what a lap's acceptance rests on
FIELD_PREFIX = "score_"


@dataclass(frozen=True)
class DimensionField:
    key: str
    label: str
    anchors: list[tuple[int, str]]
    rubrics: list[str]  # the rubric labels this dimension counts toward ("R2", "R1")

    @property
    def name(self) -> str:
        return f"{FIELD_PREFIX}{self.key}"


@dataclass(frozen=True)
class ScoringPanel:
    """What a committee member sees of the scoring beside the vote on a deck version."""

    fields: list[DimensionField]
    own: dict[str, int]  # the member's recorded scores, by dimension ({} when not scored yet)
    may_score: bool
    not_scoring: str  # why this member may not score this deck ("" otherwise)

    @property
    def points(self) -> list[int]:
        return list(range(SCORE_MIN, SCORE_MAX + 1))

    @property
    def own_rows(self) -> list[tuple[str, int | None]]:
        """The member's recorded scores as (dimension label, score), in the form's order."""
        return [(field.label, self.own.get(field.key)) for field in self.fields]


def rubric_label(rubric_name: str) -> str:
    return "R2" if rubric_name == DECK_R2 else "R1"


def dimension_fields() -> list[DimensionField]:
    """One field per dimension of the active R2 and R1 composites; a key both share is one field."""
    found: dict[str, DimensionField] = {}
    for name in RUBRICS:
        for dimension in active_rubric(name)[1].objective("composite").dimensions:
            if dimension.key in found:
                found[dimension.key].rubrics.append(rubric_label(name))
                continue
            found[dimension.key] = DimensionField(
                dimension.key, dimension.label, sorted(dimension.anchors.items()), [rubric_label(name)]
            )
    return list(found.values())


def why_not_scoring(user: User, version: ArtefactVersion) -> str:
    """Why ``user`` may not score ``version`` on its page ("" when they may). Assumes they may read it."""
    if user.is_superuser:
        return "You add gold scores in the admin, so you do not score here."
    if refusal := whose_deck(user.pk, version):
        return refusal
    if not _judged(version):
        return (
            f"{version.label} has no R2 judgement (it did not clear the entry bar, or was never scored on "
            "R2), so the judge has nothing to compare with yours: it is not a gold example."
        )
    return ""


def whose_deck(scorer_id: int | None, version: ArtefactVersion) -> str:
    """Nobody scores a deck of a brief they own or a run they started: on the deck's page and in the admin
    alike (issue 31: the admin's path skipped this). "" when ``scorer_id`` is neither."""
    if scorer_id in version.analyst_ids:
        return "You own this brief: its deck is scored by the rest of the committee."
    if scorer_id == version.run.created_by_id:
        return "You started this deck's run: it is scored by the rest of the committee."
    return ""


SEALED = (
    "The judge's scores of this deck show once you have scored it yourself: a gold score must be your own "
    "reading, not the judge's copied."
)


def judge_sealed(user: User, version: ArtefactVersion) -> str:
    """Why ``user`` may not see the judge's scores of ``version`` yet ("" when they may): a committee member
    who may score this deck and has not. Whoever may not score it (its analyst, its starter, an admin, any
    deck without an R2 judgement) and every other reader sees them."""
    if version.kind != DECK_KIND or not has_role(user, Roles.COMMITTEE) or why_not_scoring(user, version):
        return ""
    if GoldScore.objects.filter(version=version, scored_by=user).exists():
        return ""
    return SEALED


def judge_sealed_in_run(user: User, run: Run) -> str:
    """``judge_sealed`` for a run's step documents: sealed for a committee member until they have scored the
    deck the run froze, and while it has frozen none (the scores they would see are the deck's to come)."""
    if not has_role(user, Roles.COMMITTEE) or user.is_superuser:
        return ""
    if user.pk in (run.brief.owner_id, run.created_by_id):
        return ""
    version = run.versions.order_by("-number").first()
    return judge_sealed(user, version) if version is not None else SEALED


def scoring_panel(user: User, version: ArtefactVersion) -> ScoringPanel | None:
    """The panel for a committee member on a deck version; None for anyone else or another kind."""
    if version.kind != DECK_KIND or not has_role(user, Roles.COMMITTEE):
        return None
    own: dict[str, int] = {}
    for scores in GoldScore.objects.filter(version=version, scored_by=user).values_list("scores", flat=True):
        own.update(scores)
    not_scoring = why_not_scoring(user, version)
    return ScoringPanel(
        dimension_fields(), own, may_score=not own and not not_scoring, not_scoring=not_scoring
    )


def record_committee_scores(*, version: ArtefactVersion, member: User, answers: Mapping[str, str]) -> None:
    """Record ``member``'s scores of a deck on both rubrics from the form's answers, or refuse with the
    rule it broke and record nothing."""
    if version.kind != DECK_KIND:
        raise ReviewRefused(
            f"only a deck is scored on the judge's rubrics; {version.label} is a {version.kind}"
        )
    if not has_role(member, Roles.COMMITTEE):
        raise ReviewRefused("only committee members score a deck")
    reason = why_not_scoring(member, version)
    if reason:
        raise ReviewRefused(reason)
    fields = dimension_fields()
    scores, problems = _read(fields, answers)
    if problems:
        raise ReviewRefused("; ".join(problems))
    if GoldScore.objects.filter(version=version, scored_by=member).exists():
        raise ReviewRefused(
            f"you have scored {version.label} already; a gold score is not changed once given, since the "
            "judge may have been compared with it"
        )
    try:
        with transaction.atomic():
            for name in RUBRICS:
                keys = [f.key for f in fields if rubric_label(name) in f.rubrics]
                record_gold_score(
                    version=version, rubric_name=name, scores={k: scores[k] for k in keys}, user=member
                )
                calibrate_when_due(name)
    except ServiceError as exc:
        raise ReviewRefused(str(exc)) from exc


def _read(fields: list[DimensionField], answers: Mapping[str, str]) -> tuple[dict[str, int], list[str]]:
    scores: dict[str, int] = {}
    missing: list[str] = []
    wrong: list[str] = []
    for field in fields:
        raw = (answers.get(field.name) or "").strip()
        if not raw:
            missing.append(field.label)
        elif not raw.isdigit() or not SCORE_MIN <= int(raw) <= SCORE_MAX:
            wrong.append(field.label)
        else:
            scores[field.key] = int(raw)
    problems = []
    if missing:
        problems.append(f"give every dimension a score: {', '.join(missing)} has none")
    if wrong:
        problems.append(f"a score is a whole number {SCORE_MIN}-{SCORE_MAX}: {', '.join(wrong)}")
    return scores, problems


def _judged(version: ArtefactVersion) -> bool:
    try:
        return DeckOutput.model_validate(version.content).r2 is not None
    except ValidationError:
        return False


# --- the calibration the scores feed


def scored_versions(rubric_name: str) -> int:
    return GoldScore.objects.filter(rubric=rubric_name).values("version").distinct().count()


def calibrate_when_due(rubric_name: str) -> bool:
    """Queue the judge's calibration on ``rubric_name`` once the surrounding transaction commits, when its
    gold set holds ``AGREEMENT_AT`` scored versions or more. Whether it was queued."""
    if scored_versions(rubric_name) < AGREEMENT_AT:
        return False
    queue_calibration(rubric_name)
    return True


def queue_calibration(rubric_name: str) -> None:
    """One calibration per rubric waits at a time: the scores given while one waits are read when it runs,
    and those given while one runs get one more after it (issue 31 L9: each score queued its own)."""
    queue = django_rq.get_queue(driver.QUEUE)
    transaction.on_commit(
        lambda: enqueue_once(
            queue,
            f"calibrate-judge-{rubric_name}",
            run_calibration,
            rubric_name,
            description=f"calibrate the deck judge on {rubric_name}",
            again_after_running=True,
        )
    )


def run_calibration(rubric_name: str) -> dict[str, object]:
    """The worker's job: the judge scores every gold example again (the ledger answers a request it has
    seen) and the comparison is stored as a Calibration."""
    try:
        result: Calibration = calibrate(rubric_name=rubric_name)
    except CalibrationError as exc:
        log.warning("calibration of %s not run: %s", rubric_name, exc)
        return {"rubric": rubric_name, "error": str(exc)}
    return {"rubric": rubric_name, "calibration": result.pk, "passed": result.passed}


# --- the figures a deck run page shows


@dataclass(frozen=True)
class RubricAgreement:
    """How far the judge's rubric, as this run pinned it, agrees with the committee."""

    rubric: str  # "R2" or "R1"
    label: str
    version: int | None  # the rubric version the run's judge used
    scored: int  # versions the committee has scored on this rubric
    calibration: Calibration | None  # the latest of the run's version on the scorer model in use
    overall: str  # the figures in words ("" before there are any)
    dimensions: list[tuple[str, str]]  # (dimension, figures in words)
    note: str  # what is missing, when figures are not shown


def agreement_rows(run_rubrics: Mapping[str, object], scorer_model: str) -> list[RubricAgreement]:
    """Each judge rubric's agreement figures for a run that pinned ``run_rubrics`` (Run.rubric_versions):
    shown once the committee has scored ``AGREEMENT_AT`` versions and a calibration of that rubric version
    on ``scorer_model`` exists."""
    rows = []
    for name in RUBRICS:
        pin = run_rubrics.get(name)
        pinned_hash = pin.get("hash") if isinstance(pin, Mapping) else None
        pinned_version = pin.get("version") if isinstance(pin, Mapping) else None
        scored = scored_versions(name)
        latest = (
            Calibration.objects.filter(
                rubric_version__name=name,
                rubric_version__content_hash=pinned_hash,
                scorer_model=scorer_model,
            ).first()
            if isinstance(pinned_hash, str)
            else None
        )
        label = rubric_label(name)
        what = "the refinement loop's composite" if name == DECK_R2 else "the entry bar"
        version = pinned_version if isinstance(pinned_version, int) else None
        if scored < AGREEMENT_AT:
            note = (
                f"{scored} of {AGREEMENT_AT} decks scored by the committee: the judge's agreement with "
                f"people shows here at {AGREEMENT_AT} (a committee member scores a deck on its version page)."
            )
            rows.append(RubricAgreement(label, what, version, scored, None, "", [], note))
        elif latest is None:
            note = (
                f"The committee has scored {scored} decks; the judge has not yet been compared with them on "
                f"{label} v{version} and {scorer_model} (the worker queues it after each new score; an admin "
                "runs it from the Calibrations page)."
            )
            rows.append(RubricAgreement(label, what, version, scored, None, "", [], note))
        else:
            dimensions = [(key, agreement_text(found)) for key, found in latest.by_dimension.items()]
            rows.append(
                RubricAgreement(
                    label, what, version, scored, latest, agreement_text(overall_of(latest)), dimensions, ""
                )
            )
    return rows
