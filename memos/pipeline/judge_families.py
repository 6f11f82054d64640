"""Seed 003's rule, checked once per run: a verdict comes from another model family than the work it judges.

Every workflow declares its verdicts (``Workflow.verdicts``: the judge's role and the roles whose work it
judges). When a run starts, the desk reads each role's family from the settings the run will use
(agents.llm.config.LLMSettings.family_for: declared, or read from the model's name) and keeps the result on
the run and, when it freezes, on the version: a verdict whose judge shares a family with the work it judges is
badged "same family as the work it judges", the two families named, wherever it is shown (its step page, the
run page, the version, e-mails). On the embedded default every role is one model, so every verdict is badged.
``REQUIRE_SEPARATE_JUDGE`` refuses such runs outright (memos.services.runs.start_run), and so does a
workflow's own switch for its runs alone (``Workflow.separate_judge``: the agency's
``AGENCY_REQUIRE_SEPARATE_JUDGE``, the screen's ``SCREEN_REQUIRE_SEPARATE_REVIEWER``), through ``refusal``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.llm.config import LLMSettings

SAME_FAMILY = "Same family as the work it judges"


@dataclass(frozen=True)
class Judged:
    """One verdict a workflow asks for, as the workflow declares it."""

    judge: str  # the verdict's role
    work: tuple[str, ...]  # the roles whose work it judges
    what: str  # the verdict in a reader's words: "the evaluator's grades"
    whose: str  # the work it judges in a reader's words: "the specialists' briefs and the synthesizer's memo"


@dataclass(frozen=True)
class FamilyCheck:
    """A declared verdict with the families it ran on: stored as JSON on the run and its versions."""

    judge: str
    judge_family: str
    work: tuple[str, ...]
    work_families: tuple[str, ...]  # in the order of ``work``
    what: str
    whose: str = ""

    @property
    def shared(self) -> tuple[str, ...]:
        """The judged roles of the judge's own family."""
        return tuple(
            role
            for role, family in zip(self.work, self.work_families, strict=True)
            if family == self.judge_family
        )

    @property
    def same_family(self) -> bool:
        return bool(self.shared)

    @property
    def badge(self) -> str:
        """``Same family as the work it judges: the evaluator's grades (family qwen) judge the specialists'
        briefs and the synthesizer's memo (family qwen).``"""
        if not self.same_family:
            return ""
        # The work in the workflow's words when all of it shares the judge's family, else the roles that do.
        whole = self.whose and set(self.shared) == set(self.work)
        judged = self.whose if whole else "the " + " and the ".join(_spoken(role) for role in self.shared)
        family = self.judge_family
        return f"{SAME_FAMILY}: {self.what} (family {family}) judge {judged} (family {family})."

    @property
    def families_named(self) -> str:
        """Both sides' families, for a verdict that is not badged too: ``judge anthropic · work qwen``."""
        return f"judge {self.judge_family} · work {', '.join(sorted(set(self.work_families)))}"

    def as_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "judge_family": self.judge_family,
            "work": list(self.work),
            "work_families": list(self.work_families),
            "what": self.what,
            "whose": self.whose,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FamilyCheck:
        return cls(
            judge=str(data["judge"]),
            judge_family=str(data["judge_family"]),
            work=tuple(str(role) for role in data["work"]),
            work_families=tuple(str(family) for family in data["work_families"]),
            what=str(data.get("what", "")),
            whose=str(data.get("whose", "")),
        )


def _spoken(role: str) -> str:
    return role.replace("_", " ")


def checked(verdicts: Iterable[Judged], llm: LLMSettings) -> list[FamilyCheck]:
    """Each declared verdict with the families ``llm`` puts its judge and its work on."""
    return [
        FamilyCheck(
            judge=verdict.judge,
            judge_family=llm.family_for(verdict.judge),
            work=verdict.work,
            work_families=tuple(llm.family_for(role) for role in verdict.work),
            what=verdict.what,
            whose=verdict.whose,
        )
        for verdict in verdicts
    ]


def stored(rows: Sequence[Mapping[str, Any]] | None) -> list[FamilyCheck]:
    """The checks kept on a run or a version (a row written by an older version of the desk is skipped)."""
    found = []
    for row in rows or ():
        try:
            found.append(FamilyCheck.from_json(row))
        except (KeyError, TypeError, ValueError):
            continue
    return found


def badges(rows: Sequence[Mapping[str, Any]] | None, *, role: str | None = None) -> list[str]:
    """The badges of the stored checks, or of the one verdict ``role`` gives."""
    return [check.badge for check in stored(rows) if check.same_family and role in (None, check.judge)]


def refusal(checks: Sequence[FamilyCheck], *, setting: str = "REQUIRE_SEPARATE_JUDGE") -> str:
    """Why ``setting`` (the desk's ``REQUIRE_SEPARATE_JUDGE`` or a workflow's own switch) refuses a run, or ""
    when every verdict comes from another family."""
    shared = [check.badge for check in checks if check.same_family]
    if not shared:
        return ""
    return (
        " ".join(shared) + f" This desk requires every verdict from another model family ({setting}): set "
        "LLM_JUDGE_MODEL (and LLM_JUDGE_FAMILY) to a model of another family, or that role's "
        "LLM_MODEL_<ROLE>."
    )
