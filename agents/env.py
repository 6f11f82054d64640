"""Configuration read from the environment: one set of typed readers for the whole desk (the Django settings,
the LLM endpoints, the memo's profiles). A blank or missing variable gives the default; a malformed one
raises ``ConfigError`` naming the variable and what it must be, so a process stops at start-up instead of
running with a value nobody meant."""

from __future__ import annotations

from collections.abc import Mapping

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message names the variable."""


class Env:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def raw(self, name: str) -> str:
        return self._environ.get(name, "").strip()

    def names(self) -> list[str]:
        return list(self._environ)

    def text(self, name: str, default: str = "") -> str:
        return self.raw(name) or default

    def flag(self, name: str, default: bool) -> bool:
        raw = self.raw(name).lower()
        if not raw:
            return default
        if raw in TRUE:
            return True
        if raw in FALSE:
            return False
        raise ConfigError(f"{name} must be true or false, got {raw!r}")

    def whole(self, name: str, default: int, *, minimum: int | None = None) -> int:
        found = self.optional_whole(name, minimum=minimum)
        return default if found is None else found

    def optional_whole(self, name: str, *, minimum: int | None = None) -> int | None:
        raw = self.raw(name)
        if not raw:
            return None
        try:
            value = int(raw)
        except ValueError as exc:
            raise ConfigError(f"{name} must be a whole number, got {raw!r}") from exc
        if minimum is not None and value < minimum:
            raise ConfigError(f"{name} must be at least {minimum}, got {value}")
        return value

    def number(self, name: str, default: float, *, positive: bool = False) -> float:
        raw = self.raw(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError as exc:
            raise ConfigError(f"{name} must be a number, got {raw!r}") from exc
        if positive and not value > 0:
            raise ConfigError(f"{name} must be positive, got {value}")
        return value

    def items(self, name: str, default: list[str]) -> list[str]:
        """A comma-separated list, each item stripped, empty items dropped."""
        raw = self.raw(name)
        return [item.strip() for item in raw.split(",") if item.strip()] if raw else default
