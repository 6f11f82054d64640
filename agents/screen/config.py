"""The screen's strategy: one YAML file holds every parameter of a weekly sector screen (seed 002: "single
script, single set of strategy parameters"). ``load_strategy`` reads it; a malformed file is refused with
the field it is about named (``universe.symbols.3: ...``), so the command can say it in one line.

```yaml
as_of: 2015-08-21            # the week ending on this session (default: the universe's last session)
benchmark: SPY               # the market the alpha residual is measured against
volatility_index: VIX        # the regime's volatility level
universe:
  source: stocknet           # the bundled stocknet universe (88 stocks, 9 sectors), or "watchlist"
  symbols: [XLF, XLK]        # a watchlist (or a subset of the stocknet universe)
  sectors: {XLF: Financial}  # symbol -> sector, consulted before the override table and the name keywords
  names: {XLF: Financial Select Sector SPDR Fund}
  prices: path/to/folder     # daily price CSVs for symbols the desk does not bundle (tests only)
thresholds:                  # in percent, as the seed states them
  pure_beta_alpha_pct: 0.5   # below this, with no news, the move is "pure beta": YELLOW
  unexplained_alpha_pct: 1.5 # above this, with no news, the alpha is unexplained: RED
  sector_alpha_pct: 1.0      # a sector's mean alpha past this is "significant alpha"
  deep_dive_alpha_pct: 1.5   # a sector past this gets a deep dive of its own symbols
news:
  overview_queries: 3        # the market overview's searches
  queries_per_sector: 3      # 2 or 3: the third, a deep dive, only for sectors past sector_alpha_pct
  results_per_query: 4
  window_days: 7             # documents dated within this many days up to the as-of session
proposals_per_sector: 4      # the senior analyst proposes flags for this many of a sector's open own moves
models: {}                   # role -> model on the configured endpoint: news_analyst, senior_analyst,
                             # managing_director
```
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.screen.sectors import How

MAX_SYMBOLS = 200
SCREEN_ROLES = ("news_analyst", "senior_analyst", "managing_director")


class StrategyError(ValueError):
    """A strategy file that cannot be used; the message names the field."""


class Universe(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Literal["stocknet", "watchlist"] = "stocknet"
    symbols: list[str] = Field(default_factory=list, max_length=MAX_SYMBOLS)
    sectors: dict[str, str] = Field(default_factory=dict)
    names: dict[str, str] = Field(default_factory=dict)
    prices: str = ""

    @field_validator("symbols")
    @classmethod
    def _symbols(cls, symbols: list[str]) -> list[str]:
        cleaned = [symbol.strip().upper() for symbol in symbols]
        for symbol in cleaned:
            if not symbol or len(symbol) > 16 or not all(c.isalnum() or c in ".-^" for c in symbol):
                raise ValueError(f"{symbol!r} is not a ticker symbol")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("a symbol is listed twice")
        return cleaned

    @field_validator("sectors", "names")
    @classmethod
    def _upper_keys(cls, table: dict[str, str]) -> dict[str, str]:
        return {key.strip().upper(): str(value).strip() for key, value in table.items()}

    @model_validator(mode="after")
    def _watchlist_has_symbols(self) -> Universe:
        if self.source == "watchlist" and not self.symbols:
            raise ValueError("a watchlist universe lists its symbols")
        return self


class Thresholds(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pure_beta_alpha_pct: float = Field(default=0.5, gt=0, le=20)
    unexplained_alpha_pct: float = Field(default=1.5, gt=0, le=50)
    sector_alpha_pct: float = Field(default=1.0, gt=0, le=50)
    deep_dive_alpha_pct: float = Field(default=1.5, gt=0, le=50)

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.pure_beta_alpha_pct >= self.unexplained_alpha_pct:
            raise ValueError("pure_beta_alpha_pct must be below unexplained_alpha_pct")
        return self


class NewsEffort(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    overview_queries: int = Field(default=3, ge=1, le=5)
    queries_per_sector: int = Field(default=3, ge=2, le=3)
    results_per_query: int = Field(default=4, ge=1, le=10)
    window_days: int = Field(default=7, ge=1, le=60)


class Strategy(BaseModel):
    """A screen's strategy, as the YAML states it (validated again whenever a stage reads a run's config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: date | None = None
    benchmark: str = "SPY"
    volatility_index: str = "VIX"
    universe: Universe = Field(default_factory=Universe)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    news: NewsEffort = Field(default_factory=NewsEffort)
    # The symbols of a sector the senior analyst is asked to propose a flag for: those whose flag the honesty
    # protocol leaves open, the largest own moves first, at most this many. A flag the protocol settles
    # (pure beta, unexplained alpha, an unread sector) is code's whatever a model writes, and every entry
    # asked of the embedded model costs it about twenty seconds.
    proposals_per_sector: int = Field(default=4, ge=1, le=40)
    models: dict[str, str] = Field(default_factory=dict)

    @field_validator("models")
    @classmethod
    def _roles(cls, models: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(models) - set(SCREEN_ROLES))
        if unknown:
            raise ValueError(f"unknown roles {unknown}; the screen's roles are {', '.join(SCREEN_ROLES)}")
        empty = [role for role, model in models.items() if not str(model).strip()]
        if empty:
            raise ValueError(f"no model named for {', '.join(empty)}")
        return {role: str(model).strip() for role, model in models.items()}

    @field_validator("benchmark", "volatility_index")
    @classmethod
    def _ticker(cls, value: str) -> str:
        return value.strip().upper()


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader without its date resolver: a date stays text for the schema to read, so a bad one
    ("2015-13-01") is reported against its field instead of failing inside the YAML parser."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_strategy(data: Any) -> Strategy:
    """A strategy from already-parsed YAML (a mapping); StrategyError names the first bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise StrategyError(
            "the strategy file must be a mapping of fields (as_of, universe, thresholds, ...)"
        )
    try:
        return Strategy.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the file"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise StrategyError(f"{where}: {message}") from exc


def load_strategy(text: str) -> Strategy:
    """A strategy from YAML text."""
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506  # a safe loader, minus dates
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise StrategyError(f"the strategy file is not YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    return parse_strategy(data)


class ResolvedUniverse(BaseModel):
    """The universe as a run resolved it: each symbol's name and sector, and which rule gave the sector
    (agents.screen.sectors: table, override, keyword or none)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    symbols: list[str] = Field(min_length=1, max_length=MAX_SYMBOLS)
    names: dict[str, str]
    sectors: dict[str, str]
    rules: dict[str, How]


class ScreenConfig(BaseModel):
    """A screen run's configuration (``Run.config``): its profile, its strategy and its resolved universe."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    strategy: Strategy
    universe: ResolvedUniverse

    @property
    def sector_names(self) -> list[str]:
        """The sectors in the order the screen shows them: by name, "Unclassified" last."""
        found = set(self.universe.sectors.values())
        return sorted(found, key=lambda sector: (sector == "Unclassified", sector))

    def call_bound(self) -> int:
        """Seed 002's budget of LLM calls: a news reading and a synthesis per sector, the market overview,
        the synthesis across sectors and the managing director."""
        return 2 * len(self.sector_names) + 3
