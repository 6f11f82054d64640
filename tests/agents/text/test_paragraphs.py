"""What a reader is shown of a model-written paragraph: the sentences code can show, in order, one line at the
end for what was withheld and why, a sentence said twice shown once, and one sentence for a paragraph left
with nothing."""

from __future__ import annotations

from agents.text.reader import paragraph, without_citation_notes
from agents.text.scripts import Language
from agents.text.sentences import sentences

FACT = "AAPL:revenue:FY2025"
KNOWN = frozenset({FACT})


def shown(text: str, keep: frozenset[str] = frozenset()) -> str:
    found = paragraph(text, KNOWN, keep)
    words = "".join(f"<{part.fact_id}>" if part.kind == "fact" else part.text for part in found.parts)
    return f"{words} ({found.note})" if found.note else words


def test_one_line_per_paragraph_says_what_was_withheld_instead_of_a_note_per_sentence() -> None:
    text = (
        "Apple Inc. grew services 14% a year. Apple Inc. leads the premium segment. "
        f"Revenue reached [[{FACT}]]. Apple Inc. holds USD 35,934 million in cash."
    )
    assert shown(text) == (
        f"Apple Inc. leads the premium segment. Revenue reached <{FACT}>. "
        "(Code withheld 2 sentences of this paragraph: it stated a percentage and an amount the model typed, "
        "which no cited fact backs.)"
    )


def test_a_paragraph_left_with_nothing_says_so_in_one_sentence() -> None:
    found = paragraph("Growth was 14%. Margins were 46%.", KNOWN)
    assert found.parts == [] and found.empty and found.withheld == 2
    assert found.note == (
        "Nothing of this paragraph can be shown: it stated a percentage the model typed, which no cited fact "
        "backs."
    )


def test_a_sentence_written_twice_is_shown_once_and_counted() -> None:
    found = paragraph("Peers set the bar. Peers set the bar.  peers set the bar. Rates frame it.", KNOWN)
    assert "".join(part.text for part in found.parts) == "Peers set the bar. Rates frame it."
    assert (found.sentences, found.repeated, found.withheld, found.note) == (4, 2, 0, "")


def test_another_script_is_named_in_the_paragraphs_line() -> None:
    found = paragraph(
        "Services 市场 share keeps rising. Peers lag.",
        KNOWN,
        language=Language.of("Is the services business durable?"),
    )
    assert "".join(part.text for part in found.parts) == "Peers lag."
    assert "slipped into another script than the brief's (Han '市场')" in found.note


def test_a_company_suffix_or_an_initialism_does_not_end_a_sentence() -> None:
    assert sentences("Apple Inc. leads the U.S. market. It grew.") == [
        "Apple Inc. leads the U.S. market. ",
        "It grew.",
    ]


def test_a_citation_list_copied_into_prose_is_dropped() -> None:
    text = "Cash is ample (cites AAPL:cash:FY2025 and AAPL:capex:FY{FY}). Margins hold (see the filings)."
    assert without_citation_notes(text) == "Cash is ample. Margins hold (see the filings)."
