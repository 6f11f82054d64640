"""The week's stages and steps: their names (the only place they are written), titles and kinds. Every step
is code's: the LLM calls are its parts' (the screen's, the memos', the decks'), each run on its own page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memos.pipeline.workflows import PlannedStep

# The workflow's name: stored in Run.workflow, and the kind of the versions (digests) its runs freeze.
NAME = "week"

SCREEN = "screen"
NAMES = "names"
LOOKS = "looks"
DECKS = "decks"
DIGEST = "digest"

# Step kinds (and the keys of the steps there is one of).
SCREEN_KIND = "week_screen"
NAMES_KIND = "week_names"
LOOK_KIND = "week_look"
DECKS_KIND = "week_decks"
DIGEST_KIND = "week_digest"


def look_key(rank: int) -> str:
    """The step of the ``rank``th (from 1) closer look."""
    return f"look-{rank}"


def max_names(config: Mapping[str, Any]) -> int:
    return int(config.get("max_names", 0))


def plan(config: Mapping[str, Any]) -> list[PlannedStep]:
    bound = max_names(config)
    planned = [
        PlannedStep(SCREEN, SCREEN, SCREEN_KIND, "The week's screen (a screen run)"),
        PlannedStep(NAMES, NAMES, NAMES_KIND, "The names to look at (code)"),
    ]
    # One step per closer look the week may take; those the screen gives no name for are skipped.
    planned += [
        PlannedStep(LOOKS, look_key(rank), LOOK_KIND, f"Closer look {rank} (a quick memo run)", "", rank)
        for rank in range(1, bound + 1)
    ]
    planned += [
        PlannedStep(DECKS, DECKS, DECKS_KIND, "The decks the committee follows (refinement cycles)"),
        PlannedStep(DIGEST, DIGEST, DIGEST_KIND, "The digest (code)"),
    ]
    return planned
