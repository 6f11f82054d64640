"""Calibrating the deck judge against people (seed 001 section 2): "calibration is not optional. Without it,
R2's improvement is just judge variance."

``calibrate`` shows the judge every gold example of a rubric exactly as the loop shows it a deck (the same
prompt, memos.pipeline.deck.judging.judge_prompt, with the active rubric version) and compares its integer
scores with the person's, dimension by dimension. ``is_calibrated`` says whether a run's pinned rubric has
passed that check for the scorer model configured now.

The judge is called through the gateway like any call, so a request identical to one the loop made (the same
deck, rubric version, prompt version and model) is answered from the ledger's cache: the calibration then
compares people with the very scores the loop acted on. A new rubric version or scorer model asks afresh.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.deck.narrowing import judgement_schema, quotable_lines
from agents.deck.outline import deck_lines
from agents.deck.outputs import DeckOutput, ScopeOutput
from agents.deck.rubrics import DECK_R1, DECK_R2
from agents.deck.schemas import R1Judgement, R2Judgement
from agents.llm.roles import Role
from agents.llm.types import CallContext
from agents.rubrics import Rubric
from memos.models import AgentStep, ArtefactVersion, Calibration, GoldScore, LLMCall, RubricVersion
from memos.pipeline.deck.calibration import configured_scorer
from memos.pipeline.deck.judging import GATE, SCORER, judge_prompt
from memos.pipeline.deck.plan import SCOPE
from memos.pipeline.gateway import gateway
from memos.pipeline.prompts import pinned_rubric
from memos.services import governance
from memos.services.errors import ServiceError

# Seed 001 asks the judge to land within +-1 of the human score. Demanding it on every pair would fail a
# judge over one odd example; 80% is the usual inter-rater bar for a 0-5 scale (two trained people agree
# within one point about that often), so a judge meeting it disagrees with a person no more than people do.
WITHIN_ONE_BAR = 0.8
# A pass is earned, not copied (issue 31): at least this many distinct decks (one per version line, distinct
# by content: versions of one deck, or one content twice, are one deck) scored by at least this many
# people. One member copying the judge onto three decks, or three members scoring one deck, is no
# measurement of the judge against the committee.
MIN_DECKS = 5
MIN_RATERS = 2
STAGE = "calibration"


@dataclass(frozen=True)
class JudgeCall:
    prompt: str  # the prompt file the loop uses for this rubric
    output: type[R1Judgement] | type[R2Judgement]


JUDGE_CALLS = {
    DECK_R2: JudgeCall(SCORER, R2Judgement),
    DECK_R1: JudgeCall(GATE, R1Judgement),
}


class CalibrationError(ServiceError):
    """Nothing to calibrate: an unknown rubric or no gold scores for it."""


def composite_keys(rubric: Rubric) -> list[str]:
    return [dimension.key for dimension in rubric.objective("composite").dimensions]


def active_rubric(rubric_name: str) -> tuple[RubricVersion, Rubric]:
    if rubric_name not in JUDGE_CALLS:
        raise CalibrationError(f"unknown rubric {rubric_name!r}: one of {', '.join(sorted(JUDGE_CALLS))}")
    pins = governance.current_pins().rubrics
    row = RubricVersion.objects.get(name=rubric_name, content_hash=pins[rubric_name]["hash"])
    return row, pinned_rubric(rubric_name, pins)


# --- gold scores


def gold_score_problems(rubric_name: str, scores: Mapping[str, Any]) -> list[str]:
    """What is wrong with a person's scores against the active version of the rubric: a dimension of its
    composite left out, or one it does not have."""
    _, rubric = active_rubric(rubric_name)
    keys = composite_keys(rubric)
    problems = [f"no score for {key}" for key in keys if key not in scores]
    problems += [f"{rubric_name} has no dimension {key}" for key in sorted(set(scores) - set(keys))]
    return problems


def record_gold_score(
    *, version: ArtefactVersion, rubric_name: str, scores: dict[str, int], user: User
) -> GoldScore:
    gold = GoldScore(version=version, rubric=rubric_name, scores=scores, scored_by=user)
    try:
        gold.full_clean(validate_constraints=False)
    except ValidationError as exc:
        raise ServiceError("; ".join(exc.messages)) from exc
    problems = gold_score_problems(rubric_name, scores)
    if problems:
        raise ServiceError("; ".join(problems))
    try:
        with transaction.atomic():
            gold.save()
    except IntegrityError as exc:  # one_gold_score_per_person_per_version
        raise ServiceError(f"{user} has already scored {version} on {rubric_name}") from exc
    return gold


# --- the check


def judge_scores(
    version: ArtefactVersion, rubric_name: str, rubric: Rubric, *, model_written: Collection[str]
) -> dict[str, int] | None:
    """The judge's integer scores of a frozen deck, asked as the loop asks; None for a deck it cannot be
    shown that way: an escalated deck has no measured values of its own (R1Result keeps none) and no R2,
    and a run whose scope step did not finish has no scope."""
    content = DeckOutput.model_validate(version.content)
    raw_scope = (
        AgentStep.objects.filter(run_id=version.run_id, stage=SCOPE, key=SCOPE, status="done")
        .values_list("output", flat=True)
        .first()
    )
    if content.r2 is None or raw_scope is None:
        return None
    call = JUDGE_CALLS[rubric_name]
    prompt = judge_prompt(
        call.prompt,
        version.run,
        rubric,
        content.deck,
        content.r2.measured,
        ScopeOutput.model_validate(raw_scope),
        protected=call.output is R2Judgement,
        model_written=model_written,
    )
    # Called outside any transaction: a judge call may take a minute, and no lock may wait on it.
    schema = judgement_schema(call.output is R2Judgement, quotable_lines(deck_lines(content.deck)))
    judgement = gateway().complete(
        prompt, schema, context=CallContext(run_id=None, stage=STAGE, role=Role.SCORER)
    )
    return {score.dimension: score.score for score in judgement.scores}


def calibrate(*, rubric_name: str) -> Calibration:
    row, rubric = active_rubric(rubric_name)
    gold = list(
        GoldScore.objects.filter(rubric=rubric_name)
        .select_related("version__run__brief__company")
        .order_by("pk")
    )
    if not gold:
        raise CalibrationError(f"no gold scores for {rubric_name}: add some in the admin first")
    keys = composite_keys(rubric)
    pairs: dict[str, list[tuple[int, int]]] = {key: [] for key in keys}  # (judge, person)
    examples = skipped = 0
    raters: set[int] = set()
    lines: set[tuple[int, str]] = set()
    contents: set[str] = set()
    spend = CalibrationSpend.starting_now()
    for example in gold:
        spend.check(done=examples + skipped, of=len(gold))
        judged = judge_scores(example.version, rubric_name, rubric, model_written=row.model_written_anchors)
        if judged is None:
            skipped += 1
            continue
        examples += 1
        raters.add(example.scored_by_id)
        lines.add((example.version.brief_id, example.version.kind))
        contents.add(example.version.content_hash)
        for key in keys:
            human = example.scores.get(key)
            if isinstance(human, int) and key in judged:
                pairs[key].append((judged[key], human))
    every = [pair for found in pairs.values() for pair in found]
    overall = agreement(every)
    decks = min(len(lines), len(contents))
    return Calibration.objects.create(
        rubric_version=row,
        scorer_model=configured_scorer(),
        examples=examples,
        skipped=skipped,
        decks=decks,
        raters=len(raters),
        pairs=len(every),
        within_one=overall.within_one,
        mean_diff=overall.mean_diff,
        correlation=overall.correlation,
        by_dimension={key: agreement(found).as_json() for key, found in pairs.items()},
        passed=decks >= MIN_DECKS and len(raters) >= MIN_RATERS and overall.within_one >= WITHIN_ONE_BAR,
    )


# What one judge call may cost before the pass has paid for one (a deck's judge prompt and its answer).
FIRST_CALL_ESTIMATE = 20_000


@dataclass
class CalibrationSpend:
    """A calibration pass's budget (``LLM_CALIBRATION_BUDGET_TOKENS``, issue 31, 5): its judge calls belong to
    no run, so the gateway charges them to none; the pass stops before a call that could take it past the
    budget (the costliest call it has paid so far, or ``FIRST_CALL_ESTIMATE`` before the first)."""

    since: datetime
    budget: int | None

    @classmethod
    def starting_now(cls) -> CalibrationSpend:
        return cls(timezone.now(), settings.LLM_SETTINGS.calibration_budget_tokens)

    def check(self, *, done: int, of: int) -> None:
        if self.budget is None:
            return
        paid = LLMCall.objects.filter(run=None, stage=STAGE, created_at__gte=self.since).exclude(
            outcome=LLMCall.Outcome.CACHED
        )
        costs = [
            tokens_in + tokens_out for tokens_in, tokens_out in paid.values_list("tokens_in", "tokens_out")
        ]
        next_call = max(costs, default=FIRST_CALL_ESTIMATE)
        if sum(costs) + next_call > self.budget:
            raise CalibrationError(
                f"the calibration stopped at its token budget ({sum(costs):,} of {self.budget:,} tokens "
                f"spent after {done} of {of} gold examples): raise LLM_CALIBRATION_BUDGET_TOKENS to compare "
                "more"
            )


@dataclass(frozen=True)
class Agreement:
    """The judge against people over (judge, person) score pairs: the figures the run page shows."""

    pairs: int
    within_one: float  # share of pairs within one point
    mean_diff: float  # mean of judge minus person: above 0, the judge scores kinder than people
    mean_abs_diff: float
    correlation: float | None  # Pearson; None when either side never varies (or fewer than two pairs)

    def as_json(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "within_one": self.within_one,
            "mean_diff": self.mean_diff,
            "mean_abs_diff": self.mean_abs_diff,
            "correlation": self.correlation,
        }


def agreement(pairs: Sequence[tuple[int, int]]) -> Agreement:
    if not pairs:
        return Agreement(0, 0.0, 0.0, 0.0, None)
    diffs = [judge - human for judge, human in pairs]
    return Agreement(
        pairs=len(pairs),
        within_one=sum(1 for d in diffs if abs(d) <= 1) / len(diffs),
        mean_diff=sum(diffs) / len(diffs),
        mean_abs_diff=sum(abs(d) for d in diffs) / len(diffs),
        correlation=_pearson(pairs),
    )


def _pearson(pairs: Sequence[tuple[int, int]]) -> float | None:
    if len(pairs) < 2:
        return None
    judges = [float(j) for j, _ in pairs]
    humans = [float(h) for _, h in pairs]
    if len(set(judges)) < 2 or len(set(humans)) < 2:
        return None
    return statistics.correlation(judges, humans)


def agreement_text(found: Mapping[str, Any]) -> str:
    """One calibration figure set (a Calibration's overall figures or one of its ``by_dimension`` entries)
    in words: "within +-1 80%, judge - person +0.40, correlation 0.62, 15 pairs". An older calibration has no
    signed difference or correlation: those parts are left out."""
    parts = [f"within +-1 {found.get('within_one', 0.0):.0%}"]
    if found.get("mean_diff") is not None:
        parts.append(f"judge - person {found['mean_diff']:+.2f}")
    elif found.get("mean_abs_diff") is not None:
        parts.append(f"mean |judge - person| {found['mean_abs_diff']:.2f}")
    if "correlation" in found:
        correlation = found["correlation"]
        parts.append("correlation n/a" if correlation is None else f"correlation {correlation:.2f}")
    parts.append(f"{found.get('pairs', 0)} pairs")
    return ", ".join(parts)


def overall_of(calibration: Calibration) -> dict[str, Any]:
    return {
        "within_one": calibration.within_one,
        "mean_diff": calibration.mean_diff,
        "correlation": calibration.correlation,
        "pairs": calibration.pairs,
    }
