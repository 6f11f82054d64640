"""An answer is bounded by code when it is validated (issue 31, 2): for every narrowed schema of every
workflow, the longest answer its validator admits (every prose field at its pattern's allowance, which a
decoder that drops ``maxLength`` beside a pattern may well write) comes out of ``bounded`` fitting the base
model, so reading it back later under the base model never fails on a length. Without ``bounded`` the
same answers fail the base model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from annotated_types import MaxLen
from pydantic import BaseModel, ValidationError

from agents.agency import jury
from agents.agency import narrowing as agency
from agents.agency.schemas import (
    BoardTurn,
    CriticTurn,
    Inference,
    JuryAudit,
    PersonaMoves,
    Rejection,
    ScoreCard,
)
from agents.deck import narrowing as deck
from agents.deck.schemas import Framing, SlideDraft
from agents.llm.fakes.schema_example import example_for_schema
from agents.llm.schema import strict_json_schema
from agents.memo import narrowing as memo
from agents.memo.schemas import SpecialistBrief
from agents.screen import narrowing as screen
from agents.screen.schemas import (
    DirectorReview,
    MarketOverview,
    OverallSynthesis,
    SectorNews,
    SectorSynthesis,
)
from agents.text.sentences import bounded

IDS = ("AAPL:revenue:FY2024", "AAPL:capex:FY2024", "F1.1")
SYMBOLS = ("XOM", "CVX")
SENTENCE = "Demand held up well across the segment. "

CASES: dict[str, tuple[Callable[[], type[BaseModel]], type[BaseModel]]] = {
    "agency inference": (lambda: agency.inference_schema(IDS, IDS), Inference),
    "agency moves": (lambda: agency.moves_schema(IDS, IDS), PersonaMoves),
    "agency critic": (lambda: agency.critic_schema(IDS), CriticTurn),
    "agency board": (lambda: agency.board_schema(IDS), BoardTurn),
    "agency jury": (lambda: agency.jury_schema(IDS), JuryAudit),
    "agency jury rejection": (lambda: jury.rejection_schema(IDS), Rejection),
    "agency score": (lambda: agency.score_schema(IDS), ScoreCard),
    "screen overview": (lambda: screen.overview_schema(IDS, IDS), MarketOverview),
    "screen sector news": (lambda: screen.sector_news_schema(IDS, SYMBOLS, IDS), SectorNews),
    "screen synthesis": (lambda: screen.synthesis_schema(SYMBOLS, IDS), SectorSynthesis),
    "screen overall": (lambda: screen.overall_schema(IDS), OverallSynthesis),
    "screen director": (lambda: screen.director_schema(SYMBOLS, IDS), DirectorReview),
    "memo specialist": (lambda: memo.brief_schema("fundamentals", IDS, facts=IDS), SpecialistBrief),
    "deck slide": (lambda: deck.slide_schema(IDS, ("Thesis",)), SlideDraft),
    "deck framing": (lambda: deck.framing_schema(IDS), Framing),
}


def _longest(model: type[BaseModel], data: Any) -> Any:
    """``data`` (a valid instance's dump) with every prose field the validator bounds above the bound the
    schema sent (a pattern's allowance) written to the validator's full length."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for name, info in model.model_fields.items():
        value = out.get(name)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        limit = next((int(m.max_length) for m in info.metadata if isinstance(m, MaxLen)), None)
        if isinstance(value, str) and "pattern" in extra and limit is not None:
            out[name] = (SENTENCE * (limit // len(SENTENCE) + 1))[:limit]
        elif isinstance(value, list):
            inner = _model_of(info.annotation)
            out[name] = [_longest(inner, item) if inner else _long_item(info, item) for item in value]
        elif isinstance(value, dict) and (inner := _model_of(info.annotation)) is not None:
            out[name] = _longest(inner, value)
    return out


def _long_item(info: Any, item: Any) -> Any:
    args = getattr(info.annotation, "__args__", ())
    field = next((m for arg in args for m in getattr(arg, "__metadata__", ())), None)
    extra = getattr(field, "json_schema_extra", None) or {}
    limit = next((int(m.max_length) for m in getattr(field, "metadata", ()) if isinstance(m, MaxLen)), None)
    if isinstance(item, str) and "pattern" in extra and limit is not None:
        return (SENTENCE * (limit // len(SENTENCE) + 1))[:limit]
    return item


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_longest_answer_a_sent_schema_admits_fits_its_base_model_once_bounded(case: str) -> None:
    build, base = CASES[case]
    sent = build()
    example = example_for_schema(strict_json_schema(sent), seed=7)
    longest = _longest(sent, example)
    answer = sent.model_validate(longest)  # what the gateway accepts from a decoder
    kept = bounded(answer).model_dump(mode="json")
    base.model_validate(kept)  # what any later read under the base model does: it never fails
    # Cut at whole sentences, never mid-word.
    texts = [v for v in _strings(kept) if v.startswith(SENTENCE[:10])]
    assert texts and all(text.endswith(".") for text in texts)


def test_without_bounding_the_longest_answers_fail_their_base_model() -> None:
    build, base = CASES["agency score"]
    sent = build()
    longest = _longest(sent, example_for_schema(strict_json_schema(sent), seed=7))
    answer = sent.model_validate(longest)
    with pytest.raises(ValidationError, match="at most 200 characters"):
        base.model_validate(answer.model_dump(mode="json"))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
