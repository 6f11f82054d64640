"""The agency reads its roles' prose under the brief's language, as the memo, the deck and the screen do: a
claim or a gap that slips into another script (the embedded 1.5B wrote Chinese numerals where it was barred
from typing a figure) is withheld with code's reason, and the rest stands."""

from __future__ import annotations

from agents.agency.schemas import Inference, InferenceClaim
from agents.text.scripts import ENGLISH
from memos.pipeline.agency.inference import checked

CASH = "AAPL:cash:FY2025"


def test_a_claim_in_another_script_is_withheld_under_the_brief_s_language() -> None:
    answer = Inference(
        claims=[
            InferenceClaim(statement="Cash generation funds the buyback.", citations=["AAPL:cash:FY2025"]),
            InferenceClaim(
                statement="Margins rose 九点零 points on services.", citations=["AAPL:cash:FY2025"]
            ),
        ],
        gaps=["Segment margins are not in the filings.", "The 五百 largest peers are not given."],
    )
    found = checked("F1", answer, {CASH}, {}, frozenset(), said_in=ENGLISH)
    assert [claim.statement for claim in found.claims] == ["Cash generation funds the buyback."]
    assert any("another script" in why for why in found.dropped)
    assert found.gaps[0] == "Segment margins are not in the filings."
    assert found.gaps[1] == "(a gap stated with a figure, withheld)"
