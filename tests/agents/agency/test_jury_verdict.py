"""The jury's verdict by code (seed 003: the adjudicator rules, the skill computes): an objection standing on
a quote code finds in the move or the rejection fails the move; an answer must quote the move; a ruling whose
quote is nowhere is not taken and cannot decide."""

from __future__ import annotations

from agents.agency.jury import verdict
from agents.agency.schemas import JuryAudit, Objection, Ruling

MOVE = "Title: Acquire a smaller competitor\nThe move: The company should acquire a smaller competitor soon."
REJECTION = "The case for buying a rival rests on synergies nobody has measured. Integration risk is ignored."


def _audit(*rulings: tuple[Ruling, str]) -> JuryAudit:
    return JuryAudit(
        objections=[
            Objection(objection=f"Objection {n}.", ruling=ruling, quote=quote)
            for n, (ruling, quote) in enumerate(rulings, 1)
        ]
    )


def test_every_objection_answered_or_unsupported_on_checked_quotes_survives() -> None:
    found = verdict(
        "m3",
        1,
        _audit(
            ("answered", "should acquire a smaller competitor"),
            ("answered", "The company should acquire"),
            ("unsupported", "synergies nobody has measured"),
        ),
        MOVE,
        REJECTION,
    )
    assert found.survives and (found.standing, found.answered, found.unsupported, found.checked) == (
        0,
        2,
        1,
        0,
    )
    assert "survives the jury" in found.line and found.rejection == REJECTION


def test_one_objection_standing_on_the_rejection_s_words_fails_the_move_and_is_named() -> None:
    found = verdict(
        "m3",
        1,
        _audit(
            ("stands", "Integration risk is ignored"),
            ("answered", "should acquire a smaller competitor"),
            ("answered", "The company should acquire"),
        ),
        MOVE,
        REJECTION,
    )
    assert not found.survives and found.checked == 1
    assert [item.objection for item in found.left_standing] == ["Objection 1."]
    assert "does not survive" in found.line and "Objection 1." in found.line


def test_an_answer_quoting_the_rejection_is_not_an_answer_and_an_unfound_quote_does_not_decide() -> None:
    found = verdict(
        "m3",
        1,
        _audit(
            ("answered", "synergies nobody has measured"),  # the rejection's words: no answer
            ("stands", "words that appear nowhere at all"),
            ("unsupported", "nor do these words appear"),
        ),
        MOVE,
        REJECTION,
    )
    assert [item.ruling for item in found.objections] == ["stands", "stands", "stands"]
    assert [item.asked for item in found.objections] == ["answered", None, "unsupported"]
    # The first stands unchecked (its quote is not the move's), like the others: none decides.
    assert found.checked == 0 and found.survives
