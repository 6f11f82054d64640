"""A run's finished steps as one stage hands them to the next in the same worker (memos.pipeline.driver):
the next stage reads only the steps it has not been handed. A screen's stages each read the earlier stages'
outputs back (its quant figures and charts, a megabyte of JSON): 22-25 ms a stage, on the run's path.

Handing them on is safe for the reason the run itself is handed on (memos.pipeline.claims.hand_over): nobody
else writes a run whose lease this worker holds, and a finished step's output is never written again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel


class FinishedStep(NamedTuple):
    """One finished step, its output as the database holds it."""

    pk: int
    position: int
    kind: str
    output: Any


class PreparedOutput(NamedTuple):
    """A step's output made ahead (``StageContext.prepare_next``), with the JSON value and text it is stored
    as, dumped and checked while the calls were in flight: the step is written from them when its stage
    takes the output as it was handed (a screen's charts: 550 KB, 25 ms to dump and check)."""

    output: BaseModel
    value: Any
    text: str


@dataclass(frozen=True)
class EarlierSteps:
    """The finished steps of a run's stages so far, by (stage, key), and the typed outputs already parsed
    from them, by (stage, key, type) (outputs are frozen models: one parse can be shared); and what the stage
    before prepared for the next while its own calls were in flight (``StageContext.prepare_next``)."""

    steps: dict[tuple[str, str], FinishedStep]
    parsed: dict[tuple[str, str, type[BaseModel]], BaseModel] = field(default_factory=dict)
    prepared: dict[str, PreparedOutput] = field(default_factory=dict)
