"""What the engine asks of the rest of the desk, installed once at start-up by ``memos.apps`` (the place that
knows both sides).

Services and views call the engine; the engine never imports ``memos.services``. Where a run needs the
desk's services (freezing its artefact as the brief's next version, which opens a motion and notifies the
committee; rendering its files first; waiting for that mail before a work-horse exits), the engine calls
these hooks instead. What one
workflow's freeze binds (the memo's falsifier watches) is that workflow's own hook
(``memos.pipeline.workflows.Workflow``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memos.models import Run
    from memos.pipeline.workflows import Artefact


@dataclass(frozen=True)
class EngineHooks:
    # What freezing will need that takes time (the version's files, rendered): called before the transaction
    # that finishes the run, under its heartbeat. What it returns is handed back to ``freeze`` as it is.
    prepare: Callable[[Run, Artefact], object]
    # The run's artefact as its brief's next version; called inside the transaction that finishes the run.
    freeze: Callable[[Run, Artefact, object], object]
    # A process that ran a run's stages is about to exit: let what the run queued (e-mails, the frozen
    # versions' PDFs to print) leave first.
    before_exit: Callable[[], object]
    # The workflow that plays a part in the desk's week, and how (memos.services.surfaces.week_part): the
    # week composes the other workflows through their surfaces, which the engine never imports.
    week_part: Callable[[type[Any]], tuple[str, Any] | None] = lambda kind: None


_installed: EngineHooks | None = None


def install(hooks: EngineHooks) -> None:
    global _installed  # noqa: PLW0603 - set once per process, at start-up, before any run
    _installed = hooks


def hooks() -> EngineHooks:
    if _installed is None:
        raise RuntimeError("the run engine's hooks are installed by memos.apps.MemosConfig.ready()")
    return _installed
