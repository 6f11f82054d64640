"""Output schemas narrowed to a run's evidence: citation fields become enums of the ids the role was shown,
and prose fields carry the pattern that admits digits only in references to the facts it was shown, dates
and the brief's own numbers (agents.text.patterns).

A constrained decoder (llama.cpp's JSON-schema grammar, OpenAI structured outputs) then cannot invent an id
or type a figure; code still checks every citation and every sentence, because not every endpoint enforces
the schema.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from agents.llm.schema import ids_field
from agents.memo.schemas import (
    MAX_GAPS,
    Analysis,
    Catalyst,
    Claim,
    GapAnswer,
    MemoDraft,
    SpecialistBrief,
    SynthesisIteration,
)
from agents.text.patterns import Prose, date_pattern, patterned
from agents.text.sentences import within_bounds


@lru_cache(maxsize=256)
def brief_schema(
    name: str,
    ids: tuple[str, ...],
    max_claims: int = 8,
    *,
    facts: tuple[str, ...] = (),
) -> type[SpecialistBrief]:
    """A specialist's answer: citations among ``ids``; prose that may reference ``facts`` but holds no other
    digit."""
    prose = Prose(facts)
    claim: Any = patterned(
        Claim,
        prose,
        ["statement"],
        class_name=f"{name.title()}Claim",
        citations=(list[str], ids_field(ids, min_length=1, max_length=4)),
    )
    brief = patterned(
        SpecialistBrief,
        prose,
        ["coverage_gaps", "undercurrents"],
        class_name=f"{name.title()}Brief",
        claims=(list[claim], Field(max_length=max_claims)),
    )
    return brief


@lru_cache(maxsize=64)
def iteration_schema(
    ids: tuple[str, ...],
    *,
    facts: tuple[str, ...] = (),
    window: tuple[datetime.date, datetime.date] | None = None,
) -> type[SynthesisIteration]:
    """A synthesis iteration: load-bearing ids among ``ids``; every prose field a reader sees under the
    prose pattern of ``facts``; each catalyst dated inside ``window`` (the first and last day a
    catalyst may carry). Falsifier bindings stay optional in the schema (answers scripted before them have
    none); the prompt asks for one per falsifier, and code writes a withheld falsifier from its binding."""
    prose = Prose(facts)
    narrowed: dict[str, Any] = {}
    if window is not None:
        dated: dict[str, JsonValue] = {"format": "date", "pattern": date_pattern(*window)}
        description = "ISO date the catalyst is expected by"
        narrowed = {"date": (str, Field(json_schema_extra=dated, description=description))}
    catalyst: Any = patterned(
        Catalyst, prose, ["event"], class_name="DatedCatalyst" if window is not None else None, **narrowed
    )
    memo = patterned(
        MemoDraft,
        prose,
        ["headline_thesis", "risk_budget", "falsifiers", "sizing_rationale"],
        class_name="CitedMemoDraft",
        catalysts=(list[catalyst], Field(min_length=1, max_length=3)),
        load_bearing=(
            list[str],
            ids_field(
                ids, min_length=1, max_length=5, description="evidence ids the recommendation rests on"
            ),
        ),
    )
    gap = patterned(GapAnswer, prose, ["note"])
    iteration = patterned(
        SynthesisIteration,
        prose,
        ["what_i_missed"],
        class_name="CitedSynthesisIteration",
        answered_gaps=(list[gap], Field(default_factory=list, max_length=MAX_GAPS)),  # type: ignore[valid-type]
        analysis=(patterned(Analysis, prose, ["macro", "meso", "micro"]), ...),
        memo=(memo, ...),
    )
    return iteration


def as_base(value: BaseModel, base: type[BaseModel]) -> Any:
    """A narrowed answer as its base schema type (what is stored and what code reasons over): a prose field
    its references took past the base bound cut back to its whole sentences."""
    return base.model_validate(within_bounds(base, value.model_dump()))
