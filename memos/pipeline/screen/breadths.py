"""The screen's calls that run side by side, and why each may (memos.pipeline.breadth)."""

from __future__ import annotations

from memos.pipeline.breadth import Breadth

SECTOR_NEWS = Breadth(
    "sector news",
    "each sector's news analyst reads that sector's posts only (seed 002: search by sector)",
)
SECTOR_REPORTS = Breadth(
    "sector reports",
    "each sector's senior analyst writes from that sector's figures and news only",
)
SENT_BACK = Breadth(
    "sectors sent back",
    "each rewrite reads one sector's figures and news, its first synthesis and the managing director's "
    "reason only; asked one at a time, after the review",
)
