"""What a deck run is started with (``Run.config``), by profile: validated again whenever a stage reads it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agents.deck.schemas import MAX_SECTIONS, MAX_SLIDES, MIN_SECTIONS

MAX_REBUILDS = 4
MAX_LAPS = 12


class DeckConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    # Copied from the pinned rubrics when the run starts (R1's max_rebuilds, R2's max_iterations capped by
    # the profile), so the plan a run page draws and the loop that runs agree for the life of the run.
    max_rebuilds: int = Field(ge=0, le=MAX_REBUILDS)
    max_laps: int = Field(ge=0, le=MAX_LAPS)
    cycle_budget_tokens: int | None = Field(default=None, ge=1)
    # The most drafted slides (the summary and the sections') a reviser may grow the deck to.
    max_slides: int = Field(
        default=MAX_SLIDES, ge=3, le=MAX_SLIDES
    )  # a refinement cycle stops cleanly past it
    # The most body sections the scope builder may ask for (a run started before the bound: the schema's).
    max_sections: int = Field(default=MAX_SECTIONS, ge=MIN_SECTIONS, le=MAX_SECTIONS)
    # A refinement cycle (memos.pipeline.deck.desk.cycles): the deck version it continues from. The scope and
    # the accepted draft are that version's; the loop re-baselines only when the epoch changed.
    base_version: int | None = None


# Profile -> (rebuilds, laps) at most: quick is the first impression on the embedded model, one lap of
# the loop (score, plan, revise, judge the candidate beside T11's re-score of the best, accept or roll
# back). A lap there is a planner, a reviser and two judges (five to six minutes on two cores): a second
# one kept a quick deck past twenty minutes. A deck has one slide per required section of its scope (3 to
# 6) and the executive summary until the reviser merges, removes or adds one, within the profile's bound on
# drafted slides.
DECK_PROFILES: dict[str, tuple[int, int]] = {"quick": (1, 1), "full": (MAX_REBUILDS, MAX_LAPS)}
SLIDE_BOUNDS: dict[str, int] = {"quick": 7, "full": MAX_SLIDES}
# The most body sections a scope may ask for, by profile: each is a drafter's call, a re-ask when it types a
# figure, and a slide every judge reads. The quick deck's scope asked for six on the embedded model (seven
# drafter calls, 300 s on two cores, then six re-asks); four make a board's first look.
SECTION_BOUNDS: dict[str, int] = {"quick": 4, "full": MAX_SECTIONS}


def deck_config(
    profile: str, *, max_rebuilds: float, max_iterations: float, budget: int | None
) -> DeckConfig:
    if profile not in DECK_PROFILES:
        raise ValueError(
            f"Unknown deck profile {profile!r}; choose one of {', '.join(sorted(DECK_PROFILES))}."
        )
    rebuilds, laps = DECK_PROFILES[profile]
    return DeckConfig(
        name=profile,
        max_rebuilds=min(int(max_rebuilds), rebuilds),
        max_laps=min(int(max_iterations), laps),
        cycle_budget_tokens=budget,
        max_slides=SLIDE_BOUNDS[profile],
        max_sections=SECTION_BOUNDS[profile],
    )
