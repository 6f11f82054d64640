"""A memo version against the same brief's memo before it: what it now says that the earlier one
contradicts (agents.memo.drift), read from the two frozen versions alone."""

from __future__ import annotations

from pydantic import ValidationError

from agents.memo.drift import Drift, MemoSide, drift
from agents.memo.outputs import MemoOutput
from memos.models import ArtefactVersion

KIND = "memo"


def memo_side(version: ArtefactVersion) -> MemoSide | None:
    """What drift compares of a frozen memo; None for another kind or content this code cannot read."""
    if version.kind != KIND:
        return None
    try:
        output = MemoOutput.model_validate(version.content)
    except ValidationError:
        return None
    return MemoSide(
        label=f"v{version.number}",
        recommendation=output.firewall.final,
        sizing=output.memo.sizing,
        thesis=str(version.sections.get("Headline thesis", "")).strip() or "(no thesis could be shown)",
        tiers=dict(output.tiers),
        load_bearing=list(output.memo.load_bearing),
        facts={str(row["id"]): row for row in version.sources if row.get("kind") == "fact"},
    )


def memo_drift(previous: ArtefactVersion | None, version: ArtefactVersion) -> list[Drift]:
    if previous is None:
        return []
    before, after = memo_side(previous), memo_side(version)
    if before is None or after is None:
        return []
    return drift(before, after)
