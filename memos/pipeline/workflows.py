"""A workflow, declared once: everything the engine, the pages, the form, the commands, the freeze and the
fake LLM server need to know about it, so adding a workflow means adding its package (here under
``memos/pipeline/<workflow>/``, its rules under ``agents/<workflow>/``, its prompts), and nothing else.

A workflow is an ordered tuple of stages (each a body that takes a ``StageContext``), the steps a run of it
plans from the run's configuration, the kinds of step it writes (each with its pydantic output type, the
template that draws it and a one-line summary), how it decides the finished run's status, what it freezes
as a version and what freezing binds, the profiles a person chooses from and the configuration each gives a
run, the rubrics whose keys its code reads, and the module of canned answers the fake LLM server gives its
roles. The driver, the watchdog, the run page, the live updates, the brief form, the run commands and
freezing (memos.services.versions) work from this alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from agents.rubrics import Contract
from agents.text.repair import SectionRepair
from memos.pipeline.breadth import Breadth
from memos.pipeline.judge_families import Judged

if TYPE_CHECKING:
    from agents.llm.warm import WarmPrompt
    from memos.models import AgentStep, ArtefactVersion, Run
    from memos.pipeline.context import StageContext

OutputT = TypeVar("OutputT", bound=BaseModel)


# The page of a finished step whose kind names no template: its typed output, field by field.
PLAIN_STEP_TEMPLATE = "memos/step_documents/output.html"


@dataclass(frozen=True)
class StepKind(Generic[OutputT]):
    """One kind of step document: how its output is typed, drawn and summarised."""

    name: str
    output: type[OutputT]
    # The step document's template (the drawer and the step page include it); "" for the plain page.
    template: str
    summarise: Callable[[OutputT], str]

    @property
    def page(self) -> str:
        return self.template or PLAIN_STEP_TEMPLATE

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
    # Its calls that run side by side, each with why it may (memos.pipeline.fanout.Breadth): shown under
    # the stage's heading on the run page.
    fan_outs: tuple[Breadth, ...] = ()


@dataclass(frozen=True)
class Ending:
    """How a finished run ends: its status (done or needs review) and the message shown with it."""

    status: str
    message: str


@dataclass(frozen=True)
class Unfinished:
    """A part of a run that did not finish (a step that failed: a reading, a debate, a persona, a
    specialist), named with the reason in words. A version that carries any is partial: it says so above
    everything, and no vote opens on it until its analyst accepts it as partial (memos.services.review)."""

    step: str  # the step's title, as the run page shows it
    reason: str
    stage: str = ""
    key: str = ""

    def as_json(self) -> dict[str, str]:
        return {"step": self.step, "reason": self.reason, "stage": self.stage, "key": self.key}


@dataclass(frozen=True)
class Artefact:
    """What a finished run freezes as the next version of its brief (memos.services.versions), built by code
    from the run's outputs: nothing here is asked of a model. ``unfinished`` is the engine's to fill (every
    failed step of the run, memos.pipeline.steps.unfinished_parts), never a workflow's to forget."""

    kind: str  # the workflow's name: memo, deck, agency, screen
    title: str
    content: dict[str, Any]  # the typed output, as JSON
    sections: dict[str, str]  # section -> plain text, in reading order: the version's text and its diff
    evaluated: bool  # an evaluator's verdict stands behind it: the committee may vote on it
    score: float | None = None  # the headline score its versions are compared on
    score_label: str = ""
    scores: dict[str, Any] = field(default_factory=dict)
    cited: tuple[str, ...] = ()  # fact and document ids, resolved to their records when frozen
    unfinished: tuple[Unfinished, ...] = ()


Subject = Literal["company", "watchlist"]


class ConfigurationError(ValueError):
    """A run that cannot be configured as asked (an unknown profile, a rubric out of bounds); the message is
    for the person who asked."""


@dataclass(frozen=True)
class RunRequest:
    """What a run of a workflow is configured from: the profile a person chose, the rubric versions the run
    pins, options a caller adds (a refinement cycle's base version, a screen's strategy), and the brief's
    watchlist (a screen's symbols; empty for a brief about a company)."""

    profile: str
    rubric_pins: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class Workflow:
    name: str  # stored in Run.workflow
    choice: str  # how the brief form offers it
    subject: Subject  # what its briefs are about: one company, or a watchlist of symbols
    stages: tuple[Stage, ...]
    kinds: Mapping[str, StepKind[Any]]
    plan: Callable[[Mapping[str, Any]], list[PlannedStep]]  # from the run's config
    ending: Callable[[StageContext], Ending]
    # Profile name -> what it means, in the form's words ("3 specialists, 1 synthesis iteration").
    profiles: Callable[[], Mapping[str, str]]
    # The run's config (Run.config) for a request; ConfigurationError when it cannot be met.
    configure: Callable[[RunRequest], dict[str, Any]]
    # The run page's line about a run's config ("quick · 3 specialists · 1 iteration").
    describe: Callable[[Mapping[str, Any]], str]
    notices: Callable[[Sequence[AgentStep]], list[str]] = field(default=lambda steps: [])
    # Frozen when a run of it completes; it may answer None when the run made nothing new (nothing is frozen).
    artefact: Callable[[StageContext], Artefact | None] | None = None
    # What freezing binds to the new version beyond the version itself (the memo's falsifier watches), called
    # inside the freezing transaction once the version and its files are stored.
    on_frozen: Callable[[ArtefactVersion], None] | None = None
    # The rubrics its code scores with, by name, and the keys the code reads from each (agents.rubrics).
    rubrics: Mapping[str, Contract] = field(default_factory=dict)
    # The module whose FAKE_ROLES answer its roles on the fake LLM server (agents.llm.fakes.server).
    fakes: str | None = None
    # Answers scripted for one run (they cite what that run is shown), for rehearsing it on the fake server
    # (bench_run, demos, tests); None when FAKE_ROLES' answers serve any run of it.
    rehearsal: Callable[[Run], dict[str, list[Any]]] | None = None
    # A watchlist workflow: the symbols it runs on when a person names none (the screen's demo strategy's);
    # ConfigurationError when it has none to offer.
    default_watchlist: Callable[[], list[str]] = field(default=lambda: [])
    # The module whose SURFACE declares what the rest of the desk shows and does for it: its step pages,
    # its part of a version's page, the files frozen with a version, its export, URLs, schedules and command
    # (memos.services.surfaces). Named, never imported, by the engine; "" for the plain surface.
    surface: str = ""
    # A template the run page shows under its header (it gets the run and the user), or "".
    run_banner: str = ""
    # The step kinds whose cards and documents carry an evaluator's scores that a reader may not see yet (a
    # deck's judge, sealed from a committee member until they have scored the deck: who is sealed is the
    # desk's rule, memos.services.surfaces.StepPages.sealed); the run page and its live updates draw such
    # a card without its summary for them.
    sealed_kinds: frozenset[str] = frozenset()
    # Its run page draws the stages side by side as a pipeline of layers, each zooming into a view of its
    # agents and their documents (seed 004's frontend); otherwise as a column of foldable bands.
    layered: bool = False
    # Its runs start other runs as their parts (the week: its screen and memos), charged to its budget as
    # they spend: its status line counts their tokens too. Only such a run's line reads its parts.
    starts_parts: bool = False
    # What a reader got of a finished run's prose, section by section: sentences written, withheld, and
    # repaired by each lever (agents.text.repair), for ``manage.py reader_report``.
    reader_text: Callable[[Run], list[SectionRepair]] | None = None
    # The run's token budget, from its config and the desk's default (``LLM_RUN_BUDGET_TOKENS``; None when
    # budgets are off): a workflow whose runs make hundreds of calls sizes its own.
    budget: Callable[[Mapping[str, Any], int | None], int | None] = field(
        default=lambda config, default: default
    )
    # The verdicts its runs ask for: each judge's role and the roles whose work it judges. The desk checks
    # their model families when a run starts and badges a verdict of the work's own family (seed 003,
    # memos.pipeline.judge_families).
    verdicts: tuple[Judged, ...] = ()
    # A switch of the workflow's own asking what REQUIRE_SEPARATE_JUDGE asks, for its runs alone (the agency's
    # and the screen's older settings): the setting's name when it is on, "" when off. start_run refuses
    # through the one check either way (memos.pipeline.judge_families.refusal).
    separate_judge: Callable[[], str] = field(default=lambda: "")
    # The models a run's config names per role (a screen's strategy), over the desk's settings; {} for none.
    run_models: Callable[[Mapping[str, Any]], Mapping[str, str]] = field(default=lambda config: {})
    # How long one job may hold a worker for a run of it (seconds), where its runs outlast the queue's
    # default (agency.settings.RQ_QUEUES, an hour): the week runs its parts inside its own job.
    job_timeout_s: int | None = None
    # Whether the brief form offers it: the desk's week is started by its schedule, its command and the home
    # page's "Run this week now", never as a brief a person types.
    offered: bool = True
    # The system texts its roles begin every call with, for a model server on this machine to read before
    # any run (``manage.py warm_model``, started by scripts/run.sh); ``run`` pins the versions to read.
    warm_prompts: Callable[[Run], Sequence[WarmPrompt]] = field(default=lambda run: ())
    # What a worker makes once, before it forks its work-horses (memos.pipeline.worker.warm_up), that every
    # run of it would otherwise make on its path: a deck's 16:9 PPTX template.
    warm_process: Callable[[], object] = field(default=lambda: None)

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
