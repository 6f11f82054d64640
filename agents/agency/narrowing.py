"""The agency's schemas narrowed to one run: every citation field an enum of the ids the role was shown, and
every prose field under the pattern that admits digits only in references to the facts it was shown
(agents.text.patterns). A constrained decoder then cannot invent an id or type a figure; code still checks
both (agents.agency.checks), because not every endpoint enforces the schema."""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar, cast

from pydantic import BaseModel, Field, create_model

from agents.agency.schemas import (
    BoardTurn,
    CriticPoint,
    CriticTurn,
    Inference,
    InferenceClaim,
    JuryAudit,
    MetricScore,
    MoveDraft,
    Objection,
    PersonaMoves,
    ScoreCard,
)
from agents.llm.schema import ids_field
from agents.text.patterns import Prose, patterned

M = TypeVar("M", bound=BaseModel)


def _cited(
    model: type[M], prose: Prose, prose_fields: list[str], ids: tuple[str, ...], *, low: int, high: int
) -> type[M]:
    return patterned(
        model,
        prose,
        prose_fields,
        class_name=f"Cited{model.__name__}",
        citations=(list[str], ids_field(ids, min_length=low, max_length=high)),
    )


@lru_cache(maxsize=64)
def inference_schema(ids: tuple[str, ...], facts: tuple[str, ...]) -> type[Inference]:
    """F1 or F2: claims cite ``ids``; prose may reference ``facts``."""
    prose = Prose(facts)
    claim = _cited(InferenceClaim, prose, ["statement"], ids, low=1, high=4)
    answer = patterned(
        Inference,
        prose,
        ["gaps"],
        class_name="NarrowInference",
        claims=(list[claim], Field(max_length=8)),  # type: ignore[valid-type]  # a model built here
    )
    return answer


@lru_cache(maxsize=64)
def moves_schema(claims: tuple[str, ...], facts: tuple[str, ...]) -> type[PersonaMoves]:
    """A persona's three moves: citations among F1's and F2's claim ids; prose may reference ``facts`` and
    the claims (``[[F1.2]]``: a claim's label has digits, which prose admits only inside a reference)."""
    prose = Prose((*facts, *claims))
    draft = _cited(MoveDraft, prose, ["target", "title", "move", "reasoning", "risks"], claims, low=1, high=5)
    answer = create_model(
        "NarrowPersonaMoves", __base__=PersonaMoves, low=(draft, ...), medium=(draft, ...), high=(draft, ...)
    )
    return cast(type[PersonaMoves], answer)


@lru_cache(maxsize=64)
def critic_schema(ids: tuple[str, ...]) -> type[CriticTurn]:
    """``ids``: what a turn may cite (the claims and the figures); its prose may reference any of them."""
    prose = Prose(ids)
    point = _cited(CriticPoint, prose, ["point"], ids, low=0, high=3)
    answer = create_model(
        "NarrowCriticTurn",
        __base__=CriticTurn,
        points=(list[point], Field(min_length=1, max_length=3)),  # type: ignore[valid-type]  # a model built here
    )
    return cast(type[CriticTurn], answer)


@lru_cache(maxsize=64)
def board_schema(ids: tuple[str, ...]) -> type[BoardTurn]:
    return _cited(BoardTurn, Prose(ids), ["reply"], ids, low=0, high=3)


@lru_cache(maxsize=64)
def jury_schema(ids: tuple[str, ...]) -> type[JuryAudit]:
    """An objection may reference ``ids`` (the claims and the figures); its quote is a quote."""
    objection = patterned(Objection, Prose(ids), ["objection"])
    answer = create_model(
        "NarrowJuryAudit",
        __base__=JuryAudit,
        objections=(list[objection], Field(min_length=3, max_length=7)),  # type: ignore[valid-type]  # built here
    )
    return cast(type[JuryAudit], answer)


@lru_cache(maxsize=64)
def score_schema(ids: tuple[str, ...]) -> type[ScoreCard]:
    """A reason may reference ``ids`` (the claims and the figures)."""
    metric = patterned(MetricScore, Prose(ids), ["reason"])
    answer = create_model(
        "NarrowScoreCard",
        __base__=ScoreCard,
        impact=(metric, ...),
        feasibility=(metric, ...),
        risk_adjusted_return=(metric, ...),
        strategic_alignment=(metric, ...),
    )
    return cast(type[ScoreCard], answer)
