"""The agency's calls that run side by side, and why each may (memos.pipeline.breadth)."""

from __future__ import annotations

from memos.pipeline.breadth import Breadth

INFERENCES = Breadth(
    "inferences",
    "each reading of the documents (financial, trend) draws its own claims from the same figures",
)
PERSONAS = Breadth(
    "personas",
    "each analyst persona proposes its moves through its own lens, blind to the others' (seed 004 layer 2)",
)
TURNS = Breadth(
    "board threads",
    "each board member argues in its own thread against the critic (i1, i2, i3); no thread reads another",
)
SCORES = Breadth(
    "board lenses",
    "each board member scores the move through its own lens, in its own judge thread",
    distinct_verdicts="each a different lens: growth, operations, stakeholder value (agents.agency.board)",
)
JURY_AUDITS = Breadth(
    "jury",
    "the top moves are each audited once, apart",
    distinct_verdicts="each judges another move",
)
