"""The deck's two rubrics (seed 001 sections 3-5) as the code relies on them: their names, and the keys the
gates and the loop read from each. Everything else (weights, anchors, threshold values) is data an admin
tunes in a new version."""

from __future__ import annotations

from agents.rubrics import Contract

DECK_R1 = "deck_r1"
DECK_R2 = "deck_r2"
# The anchor a deck run's rubric builder proposes for a brief, and an admin may adopt into R1 and R2: what a 5
# looks like (seed 001 L2).
PROPOSED_ANCHOR = 5

# Seed 001 section 3: the acceptance gate the first draft must clear.
R1_CONTRACT = Contract(
    dimensions={
        "composite": (
            "thesis_clarity",
            "coverage_depth",
            "narrative_flow",
            "visual_baseline",
            "actionability",
        )
    },
    thresholds=frozenset({"entry_bar", "max_rebuilds"}),
    gates=frozenset({"source_of_truth", "scope_coverage", "structural_validity"}),
    anchored=True,  # every level 0-5 with its descriptor and a quoted example (seed 001 s.2)
)

# Seed 001 sections 4 and 5: the loop's protected invariants, improvement targets and accept/stop math.
R2_CONTRACT = Contract(
    dimensions={
        "composite": (
            "actionability",
            "executive_altitude",
            "visual_digestibility",
            "clean_concise_story",
            "metric_traceability",
        )
    },
    thresholds=frozenset(
        {
            "ship_bar",
            "min_improvement",
            "protected_regression_tau",
            "plateau_laps",
            "max_iterations",
            "drift_tolerance",
            "story_floor",
        }
    ),
    gates=frozenset({"truth", "scope_adherence", "story_integrity", "visual_integrity"}),
    anchored=True,
)
