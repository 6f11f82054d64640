"""What a stage body is given: its run, its workflow, and writes that only land while it holds the run.

Every write goes through the claim's fence (memos.pipeline.claims), so a stage whose worker was presumed
dead cannot overwrite the work of the worker that took over. Outputs are pydantic models in, pydantic
models out: a step's JSON is written from its kind's type and read back through it.

Marking a step running only redraws its card, so it is written in the background while the step's LLM call
is already under way; every later write of the stage (and the end of the stage) first waits for it, so the
writes land in order and a lost lease still stops the stage.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db.models.functions import Collate
from django.utils import timezone
from pydantic import BaseModel, ValidationError

from agents.llm.errors import BudgetExceeded, InvalidOutput, LLMError, ProviderFailure, TransientFailure
from agents.text.storable import storable, storable_json
from memos.jsonb import jsonb_text
from memos.models import AgentStep, Company, Run
from memos.pipeline import claims, fanout
from memos.pipeline.breadth import Breadth
from memos.pipeline.cards import publish_status, publish_step
from memos.pipeline.claims import Hold
from memos.pipeline.earlier import EarlierSteps, FinishedStep, PreparedOutput
from memos.pipeline.errors import UNREADABLE, StageFailed, shown
from memos.pipeline.workflows import Workflow

T = TypeVar("T", bound=BaseModel)
InputsT = TypeVar("InputsT")
Status = AgentStep.Status

log = logging.getLogger(__name__)
# How long ``prepare_next`` waits for its stage's calls to be sent: long enough for a call's ledger lookup,
# reservation and slot (a few milliseconds), short enough that a call queued behind the concurrency bound
# does not hold up what is made meanwhile.
SENDING_WAIT_S = 0.1


@dataclass
class StageContext:
    run: Run  # as it was when claimed, with its brief and company
    workflow: Workflow
    hold: Hold
    _steps: dict[str, AgentStep] | None = field(default=None, repr=False)
    _pending: list[Future[None]] = field(default_factory=list, repr=False)
    # Earlier stages' finished steps, read once (or handed on by the stage before: memos.pipeline.earlier):
    # they cannot change while this stage runs. Raw outputs by (stage, key) in plan order, with each step's
    # kind, and the typed outputs already parsed from them.
    _earlier: dict[tuple[str, str], FinishedStep] | None = field(default=None, repr=False)
    _parsed: dict[tuple[str, str, type[BaseModel]], BaseModel] = field(default_factory=dict, repr=False)
    # This stage's finished steps as stored (read back finished, or written here): what it hands on.
    _finished: dict[str, FinishedStep] = field(default_factory=dict, repr=False)
    _inputs: dict[Callable[[StageContext], Any], Any] = field(default_factory=dict, repr=False)
    # This stage's finished outputs as parsed, with the write each was parsed from.
    _parsed_here: dict[tuple[str, type[BaseModel]], tuple[FinishedStep, BaseModel]] = field(
        default_factory=dict, repr=False
    )
    # What this stage prepared for the next one (prepare_next), handed on with its steps.
    _prepared: dict[str, PreparedOutput] = field(default_factory=dict, repr=False)

    @property
    def run_id(self) -> str:
        return str(self.run.pk)

    @property
    def company(self) -> Company:
        """The company the run's brief is about; a workflow about companies never meets a watchlist's brief
        (memos.services.runs.start_run refuses it), so one here is a broken row, and the stage fails."""
        company = self.run.brief.company
        if company is None:
            raise StageFailed(
                f"the {self.workflow.name} workflow needs a company, and this brief is a watchlist"
            )
        return company

    @property
    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = self.run.config
        return config

    def inputs(self, build: Callable[[StageContext], InputsT]) -> InputsT:
        """The workflow's typed inputs (what its stages read of the run and its earlier stages), built by
        ``build`` once per stage and kept for it."""
        if build not in self._inputs:
            self._inputs[build] = build(self)
        found: InputsT = self._inputs[build]
        return found

    def check(self) -> None:
        """Stop before more work (an LLM call) if the stage is no longer this worker's."""
        self.hold.check()

    # --- steps of this stage

    def step(self, key: str) -> AgentStep:
        """This stage's step ``key``: planned when the run started, or made from the plan now."""
        step = self.planned_step(key)
        if step is not None:
            return step
        assert self._steps is not None  # read by planned_step
        planned = self.workflow.planned(self.config, self.hold.stage, key)
        step, created = AgentStep.objects.get_or_create(
            run_id=self.run.pk,
            stage=planned.stage,
            key=key,
            defaults={
                "kind": planned.kind,
                "title": planned.title,
                "role": planned.role,
                "position": planned.position,
            },
        )
        self._steps[key] = step
        step.run = self.run
        if created:
            publish_step(step)
        return step

    def planned_step(self, key: str) -> AgentStep | None:
        """This stage's step ``key`` if the run has it, without making one."""
        if self._steps is None:
            self._read_steps()
        assert self._steps is not None
        step = self._steps.get(key)
        if step is not None:
            step.run = self.run  # the card is drawn from the run already in hand, not a query per write
        return step

    # --- resumable steps: what a stage does for each of its steps, once

    def once(self, key: str, output_type: type[T], make: Callable[[], T]) -> T | None:
        """Step ``key``'s output: read back if the step finished before (a resumed stage redoes nothing
        and pays for nothing), else made now by ``make``, the step marked running meanwhile and recorded
        when made. None for a step marked skipped. An error from ``make`` leaves the step unfinished."""
        step = self.step(key)
        if step.status == Status.SKIPPED:
            return None
        if step.status == Status.DONE:
            return output_type.model_validate(step.output)
        self.start(step)
        output = make()
        self.finish(step, output)
        return output

    def once_or_failed(self, key: str, output_type: type[T], make: Callable[[], T]) -> T | None:
        """``once`` for a step the rest of the run can do without (a review, an overall view): when its
        model's answer does not fit its schema twice, or its endpoint fails, or stays down past the run's
        attempts, the step is marked failed with the reason in words and None is returned, so the run
        goes on and ends needing review, its version frozen partial, saying what did not finish (a retry
        asks only what failed). A spent budget, a broken prompt or a refused endpoint still ends the run."""
        try:
            return self.once(key, output_type, make)
        except (InvalidOutput, ProviderFailure, TransientFailure) as exc:
            if isinstance(exc, TransientFailure) and self.hold.attempt < claims.max_attempts():
                raise  # the endpoint may answer later: the engine resumes this stage (bounded)
            failure = exc
        step = self.step(key)
        self.fail_step(step, f"{step.title}: {shown(failure)}")
        return None

    def fan_out(
        self, work: Mapping[str, Callable[[], T]], output_type: type[T], *, limit: int, breadth: Breadth
    ) -> dict[str, T]:
        """Seed 003's fan-out for this stage's steps ``work`` (key -> what makes its output): the finished
        ones are read back, the others run at once, at most ``limit`` at a time, each recorded as soon as it
        arrives (a killed worker loses at most the calls in flight, and the ledger answers those that had
        completed). A step whose call failed is marked failed with the reason and the others go on; a spent
        budget is raised once every call has ended. Returns the finished outputs, in ``work``'s order."""
        steps = {key: self.step(key) for key in work}
        done = {
            key: output_type.model_validate(step.output)
            for key, step in steps.items()
            if step.status == Status.DONE
        }
        todo = [key for key, step in steps.items() if step.status not in (Status.DONE, Status.SKIPPED)]
        finished = fanout.in_parallel(((key, work[key]) for key in todo), limit=limit, breadth=breadth)
        self.start_all([steps[key] for key in todo])  # marked running while the calls are already in flight
        spent: BudgetExceeded | None = None
        for key, future in finished:
            try:
                output = future.result()
            except LLMError as exc:
                self.fail_step(steps[key], f"{steps[key].title}: {shown(exc)}")
                spent = exc if isinstance(exc, BudgetExceeded) else spent
                continue
            except ValidationError:
                # Deterministic: the stage tried again would meet it again. This step only, said in words.
                log.exception("run %s: step %s could not read back its answers", self.run_id, key)
                self.fail_step(steps[key], f"{steps[key].title}: {UNREADABLE}")
                continue
            self.finish(steps[key], output)
            done[key] = output
        if spent is not None:
            raise spent  # the run is out of budget: it ends saying so
        return {key: done[key] for key in work if key in done}

    def start(self, step: AgentStep) -> None:
        """Mark the step running, in the background (see the module's note)."""
        self.start_all([step])

    def start_all(self, steps: list[AgentStep]) -> None:
        """Mark the steps running, in the background, in one statement for those started together: a
        fan-out's steps are marked while its calls are being sent, and six writes of their own (one query
        each, on the writer thread, beside the calls' own preparation in this interpreter) held back the
        last of the calls by 10-20 ms."""
        if not steps:
            return
        now = timezone.now()
        for step in steps:
            step.status = Status.RUNNING
            step.started_at = step.started_at or now
            step.error = ""
            self._finished.pop(step.key, None)
        shown = [copy.copy(step) for step in steps]  # the cards show the steps as they are now
        self._pending.append(fanout.background(lambda: self._write_started(shown)))

    def progress(self, step: AgentStep, summary: str) -> None:
        """Redraw a running step's card with where it has got to ("round 4 of 10"), in the background: a
        long step (a move's debate) shows its progress without holding up its calls."""
        step.summary = summary[:200]
        self._write_behind(step, ["summary"])

    def finish(self, step: AgentStep, output: BaseModel) -> None:
        ready = self._handed_as_prepared(step.key, output)
        step.status = Status.DONE
        step.output = ready.value if ready is not None else output.model_dump(mode="json")
        step.summary = self.workflow.kind(step.kind).summary(output)
        step.finished_at = timezone.now()
        self._save(step, ["status", "output", "summary", "finished_at"], ready.text if ready else None)

    def fail_step(self, step: AgentStep, error: str) -> None:
        step.status = Status.FAILED
        step.error = error
        step.finished_at = timezone.now()
        self._save(step, ["status", "error", "finished_at"])

    def settle(self) -> None:
        """Wait for the writes still in the background; raises the first one's error (a lost lease)."""
        pending, self._pending = self._pending, []
        errors = [error for future in pending if (error := future.exception()) is not None]
        if errors:
            raise errors[0]

    def _write_behind(self, step: AgentStep, fields: list[str]) -> None:
        shown = copy.copy(step)  # the card shows the step as it is now, whatever happens to it meanwhile
        self._pending.append(fanout.background(lambda: self._write(shown, fields)))

    def _write_started(self, steps: list[AgentStep]) -> None:
        # Grouped by start time: a step resumed keeps the time it first started.
        by_start: dict[object, list[int]] = {}
        for step in steps:
            by_start.setdefault(step.started_at, []).append(step.pk)
        for started_at, pks in by_start.items():
            rows = AgentStep.objects.filter(pk__in=pks)
            claims.fenced_update(
                self.hold,
                rows,
                "marking steps running",
                status=Status.RUNNING,
                started_at=started_at,
                error="",
            )
        for step in steps:
            publish_step(step)

    def _save(self, step: AgentStep, fields: list[str], dumped: str | None = None) -> None:
        self.settle()
        self._write(step, fields, dumped)

    def _write(self, step: AgentStep, fields: list[str], dumped: str | None = None) -> None:
        """``dumped``: the output's storable JSON, already checked (``PreparedOutput``)."""
        values = {name: storable(getattr(step, name)) for name in fields if name != "output"}
        written = dict(values)  # model text may carry a NUL
        if "output" in fields:  # checked from its JSON, and written from the same text (memos.jsonb)
            if dumped is None:
                values["output"], dumped = storable_json(step.output)
            else:
                values["output"] = step.output
            written["output"] = jsonb_text(dumped)
        rows = AgentStep.objects.filter(pk=step.pk)
        claims.fenced_update(self.hold, rows, f"saving step {step.stage}/{step.key}", **written)
        if step.status == Status.DONE and "output" in values:
            self._finished[step.key] = FinishedStep(step.pk, step.position, step.kind, values["output"])
        elif step.status != Status.DONE:
            self._finished.pop(step.key, None)  # failed or started again: not finished any more
        publish_step(step)

    # --- the run's earlier steps, typed

    def output(self, stage: str, key: str, output_type: type[T]) -> T | None:
        """A finished step's output, or None when it has not finished."""
        if stage != self.hold.stage:
            found = self._earlier_steps().get((stage, key))
            return None if found is None else self._typed(stage, key, found.output, output_type)
        finished = self._finished.get(key)
        if finished is not None:  # finished by this stage (or read back finished): as it was stored
            parsed = self._parsed_here.get((key, output_type))
            if parsed is None or parsed[0] is not finished:  # parsed once per write (a screen's: 10 ms)
                parsed = self._parsed_here[(key, output_type)] = (
                    finished,
                    output_type.model_validate(finished.output),
                )
            return parsed[1]  # type: ignore[return-value]  # outputs are frozen models: one parse can be shared
        raw = (
            AgentStep.objects.filter(run_id=self.run.pk, stage=stage, key=key, status=Status.DONE)
            .values_list("output", flat=True)
            .first()
        )
        return None if raw is None else output_type.model_validate(raw)

    def outputs(self, stage: str, output_type: type[T], *, kind: str | None = None) -> dict[str, T]:
        """Every finished step of ``stage`` (of one ``kind``), in plan order, keyed by step key."""
        if stage != self.hold.stage:
            return {
                key: self._typed(stage, key, found.output, output_type)
                for (done_stage, key), found in self._earlier_steps().items()
                if done_stage == stage and (kind is None or found.kind == kind)
            }
        rows = AgentStep.objects.filter(run_id=self.run.pk, stage=stage, status=Status.DONE)
        if kind is not None:
            rows = rows.filter(kind=kind)
        return {
            key: output_type.model_validate(raw)
            for key, raw in rows.order_by("position", "key").values_list("key", "output")
        }

    def _earlier_steps(self) -> dict[tuple[str, str], FinishedStep]:
        if self._earlier is None:
            self._read_steps()
        assert self._earlier is not None
        return self._earlier

    def _read_steps(self) -> None:
        """The run's steps in one query, whichever is asked for first: this stage's rows, and the earlier
        stages' finished outputs, less those the stage before handed on (``hold.earlier``)."""
        here = self.hold.stage
        handed = self.hold.earlier
        earlier = {
            named: found for named, found in (handed.steps.items() if handed else ()) if named[0] != here
        }
        if handed is not None:
            self._parsed.update((named, typed) for named, typed in handed.parsed.items() if named[0] != here)
        rows = AgentStep.objects.filter(run_id=self.run.pk).exclude(pk__in=[f.pk for f in earlier.values()])
        steps: dict[str, AgentStep] = {}
        # Keys compared as code points (the "C" collation), as the sort below compares them: a database whose
        # collation ignores punctuation would break a tie of positions another way than Python.
        for step in rows.order_by("position", Collate("key", "C")):
            if step.stage == here:
                steps[step.key] = step
                if step.status == Status.DONE:
                    self._finished[step.key] = FinishedStep(step.pk, step.position, step.kind, step.output)
            elif step.status == Status.DONE:
                earlier[(step.stage, step.key)] = FinishedStep(step.pk, step.position, step.kind, step.output)
        # Plan order, as one query ordered them: within a stage by position, then key.
        ordered = sorted(earlier.items(), key=lambda item: (item[1].position, item[0][1]))
        self._steps, self._earlier = steps, dict(ordered)

    def prepare_next(
        self, key: str, make: Callable[[], BaseModel], *, after: Iterable[threading.Event] = ()
    ) -> None:
        """Make now, while this stage waits on its calls, what the next stage would make first (``make``
        reads only finished steps), and hand it on: the next stage takes it with ``prepared`` when this
        worker goes straight on with it, and makes it itself otherwise. A failure here is left for the next
        stage to meet and say as its own. ``after``: the calls' ``sent`` events (LLMGateway.complete),
        waited for first, a moment at most, so that making this does not hold up their requests."""
        deadline = time.monotonic() + SENDING_WAIT_S
        for sent in after:
            sent.wait(max(0.0, deadline - time.monotonic()))
        try:
            made = make()
            value, text = storable_json(made.model_dump(mode="json"))
            self._prepared[key] = PreparedOutput(made, value, text)
        except Exception:
            log.warning(
                "run %s: %s could not be prepared ahead; its stage makes it", self.run_id, key, exc_info=True
            )

    def prepared(self, key: str, output_type: type[T]) -> T | None:
        """What the stage before prepared for this one (``prepare_next``), if this worker was handed it."""
        handed = self.hold.earlier
        found = handed.prepared.get(key) if handed is not None else None
        return found.output if found is not None and isinstance(found.output, output_type) else None

    def _handed_as_prepared(self, key: str, output: BaseModel) -> PreparedOutput | None:
        """What the stage before prepared as step ``key``, when ``output`` is that very output."""
        handed = self.hold.earlier
        found = handed.prepared.get(key) if handed is not None else None
        return found if found is not None and found.output is output else None

    def handed_on(self) -> EarlierSteps | None:
        """What the next stage need not read again when this worker goes straight on with it: the finished
        steps of this stage and the earlier ones as stored, and the outputs already parsed from them. None
        when this stage read no steps (the next reads them all)."""
        if self._earlier is None:
            return None
        steps = dict(self._earlier)
        here = self.hold.stage
        steps.update(((here, key), found) for key, found in self._finished.items())
        return EarlierSteps(steps, dict(self._parsed), dict(self._prepared))

    def _typed(self, stage: str, key: str, raw: Any, output_type: type[T]) -> T:
        cached = self._parsed.get((stage, key, output_type))
        if cached is None:
            cached = self._parsed[(stage, key, output_type)] = output_type.model_validate(raw)
        return cached  # type: ignore[return-value]  # outputs are frozen models: one parse can be shared

    def set_run(self, **fields: Any) -> None:
        self.settle()
        claims.write_fields(self.hold, **fields)
        for name, value in fields.items():
            setattr(self.run, name, value)
        publish_status(self.run)
