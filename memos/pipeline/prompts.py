"""Prompts and rubrics as a run sees them: the versions it pinned, parsed once per process per content hash.

The files in ``prompts/`` (and ``prompts/rubrics/``) are loaded and validated once per process at start-up (by
the app config): a malformed file, an unknown output schema or a duplicate name stops start-up with a message
naming the file, instead of failing in the middle of a run. They are the seeds of the versioned rows
(``manage.py seed_governance``) and what a run that pinned nothing (one from before versions existed) uses.

A run started by memos.services.runs.start_run pins the active version of every prompt and rubric; here a
stage asks for ``template(name, run)`` and gets the pinned version. Versions are immutable and addressed by
content hash, so the parsed template is cached per hash for the life of the process: a pinned version costs
one query and one parse per process, and nothing on the next call. Kept apart from the gateway so loading
prompts never imports ``openai``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings

from agents.llm.errors import PromptError
from agents.llm.hashing import sha256_hex
from agents.llm.prompts import PromptTemplate, load_prompt_dir, parse_prompt
from agents.rubrics import Rubric, RubricError, parse_rubric
from memos.models import PromptVersion, RubricVersion, Run

RUBRIC_FOLDER = "rubrics"
T = TypeVar("T")

_lock = threading.Lock()
_templates_by_hash: dict[str, PromptTemplate] = {}
_rubrics_by_hash: dict[str, Rubric] = {}
_model_written_by_hash: dict[str, frozenset[str]] = {}


def prompt_dir() -> Path:
    return Path(settings.BASE_DIR) / "prompts"


def rubric_dir() -> Path:
    return prompt_dir() / RUBRIC_FOLDER


@lru_cache(maxsize=1)
def templates() -> dict[str, PromptTemplate]:
    """The prompt files, by name (start-up: a bad file stops the process here)."""
    return load_prompt_dir(prompt_dir())


@lru_cache(maxsize=1)
def rubric_files() -> dict[str, tuple[Path, Rubric, str]]:
    """The rubric files, by name: (path, parsed rubric, sha256 of the file's bytes)."""
    found: dict[str, tuple[Path, Rubric, str]] = {}
    for path in sorted(rubric_dir().glob("*.yaml")):
        raw = path.read_bytes()
        rubric = parse_rubric(raw, origin=str(path))
        if rubric.name in found:
            raise RubricError(f"{path}: rubric name {rubric.name!r} is also used by {found[rubric.name][0]}")
        found[rubric.name] = (path, rubric, sha256_hex(raw))
    return found


def load_at_start() -> None:
    """Everything a run may read from files, parsed now: the app config calls it."""
    templates()
    rubric_files()


def template(name: str, run: Run | None = None) -> PromptTemplate:
    """Prompt ``name`` as ``run`` pinned it; the file's for a run that pinned nothing (or no run)."""
    pin = _pin(run.prompt_versions if run is not None else None, name)
    if pin is None:
        return templates()[name]
    found = _templates_by_hash.get(pin["hash"])
    if found is None:
        found = _remember(_templates_by_hash, pin["hash"], lambda: _parse_prompt_version(name, pin))
    return found


def rubric(name: str, run: Run | None = None) -> Rubric:
    """Rubric ``name`` as ``run`` pinned it; the file's for a run that pinned nothing (or no run)."""
    return pinned_rubric(name, run.rubric_versions if run is not None else None)


def pinned_rubric(name: str, pins: Any) -> Rubric:
    """Rubric ``name`` as the pins (``Run.rubric_versions``) name it: a run being started reads it here."""
    pin = _pin(pins, name)
    if pin is None:
        return rubric_files()[name][1]
    found = _rubrics_by_hash.get(pin["hash"])
    if found is None:
        found = _remember(_rubrics_by_hash, pin["hash"], lambda: _parse_rubric_version(name, pin))
    return found


def model_written_anchors(name: str, pins: Any) -> frozenset[str]:
    """The dimensions of rubric ``name`` as the pins name it whose anchor at 5 a model wrote (adopted from a
    run's proposal, not since saved by an admin: RubricVersion.model_written_anchors). None for a file's
    version; a stored version's marks never change, so they are read once per process per content hash."""
    pin = _pin(pins, name)
    on_disk = rubric_files().get(name)
    if pin is None or (on_disk is not None and on_disk[2] == pin["hash"]):
        return frozenset()
    found = _model_written_by_hash.get(pin["hash"])
    if found is None:
        found = _remember(_model_written_by_hash, pin["hash"], lambda: _read_model_written(name, pin))
    return found


def _read_model_written(name: str, pin: dict[str, Any]) -> frozenset[str]:
    keys = RubricVersion.objects.filter(name=name, content_hash=pin["hash"]).values_list(
        "model_written_anchors", flat=True
    )
    return frozenset(keys.first() or ())


def _pin(pins: Any, name: str) -> dict[str, Any] | None:
    if not isinstance(pins, dict):
        return None
    pin = pins.get(name)
    return pin if isinstance(pin, dict) and isinstance(pin.get("hash"), str) else None


def _remember(cache: dict[str, T], key: str, make: Callable[[], T]) -> T:
    # Parsed outside the lock (the fan-out's threads may ask at once; a second parse is harmless), kept once.
    value = make()
    with _lock:
        return cache.setdefault(key, value)


def _parse_prompt_version(name: str, pin: dict[str, Any]) -> PromptTemplate:
    # The seed file itself when the pinned version is the file's content: no query at all.
    on_disk = templates().get(name)
    if on_disk is not None and on_disk.content_hash == pin["hash"]:
        return on_disk
    row = PromptVersion.objects.only("content", "version").get(name=name, content_hash=pin["hash"])
    parsed = parse_prompt(row.content.encode("utf-8"), origin=Path(f"prompt {name} v{row.version}"))
    if parsed.content_hash != pin["hash"]:  # a row is immutable (a trigger): this would be corruption
        raise PromptError(f"prompt {name} v{row.version}: its content no longer matches its hash")
    return parsed


def _parse_rubric_version(name: str, pin: dict[str, Any]) -> Rubric:
    on_disk = rubric_files().get(name)
    if on_disk is not None and on_disk[2] == pin["hash"]:
        return on_disk[1]
    row = RubricVersion.objects.only("content", "version").get(name=name, content_hash=pin["hash"])
    raw = row.content.encode("utf-8")
    if sha256_hex(raw) != pin["hash"]:
        raise RubricError(f"rubric {name} v{row.version}: its content no longer matches its hash")
    return parse_rubric(raw, origin=f"rubric {name} v{row.version}")
