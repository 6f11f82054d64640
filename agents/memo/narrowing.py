"""Output schemas narrowed to a run's evidence: citation fields become enums of the ids the role was shown.

A constrained decoder (llama.cpp's JSON-schema grammar, OpenAI structured outputs) then cannot invent an id;
code still checks every citation, because not every endpoint enforces the schema.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, cast

from pydantic import BaseModel, Field, create_model

from agents.memo.schemas import Claim, MemoDraft, SpecialistBrief, SynthesisIteration


def _ids_field(ids: tuple[str, ...], *, min_length: int, max_length: int, description: str = "") -> Any:
    return Field(
        min_length=min_length,
        max_length=max_length,
        description=description or None,
        json_schema_extra={"items": {"type": "string", "enum": list(ids)}},
    )


@lru_cache(maxsize=256)
def brief_schema(name: str, ids: tuple[str, ...], max_claims: int = 8) -> type[SpecialistBrief]:
    claim = create_model(
        f"{name.title()}Claim",
        __base__=Claim,
        citations=(list[str], _ids_field(ids, min_length=1, max_length=4)),
    )
    brief = create_model(
        f"{name.title()}Brief", __base__=SpecialistBrief, claims=(list[claim], Field(max_length=max_claims))
    )
    return cast(type[SpecialistBrief], brief)


@lru_cache(maxsize=64)
def iteration_schema(ids: tuple[str, ...]) -> type[SynthesisIteration]:
    memo = create_model(
        "CitedMemoDraft",
        __base__=MemoDraft,
        load_bearing=(
            list[str],
            _ids_field(
                ids, min_length=1, max_length=5, description="evidence ids the recommendation rests on"
            ),
        ),
    )
    iteration = create_model("CitedSynthesisIteration", __base__=SynthesisIteration, memo=(memo, ...))
    return cast(type[SynthesisIteration], iteration)


def as_base(value: BaseModel, base: type[BaseModel]) -> Any:
    """A narrowed answer as its base schema type (what is stored and what code reasons over)."""
    return base.model_validate(value.model_dump())
