"""Rubrics as data: a YAML file (``prompts/rubrics/*.yaml``) or a stored version of one, parsed and checked.

    name: deck_r2                   # what a run pins it by
    title: R2, loop improvement rubric
    workflow: deck
    scale: {min: 0, max: 5}         # every dimension is scored on this scale
    gates:                          # binary conditions (hard gates, protected invariants); may be empty
      - {key: truth, label: Truth, measured_by: deterministic fact-check, rule: Every figure traces ...}
    objectives:                     # one or more weighted groups of dimensions
      - key: composite
        label: R2 composite
        goal: maximize              # or minimize (the memo's J-)
        composite_max: 5            # the composite's top: composite_max * sum(weight * score) / scale.max
        dimensions:
          - key: actionability
            label: Actionability
            weight: 0.25            # the weights of one objective sum to 1
            anchors: {5: every section ends in a decision-relevant takeaway}   # what a level looks like
            examples: {5: "Risk: a take-rate cut would erase the gain, so hold at half."}  # a quoted example
    thresholds: {ship_bar: 4.3, min_improvement: 0.15}
    calibration: [...]              # optional: the judge's anti-inflation anchors, as the seed words them

Code computes every composite from the weights here (``composite``), so changing a weight changes the score
with no code change. ``CONTRACTS`` names, per rubric the code reads, the dimension, gate and threshold keys it
relies on: a version that drops or renames one is refused, like a prompt that loses a placeholder. A contract
may also ask for every level anchored (``anchored``): each score of the scale with its descriptor and a quoted
example sentence a judge compares against (seed 000: "each score level has a quoted example, not just an
adjective"; seed 001: "concrete descriptors at each scale point"). The workflows' rubrics ask for it, so the
files at start-up and every new version are refused with a level left bare; a version stored before examples
existed still reads back for the runs that pinned it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.llm.hashing import sha256_hex

WEIGHT_TOLERANCE = 1e-6
Key = str


class RubricError(ValueError):
    """A rubric that cannot be used; the message names the rubric and the problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(_Strict):
    min: int = Field(ge=0)
    max: int = Field(gt=0)


class Dimension(_Strict):
    key: Key = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str = Field(min_length=1)
    weight: float = Field(ge=0, le=1)
    # Score -> what that score looks like: "anchor each dimension with concrete descriptors" (seed 001 s.2).
    anchors: dict[int, str] = Field(min_length=1)
    # Score -> a quoted example of that score: a sentence of the artefact a judge compares against.
    examples: dict[int, str] = {}

    def anchor(self, score: int) -> str:
        """The level as a judge reads it: its descriptor, then its example quoted ("" for neither)."""
        words, example = self.anchors.get(score, ""), self.examples.get(score, "")
        if not example:
            return words
        return f'{words}, e.g. "{example}"' if words else f'e.g. "{example}"'

    def levels(self) -> list[tuple[int, str, str]]:
        """(score, descriptor, example) for every score with either, lowest first."""
        scores = sorted(self.anchors.keys() | self.examples.keys())
        return [(score, self.anchors.get(score, ""), self.examples.get(score, "")) for score in scores]


class Objective(_Strict):
    key: Key = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str = Field(min_length=1)
    goal: Literal["maximize", "minimize"]
    composite_max: float = Field(gt=0)
    dimensions: list[Dimension] = Field(min_length=1)

    def weights(self) -> dict[str, float]:
        return {d.key: d.weight for d in self.dimensions}


class Gate(_Strict):
    key: Key = Field(pattern=r"^[a-z][a-z0-9_]*$")
    label: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    measured_by: str = ""


class Rubric(_Strict):
    name: str = Field(pattern=r"^[a-z0-9_.-]+$")
    title: str = Field(min_length=1)
    workflow: str = ""
    scale: Scale
    gates: list[Gate] = []
    objectives: list[Objective] = Field(min_length=1)
    thresholds: dict[str, float] = {}
    calibration: list[str] = []

    def objective(self, key: str) -> Objective:
        for objective in self.objectives:
            if objective.key == key:
                return objective
        raise KeyError(f"rubric {self.name!r} has no objective {key!r}")

    def composite(self, objective: str, scores: Mapping[str, float]) -> float:
        """The objective's composite on its 0..composite_max scale: composite_max * sum(w * s) / scale.max,
        rounded to two decimals (a whole number when it is one, as the memo's J+ and J- always were)."""
        found = self.objective(objective)
        missing = [d.key for d in found.dimensions if d.key not in scores]
        if missing:
            raise KeyError(f"rubric {self.name!r}: no score for {', '.join(missing)}")
        weighted = sum(d.weight * scores[d.key] for d in found.dimensions)
        value = round(found.composite_max * weighted / self.scale.max, 2)
        return int(value) if value.is_integer() else value


@dataclass(frozen=True)
class Contract:
    """What code relies on in one rubric: the keys it reads. A version may retune everything else."""

    dimensions: Mapping[str, tuple[str, ...]]  # objective key -> its dimension keys, in order
    thresholds: frozenset[str]
    gates: frozenset[str] = frozenset()
    # Every score of the scale needs its descriptor and a quoted example (see the module's docstring).
    anchored: bool = False


def parse_rubric(raw: bytes, *, origin: str, contract: Contract | None = None) -> Rubric:
    """Check one rubric's bytes (and, given its workflow's ``contract``, that it keeps what the code reads);
    every problem is a ``RubricError`` naming ``origin`` and the problem."""
    try:
        data: Any = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RubricError(f"{origin}: the rubric is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RubricError(f"{origin}: a rubric is a YAML mapping (name, title, scale, objectives, ...)")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        errors = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(rubric)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise RubricError(f"{origin}: bad rubric: {errors}") from exc
    problems = rubric_problems(rubric, contract)
    if problems:
        raise RubricError(f"{origin}: " + "; ".join(problems))
    return rubric


def rubric_problems(rubric: Rubric, contract: Contract | None = None) -> list[str]:
    """What makes a well-formed rubric unusable: weights not summing to 1, anchors off the scale, duplicate
    keys, a threshold that is not a number, and anything its ``contract`` (the workflow's) needs that is
    gone."""
    problems: list[str] = []
    if rubric.scale.min >= rubric.scale.max:
        problems.append(f"the scale's min ({rubric.scale.min}) must be below its max ({rubric.scale.max})")
    _unique(problems, "objective", [o.key for o in rubric.objectives])
    _unique(problems, "gate", [g.key for g in rubric.gates])
    for objective in rubric.objectives:
        _unique(problems, f"dimension of {objective.key!r}", [d.key for d in objective.dimensions])
        total = sum(d.weight for d in objective.dimensions)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            problems.append(f"the weights of {objective.label!r} sum to {total:.4g}, not 1")
        for dimension in objective.dimensions:
            for what, scores in (("anchors", dimension.anchors), ("examples", dimension.examples)):
                off = sorted(s for s in scores if not rubric.scale.min <= s <= rubric.scale.max)
                if off:
                    problems.append(
                        f"dimension {dimension.key!r} {what} scores {off} outside the scale "
                        f"{rubric.scale.min}-{rubric.scale.max}"
                    )
            problems.extend(
                f"dimension {dimension.key!r} has an empty {what} at level {score}"
                for what, scores in (("anchor", dimension.anchors), ("example", dimension.examples))
                for score, text in sorted(scores.items())
                if not text.strip()
            )
    for name, value in rubric.thresholds.items():
        if not math.isfinite(value):
            problems.append(f"threshold {name!r} is not a finite number")
    if contract is not None:
        problems.extend(contract_problems(rubric, contract))
    return problems


def contract_problems(rubric: Rubric, contract: Contract) -> list[str]:
    problems: list[str] = []
    objectives = {o.key: o for o in rubric.objectives}
    for key, wanted in contract.dimensions.items():
        if key not in objectives:
            problems.append(f"objective {key!r} is missing; the code scores it")
            continue
        have = tuple(d.key for d in objectives[key].dimensions)
        if set(have) != set(wanted):
            gone, new = sorted(set(wanted) - set(have)), sorted(set(have) - set(wanted))
            problems.append(
                f"the dimensions of {key!r} must stay {', '.join(wanted)} (the scoring schema's fields)"
                + (f"; missing {', '.join(gone)}" if gone else "")
                + (f"; unknown {', '.join(new)}" if new else "")
            )
    missing = sorted(contract.thresholds - rubric.thresholds.keys())
    if missing:
        problems.append(f"threshold(s) {', '.join(missing)} are missing; the code reads them")
    gates = sorted(contract.gates - {g.key for g in rubric.gates})
    if gates:
        problems.append(f"gate(s) {', '.join(gates)} are missing")
    if contract.anchored:
        problems.extend(unanchored(rubric))
    return problems


def unanchored(rubric: Rubric) -> list[str]:
    """Each dimension's levels without a descriptor or without a quoted example, in words a rubric's editor
    acts on: which dimension, which levels, and what each level needs."""
    problems: list[str] = []
    levels = range(rubric.scale.min, rubric.scale.max + 1)
    for objective in rubric.objectives:
        for dimension in objective.dimensions:
            for what, scores in (("anchor", dimension.anchors), ("quoted example", dimension.examples)):
                bare = [str(level) for level in levels if not scores.get(level, "").strip()]
                if bare:
                    problems.append(
                        f"dimension {dimension.key!r} has no {what} at level {', '.join(bare)}: every level "
                        f"{rubric.scale.min}-{rubric.scale.max} needs a descriptor (anchors) and a quoted "
                        "example a judge compares against (examples)"
                    )
    return problems


def shape(rubric: Rubric) -> tuple[object, ...]:
    """The keys code could rely on (objectives, dimensions, gates, thresholds): two versions with the same
    shape are interchangeable for the code; a retuned weight, anchor or threshold value keeps the shape."""
    return (
        tuple((o.key, tuple(d.key for d in o.dimensions)) for o in rubric.objectives),
        tuple(sorted(g.key for g in rubric.gates)),
        tuple(sorted(rubric.thresholds)),
    )


def content_hash(raw: bytes) -> str:
    return sha256_hex(raw)


def _unique(problems: list[str], what: str, keys: list[str]) -> None:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            problems.append(f"{what} key {key!r} appears twice")
        seen.add(key)
