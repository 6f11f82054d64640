"""Whether a run's judge rubric was calibrated against human gold scores (memos.pipeline.deck.desk.calibration
runs the check): the deck loop asks it when it starts, and the calibration service reads it too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from agents.llm.roles import Role
from memos.models import Calibration
from memos.pipeline.gateway import llm_settings


def configured_scorer() -> str:
    """The scorer a calibration is of: its model on its endpoint ("gpt-4.1 at api.example.com/v1"). The
    same model name served elsewhere (another provider, a local server) is another judge, calibrated apart
    (issue 31: keyed by the model's name alone, a calibration carried over to any endpoint serving a model of
    that name)."""
    endpoint = llm_settings().endpoint_for(Role.SCORER)
    parts = urlsplit(endpoint.base_url)
    place = parts.netloc.rsplit("@", 1)[-1] + parts.path.rstrip("/")
    return f"{endpoint.model} at {place}"[:200]


def is_calibrated(rubric_name: str, pins: Any) -> bool:
    """Whether the rubric version ``pins`` name (``Run.rubric_versions`` or ``current_pins().rubrics``)
    passed its latest calibration by the scorer configured now (its model on its endpoint). The latest
    decides: a check that failed after new gold scores were added withdraws an earlier pass."""
    pin = pins.get(rubric_name) if isinstance(pins, Mapping) else None
    if not isinstance(pin, Mapping) or not isinstance(pin.get("hash"), str):
        return False
    latest = (
        Calibration.objects.filter(
            rubric_version__name=rubric_name,
            rubric_version__content_hash=pin["hash"],
            scorer_model=configured_scorer(),
        )
        .values_list("passed", flat=True)
        .first()
    )
    return bool(latest)
