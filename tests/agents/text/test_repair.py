"""The re-ask's two ends, in code: the sentences it quotes (once each, in order) and how a rewrite is taken:
only when code finds nothing in it to withhold, wherever the model wrote the sentence, and as a whole
sentence."""

from __future__ import annotations

from decimal import Decimal

from agents.text.repair import Rewrite, Rewrites, Writer, apply_rewrites, faults, quoted, tally
from agents.text.resolution import Printed

CASH = Printed("AAPL:cash:FY2025", Decimal("35934000000"), "USD", "FY2025", "cash")
WRITER = Writer(known=frozenset({CASH.fact_id}), facts=(CASH,))


def test_the_re_ask_quotes_each_faulty_sentence_once_in_order() -> None:
    texts = ["Peers lag. Services grew 14% a year. Services grew 14% a year.", "Margins expand 35bps."]
    found = faults(texts, WRITER)
    assert quoted(found) == "1. Services grew 14% a year.\n2. Margins expand 35bps."


def test_a_rewrite_is_taken_only_when_nothing_in_it_is_withheld_and_it_replaces_every_repeat() -> None:
    texts = ["Peers lag. Services grew 14% a year. Services grew 14% a year.", "Margins expand 35bps."]
    found = faults(texts, WRITER)
    answer = Rewrites(
        rewrites=[
            Rewrite(number=1, text="Services outgrew hardware"),  # no full stop: code ends the sentence
            Rewrite(number=2, text="Margins expand 40bps."),  # still a typed figure: not taken
        ]
    )
    final, replaced = apply_rewrites(texts, found, answer, WRITER)
    assert replaced == 1
    assert final == [
        "Peers lag. Services outgrew hardware. Services outgrew hardware.",
        "Margins expand 35bps.",
    ]
    counted = tally("Macro", texts[:1], final[:1], WRITER, reasked=replaced, asked=True)
    assert (counted.sentences, counted.typed, counted.reasked, counted.withheld, counted.repeated) == (
        3,
        1,
        1,
        0,
        1,
    )


def test_a_rewrite_that_copies_a_backed_figure_is_written_as_the_fact() -> None:
    texts = ["Cash is ample at 36 units."]
    found = faults(texts, WRITER)
    answer = Rewrites(rewrites=[Rewrite(number=1, text="Cash is ample at USD 35,934 million.")])
    final, replaced = apply_rewrites(texts, found, answer, WRITER)
    assert (final, replaced) == ([f"Cash is ample at [[{CASH.fact_id}]]."], 1)
