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


def test_a_verdict_code_could_check_nothing_on_says_so_and_never_survives() -> None:
    found = verdict(
        "m3",
        1,
        _audit(
            ("stands", "The rejection does not provide any information from the move"),
            ("answered", "the move answers every concern raised here"),
            ("unsupported", "nothing in the move supports the rejection"),
        ),
        MOVE,
        REJECTION,
    )
    assert found.checked_nothing and found.outcome == "unchecked"
    assert "could not check any of its objections" in found.line
    assert "says nothing either way" in found.line and "surviv" not in found.line
    # Each ruling code did not take is shown with the quote it could not find.
    assert [item.objection for item in found.ruled_out] == ["Objection 1.", "Objection 2.", "Objection 3."]
    assert "the move answers every concern raised here" in found.line
    # One checked ruling is enough for a verdict that says something.
    checked = verdict(
        "m3",
        1,
        _audit(
            ("stands", "The rejection does not provide any information from the move"),
            ("answered", "should acquire a smaller competitor"),
            ("unsupported", "nothing in the move supports the rejection"),
        ),
        MOVE,
        REJECTION,
    )
    assert checked.outcome == "survives" and not checked.checked_nothing
    assert [item.objection for item in checked.met] == ["Objection 2."] and len(checked.ruled_out) == 2


def _objections(*items: tuple[str, Ruling, str]) -> JuryAudit:
    return JuryAudit(
        objections=[Objection(objection=text, ruling=ruling, quote=quote) for text, ruling, quote in items]
    )


def test_the_embedded_model_s_six_copies_of_one_objection_count_once() -> None:
    # As the embedded 1.5B split a rejection (read on a run from a fresh clone): one sentence six times,
    # with the small changes of case, punctuation and a pronoun a copy makes.
    said = "The rejection asserts it with nothing in the move behind it."
    quote = "The rejection does not provide any information from the move."
    found = verdict(
        "m1",
        1,
        _objections(
            (said, "stands", quote),
            (said, "stands", quote),
            ("The rejection asserts it with nothing in the move behind it", "stands", quote),
            ("the rejection asserts this with nothing in the move behind it.", "unsupported", quote),
            ("The rejection asserts it, with nothing in the move behind it!", "stands", quote),
            ("THE REJECTION ASSERTS IT WITH NOTHING IN THE MOVE BEHIND IT.", "answered", quote),
        ),
        MOVE,
        REJECTION,
    )
    assert len(found.objections) == 1 and found.objections[0].repeats == 6
    assert found.objections[0].objection == said
    assert (found.standing, found.checked) == (1, 0) and found.outcome == "unchecked"
    assert "(written 6 times)" in found.line


def test_a_repeated_standing_objection_fails_the_move_once_and_different_objections_stay_apart() -> None:
    found = verdict(
        "m3",
        1,
        _objections(
            ("Integration risk is ignored.", "stands", "Integration risk is ignored"),
            ("The integration risks are ignored", "stands", "words that appear nowhere at all"),
            ("The move does not say how the purchase is financed.", "stands", "nobody has measured"),
            ("The move does not say how the purchase is integrated.", "answered", "acquire a smaller"),
            ("It costs more than the company can pay.", "unsupported", "synergies nobody has measured"),
            ("It costs less than a rival would pay.", "unsupported", "synergies nobody has measured"),
        ),
        MOVE,
        REJECTION,
    )
    # "Integration risk is ignored" twice (a plural and an article apart): one objection, the checked copy
    # deciding; the rest differ in a word that carries the claim and stay apart.
    assert [item.objection for item in found.objections] == [
        "Integration risk is ignored.",
        "The move does not say how the purchase is financed.",
        "The move does not say how the purchase is integrated.",
        "It costs more than the company can pay.",
        "It costs less than a rival would pay.",
    ]
    first = found.objections[0]
    assert first.repeats == 2 and first.quote_found and first.checked_standing
    assert (found.checked, found.standing, found.answered, found.unsupported) == (2, 2, 1, 2)
    assert not found.survives and found.outcome == "does not survive"
    assert [item.objection for item in found.left_standing] == [
        "Integration risk is ignored.",
        "The move does not say how the purchase is financed.",
    ]
