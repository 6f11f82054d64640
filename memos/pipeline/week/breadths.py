"""The week's fan-outs: its parts that run side by side (memos.pipeline.breadth)."""

from memos.pipeline.breadth import Breadth

LOOKS = Breadth(
    "closer looks",
    "each looks at another flagged company, from that company's own facts and documents",
    distinct_verdicts="each memo's evaluator judges that memo alone, of another company",
)
FOLLOW_UPS = Breadth(
    "deck cycles",
    "each refines another deck from its own latest version",
    distinct_verdicts="each deck's judge scores that deck alone",
)
