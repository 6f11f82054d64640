"""The evaluator's quotes, checked by code: each must be a passage of what it judged, word for word.

A divergence is the evaluator's evidence for a calibrated score that differs from a self-score (seed 000:
"scoring without quoted evidence produces opinion, not audit"). Code looks for its quote in the text the
evaluator was shown, the synthesizer's iterations and the specialists' briefs, after folding only what a
copy may change without changing the words (blanks, typographic quotes and dashes, case, a leading or
trailing ellipsis). A quote that is not found, or too short to be a passage, is marked, and the score it
supports does not count: the self-score stands for that iteration and dimension (``agents.memo.verdict``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from agents.memo.schemas import Dimension, Evaluation, SynthesisIteration
from agents.text.quotes import MIN_WORDS, fold, folded_quote


class QuoteCheck(BaseModel):
    """One divergence's quote and whether it was found in what the evaluator judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    iteration: int
    dimension: Dimension
    found: bool
    reason: str = ""  # why it does not count, in code's words


def iteration_texts(iteration: SynthesisIteration) -> list[str]:
    """Every piece of prose of an iteration, as the evaluator read it."""
    memo, analysis = iteration.memo, iteration.analysis
    return [
        analysis.macro,
        analysis.meso,
        analysis.micro,
        memo.headline_thesis,
        memo.risk_budget,
        memo.sizing_rationale,
        *memo.falsifiers,
        *(catalyst.event for catalyst in memo.catalysts),
        *iteration.what_i_missed,
        *(answer.note for answer in iteration.answered_gaps),
    ]


def check(evaluation: Evaluation, judged: Iterable[str]) -> list[QuoteCheck]:
    """One row per divergence, in order."""
    corpus = [fold(text) for text in judged]
    rows = []
    for divergence in evaluation.divergences:
        quote = folded_quote(divergence.quote)
        reason = ""
        if len(quote.split()) < MIN_WORDS:
            reason = f"the quote is shorter than {MIN_WORDS} words: not a passage"
        elif not any(quote in text for text in corpus):
            reason = "the quote is not in the memo's iterations or the specialists' briefs"
        rows.append(
            QuoteCheck(
                iteration=divergence.iteration,
                dimension=divergence.dimension,
                found=not reason,
                reason=reason,
            )
        )
    return rows


def unsupported(rows: list[QuoteCheck]) -> set[tuple[int, Dimension]]:
    """(iteration, dimension) of every score a missing quote leaves without evidence (another divergence on
    the same score with a quote that was found still supports it)."""
    missing = {(row.iteration, row.dimension) for row in rows if not row.found}
    return missing - {(row.iteration, row.dimension) for row in rows if row.found}
