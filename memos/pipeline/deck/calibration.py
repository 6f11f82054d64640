"""Whether a run's judge rubric was calibrated against human gold scores (memos.pipeline.deck.desk.calibration
runs the check): the deck loop asks it when it starts, and the calibration service reads it too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.llm.roles import Role
from memos.models import Calibration
from memos.pipeline.gateway import llm_settings


def is_calibrated(rubric_name: str, pins: Any) -> bool:
    """Whether the rubric version ``pins`` name (``Run.rubric_versions`` or ``current_pins().rubrics``)
    passed its latest calibration on the scorer model configured now. The latest decides: a check that
    failed after new gold scores were added withdraws an earlier pass."""
    pin = pins.get(rubric_name) if isinstance(pins, Mapping) else None
    if not isinstance(pin, Mapping) or not isinstance(pin.get("hash"), str):
        return False
    latest = (
        Calibration.objects.filter(
            rubric_version__name=rubric_name,
            rubric_version__content_hash=pin["hash"],
            scorer_model=llm_settings().endpoint_for(Role.SCORER).model,
        )
        .values_list("passed", flat=True)
        .first()
    )
    return bool(latest)
