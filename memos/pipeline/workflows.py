"""What the run engine needs to know about a workflow, and nothing more.

A workflow is an ordered tuple of stages (each a body that takes a ``StageContext``), the steps a run of it
plans from the run's configuration, the kinds of step it writes (each with its pydantic output type, the
template that draws it and a one-line summary), how it decides the finished run's status, what it freezes
as a version and what freezing binds. The driver, the watchdog, the run page, the live updates and freezing
(memos.services.versions) work from this description alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from memos.models import AgentStep, ArtefactVersion
    from memos.pipeline.context import StageContext

OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass(frozen=True)
class StepKind(Generic[OutputT]):
    """One kind of step document: how its output is typed, drawn and summarised."""

    name: str
    output: type[OutputT]
    template: str  # the step document's template (the drawer and the step page include it)
    summarise: Callable[[OutputT], str]

    def summary(self, output: BaseModel) -> str:
        if not isinstance(output, self.output):
            raise TypeError(f"a {self.name} step stores {self.output.__name__}, not {type(output).__name__}")
        return self.summarise(output)[:200]


@dataclass(frozen=True)
class PlannedStep:
    stage: str
    key: str
    kind: str
    title: str
    role: str = ""
    position: int = 0


@dataclass(frozen=True)
class Stage:
    name: str
    label: str  # the run page's heading for the stage
    blurb: str  # one line under it: what happens there and who does it
    body: Callable[[StageContext], None]


@dataclass(frozen=True)
class Ending:
    """How a finished run ends: its status (done or needs review) and the message shown with it."""

    status: str
    message: str


@dataclass(frozen=True)
class Artefact:
    """What a finished run freezes as the next version of its brief (memos.services.versions), built by code
    from the run's outputs: nothing here is asked of a model."""

    kind: str  # memo, deck, moves, screen
    title: str
    content: dict[str, Any]  # the typed output, as JSON
    sections: dict[str, str]  # section -> plain text, in reading order: the version's text and its diff
    evaluated: bool  # an evaluator's verdict stands behind it: the committee may vote on it
    score: float | None = None  # the headline score its versions are compared on
    score_label: str = ""
    scores: dict[str, Any] = field(default_factory=dict)
    cited: tuple[str, ...] = ()  # fact and document ids, resolved to their records when frozen


@dataclass(frozen=True)
class Workflow:
    name: str
    stages: tuple[Stage, ...]
    kinds: Mapping[str, StepKind[Any]]
    plan: Callable[[Mapping[str, Any]], list[PlannedStep]]  # from the run's config
    ending: Callable[[StageContext], Ending]
    notices: Callable[[Sequence[AgentStep]], list[str]] = field(default=lambda steps: [])
    # Frozen when a run of it completes; it may answer None when the run made nothing new (nothing is frozen).
    artefact: Callable[[StageContext], Artefact | None] | None = None
    # What freezing binds to the new version beyond the version itself (the memo's falsifier watches), called
    # inside the freezing transaction once the version and its files are stored.
    on_frozen: Callable[[ArtefactVersion], None] | None = None

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)

    @property
    def first_stage(self) -> str:
        return self.stages[0].name

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(f"the {self.name} workflow has no stage {name!r}")

    def following(self, name: str) -> str | None:
        names = self.stage_names
        index = names.index(name)
        return names[index + 1] if index + 1 < len(names) else None

    def is_past(self, current: str, stage: str) -> bool:
        """Whether a run at ``current`` has already finished ``stage``."""
        names = self.stage_names
        return current in names and stage in names and names.index(current) > names.index(stage)

    def kind(self, name: str) -> StepKind[Any]:
        return self.kinds[name]

    def planned(self, config: Mapping[str, Any], stage: str, key: str) -> PlannedStep:
        for step in self.plan(config):
            if (step.stage, step.key) == (stage, key):
                return step
        raise KeyError(f"the {self.name} workflow plans no step {stage}/{key}")
