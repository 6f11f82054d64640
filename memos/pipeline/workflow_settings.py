"""A workflow's own settings, declared in its package: ``<package>/settings.py`` has ``load(environ, desk)``,
which reads the workflow's environment variables (with their defaults and checks, raising ConfigError with
the variable's name) into one typed, frozen value. agency.settings loads every package's at start-up into
``settings.WORKFLOW_SETTINGS``, so a malformed value stops the desk before anything runs, and the workflow
reads its own back, typed, with ``settings_of``.

Django-free at import: the desk's settings module imports this before Django has loaded an app.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Desk:
    """What a workflow's settings may depend on besides its own variables."""

    testing: bool  # the test suite is running (schedules are off, say)
    data_mode: str  # "snapshot" or "live"
    base_dir: Path  # the checkout, where bundled files live


def load_workflow_settings(
    packages: Iterable[str], environ: Mapping[str, str], desk: Desk
) -> dict[str, object]:
    """Every package's settings, by package; a package with no ``settings`` module has none."""
    found: dict[str, object] = {}
    for package in packages:
        module = f"{package}.settings"
        if find_spec(module) is not None:
            found[package] = import_module(module).load(environ, desk)
    return found


def settings_of(package: str, kind: type[T]) -> T:
    """The settings ``package`` declared, as loaded at start-up (or as a test overrides them)."""
    from django.conf import settings

    found = settings.WORKFLOW_SETTINGS.get(package)
    if not isinstance(found, kind):
        raise TypeError(f"settings.WORKFLOW_SETTINGS[{package!r}] is not {kind.__name__}: {found!r}")
    return found
