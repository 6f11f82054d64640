"""Model prose read against code's grade of the evidence: a sentence claiming more than the news reading
holds is withheld with code's reason, and one within it stands (both sides)."""

from __future__ import annotations

import pytest

from agents.screen.overclaims import Evidence, overclaim, within_evidence

NONE = Evidence("none", transient=False, structural=False)
WEAK = Evidence("weak", transient=False, structural=True)
STRONG_TRANSIENT = Evidence("strong", transient=True, structural=False)
UNREAD = Evidence("unread", transient=False, structural=False)
# Written by the embedded 1.5B for AAPL in a week with no news in the desk at all.
SEEN = "AAPL moved ++ market and ++ own, which is explained by strong evidence of a transient driver."


@pytest.mark.parametrize(
    ("sentence", "evidence", "why"),
    [
        (SEEN, NONE, "strong evidence"),
        (SEEN, WEAK, "strong evidence"),
        ("The drop has a transient catalyst in the recall.", WEAK, "transient driver"),
        ("A structural shift in demand drove the sector.", NONE, "structural driver"),
        ("The news explains the sector's own move.", NONE, "news explains"),
        ("The news explains the sector's own move.", UNREAD, "news explains"),
    ],
)
def test_a_claim_beyond_the_evidence_is_named(sentence: str, evidence: Evidence, why: str) -> None:
    assert why in overclaim(sentence, evidence).replace("says the news explains", "news explains")


@pytest.mark.parametrize(
    ("sentence", "evidence"),
    [
        (SEEN, STRONG_TRANSIENT),
        ("A structural shift in demand drove the sector.", WEAK),
        ("The news explains part of the move.", WEAK),
        ("No transient driver was found, and there is no strong evidence either way.", NONE),
        ("The move was the market's; the sector held its ground.", NONE),
    ],
)
def test_a_claim_within_the_evidence_or_a_denial_stands(sentence: str, evidence: Evidence) -> None:
    assert overclaim(sentence, evidence) == ""


def test_only_the_sentence_that_overclaims_is_withheld() -> None:
    text = "The sector fell with the market. " + SEEN + " Its own part was small."
    read = within_evidence(text, NONE)
    assert read.text == "The sector fell with the market. Its own part was small."
    assert (
        len(read.withheld) == 1
        and "strong evidence where code graded the sector's evidence none" in read.withheld[0]
    )
    kept = within_evidence(text, STRONG_TRANSIENT)
    assert kept.text == text and kept.withheld == []
