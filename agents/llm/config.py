"""LLM endpoint configuration, read from an environment mapping.

Every role (fundamentals, synthesizer, evaluator, ...) resolves to one OpenAI-compatible endpoint:
``LLM_BASE_URL`` / ``LLM_API_KEY`` / ``LLM_MODEL`` by default, overridden per role by
``LLM_BASE_URL_<ROLE>``, ``LLM_API_KEY_<ROLE>`` and ``LLM_MODEL_<ROLE>`` (role upper-cased).
With no ``LLM_BASE_URL`` the embedded local model server on loopback is used. ``LLM_JUDGE_MODEL`` (with
``LLM_JUDGE_BASE_URL``, ``LLM_JUDGE_API_KEY`` and ``LLM_JUDGE_FAMILY``) puts every verdict role
(agents.llm.roles.VERDICT_ROLES) on one judge model in one setting; a role's own settings still override it.

Every run has a token budget: ``LLM_RUN_BUDGET_TOKENS``, or ``DEFAULT_RUN_BUDGET_TOKENS`` when it is unset
(``0`` lifts it). The default covers the full profiles on a hosted model with room to spare: on the fake
server a full memo run asked 8 calls for 14,645 tokens and a full deck run 22 calls for 31,566; with every
answer as long as its prompt's ``max_tokens`` allows (six specialists, five synthesis calls over six full
briefs, the evaluator; a deck's drafts with two rebuilds and eight laps) each comes to about 150,000 tokens
by estimate. A run that would pass its budget stops with a clear status (agents.llm.gateway).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from agents.env import ConfigError, Env
from agents.llm.families import family_of_model
from agents.llm.roles import VERDICT_ROLES

__all__ = ["ConfigError", "Endpoint", "LLMSettings", "load_llm_settings"]

LOCAL_MODEL_ALIAS = "local"
DEFAULT_RUN_BUDGET_TOKENS = 250_000
# A full agency run sizes itself at about 2.9 million tokens (3,000 a call): the ceiling leaves it whole.
DEFAULT_RUN_BUDGET_MAX_TOKENS = 3_000_000
DEFAULT_USER_DAILY_TOKENS = 10_000_000
DEFAULT_CALIBRATION_BUDGET_TOKENS = 500_000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class Endpoint(BaseModel):
    """One OpenAI-compatible endpoint and the model asked for on it."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    api_key: str = Field(repr=False)
    model: str

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    @property
    def is_loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def limiter_key(self) -> str:
        """The concurrency cap is per endpoint (server), whatever model is asked of it."""
        return self.base_url.rstrip("/")


class ModelPrice(BaseModel):
    """What a hosted model charges per 1,000 tokens; models not in the table (local ones) cost nothing."""

    model_config = ConfigDict(frozen=True)

    per_1k_in: Decimal = Decimal(0)
    per_1k_out: Decimal = Decimal(0)

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        return (self.per_1k_in * tokens_in + self.per_1k_out * tokens_out) / 1000


FREE = ModelPrice()


class LLMSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    default: Endpoint
    roles: dict[str, Endpoint] = Field(default_factory=dict)
    # ``LLM_JUDGE_MODEL``: the endpoint of every verdict role that has no settings of its own; None: they
    # share the default's.
    judge: Endpoint | None = None
    timeout_s: float = 120.0
    max_retries: int = 3
    max_concurrency: int = 3
    # ``LLM_SLOTS_KEPT_FOR_PEOPLE``: of an endpoint's ``max_concurrency`` slots, how many the desk's scheduled
    # work (the week, the weekly screen, refinement cycles) never takes, so a person's first call starts at
    # once while it runs (agents.llm.limiter); scheduled work keeps at least one slot; 0 keeps none.
    slots_kept_for_people: int = 1
    run_budget_tokens: int | None = None
    # Spending caps that hold whatever a workflow sizes for itself (issue 31, 5): no run's budget exceeds
    # ``run_budget_max_tokens``; one person's runs started in a UTC day together spend at most
    # ``user_daily_tokens``; one calibration pass of the deck's judge at most ``calibration_budget_tokens``.
    # None: no such cap.
    run_budget_max_tokens: int | None = DEFAULT_RUN_BUDGET_MAX_TOKENS
    user_daily_tokens: int | None = DEFAULT_USER_DAILY_TOKENS
    calibration_budget_tokens: int | None = DEFAULT_CALIBRATION_BUDGET_TOKENS
    loopback_only: bool = False
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    # Model families (seed 003: a verdict comes from another family than the work it judges): ``LLM_FAMILY``
    # for the default endpoint, ``LLM_FAMILY_<ROLE>`` per role.
    default_family: str = ""
    judge_family: str = ""
    families: dict[str, str] = Field(default_factory=dict)

    def endpoint_for(self, role: str) -> Endpoint:
        return self.roles.get(role) or self.fallback_for(role)

    def fallback_for(self, role: str) -> Endpoint:
        """What a role without settings of its own runs on: the judge for a verdict role where one is
        configured, the default otherwise."""
        if self.judge is not None and role in VERDICT_ROLES:
            return self.judge
        return self.default

    def family_for(self, role: str) -> str:
        """The role's family: declared (``LLM_FAMILY_<ROLE>``, or ``LLM_JUDGE_FAMILY`` / ``LLM_FAMILY`` for
        the endpoint it shares), or read from its model's name (agents.llm.families)."""
        if role in self.families:
            return self.families[role]
        endpoint = self.endpoint_for(role)
        if endpoint == self.default and self.default_family:
            return self.default_family
        if endpoint == self.judge and self.judge_family:
            return self.judge_family
        return family_of_model(endpoint.model)

    def price_for(self, model: str) -> ModelPrice:
        return self.prices.get(model, FREE)


ROLE_SUFFIX_SEPARATOR = "_"
FAMILY_PREFIX = "LLM_FAMILY_"
# The embedded model on two cores, three slots busy (the week's screen beside a person's memo) writes 1.1-2.9
# tokens a second per slot: a 900-token sector reading takes 5 to 14 minutes. A call cut at 10 minutes threw
# away what it had written and was asked again from its start, over and over (seen: six timeouts in a row).
LOCAL_TIMEOUT_S = 1800.0


def _prices(env: Env, name: str) -> dict[str, ModelPrice]:
    """``LLM_PRICES="gpt-4o-mini=0.00015/0.0006,gpt-4o=0.0025/0.01"``: model=IN/OUT price per 1K tokens."""
    raw = env.raw(name)
    prices: dict[str, ModelPrice] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        model, _, pair = item.rpartition("=")
        price_in, _, price_out = pair.partition("/")
        try:
            amounts = (Decimal(price_in), Decimal(price_out))
        except InvalidOperation as exc:
            raise ConfigError(f"{name} entries look like model=IN/OUT (per 1K tokens), got {item!r}") from exc
        if not model.strip() or not all(a.is_finite() and a >= 0 for a in amounts):
            raise ConfigError(f"{name} entries look like model=IN/OUT (per 1K tokens), got {item!r}")
        prices[model.strip()] = ModelPrice(per_1k_in=amounts[0], per_1k_out=amounts[1])
    return prices


def load_llm_settings(environ: Mapping[str, str]) -> LLMSettings:
    """Build the LLM settings from environment variables; raises ConfigError on bad values."""
    env = Env(environ)
    local_port = env.whole("LOCAL_LLM_PORT", 8081, minimum=1)
    base_url = env.raw("LLM_BASE_URL") or f"http://127.0.0.1:{local_port}/v1"
    using_local = not env.raw("LLM_BASE_URL")
    default = Endpoint(
        base_url=base_url,
        api_key=env.raw("LLM_API_KEY") or "not-needed-for-local",
        model=env.raw("LLM_MODEL") or LOCAL_MODEL_ALIAS,
    )
    if not using_local and not env.raw("LLM_API_KEY") and not default.is_loopback:
        raise ConfigError("LLM_API_KEY is required when LLM_BASE_URL points at a hosted endpoint")

    roles: dict[str, Endpoint] = {}
    prefixes = ("LLM_MODEL_", "LLM_BASE_URL_", "LLM_API_KEY_")
    role_names = {
        key[len(prefix) :].lower()
        for key in env.names()
        for prefix in prefixes
        if key.startswith(prefix) and len(key) > len(prefix)
    }
    judge = None
    if env.raw("LLM_JUDGE_MODEL") or env.raw("LLM_JUDGE_BASE_URL"):
        judge = Endpoint(
            base_url=env.raw("LLM_JUDGE_BASE_URL") or default.base_url,
            api_key=env.raw("LLM_JUDGE_API_KEY") or default.api_key,
            model=env.raw("LLM_JUDGE_MODEL") or default.model,
        )
    for role in sorted(role_names):
        upper = role.upper()
        # A verdict role's own settings fill in from the judge's where one is configured.
        base = judge if judge is not None and role in VERDICT_ROLES else default
        roles[role] = Endpoint(
            base_url=env.raw(f"LLM_BASE_URL_{upper}") or base.base_url,
            api_key=env.raw(f"LLM_API_KEY_{upper}") or base.api_key,
            model=env.raw(f"LLM_MODEL_{upper}") or base.model,
        )

    return LLMSettings(
        default=default,
        roles=roles,
        judge=judge,
        # Three parallel calls on the 2-core embedded model each take minutes (7-10 tokens/s shared).
        timeout_s=env.number("LLM_TIMEOUT_S", LOCAL_TIMEOUT_S if using_local else 120.0, positive=True),
        max_retries=env.whole("LLM_MAX_RETRIES", 3, minimum=0),
        max_concurrency=env.whole("LLM_MAX_CONCURRENCY", 3, minimum=0) or 1,
        slots_kept_for_people=env.whole("LLM_SLOTS_KEPT_FOR_PEOPLE", 1, minimum=0),
        run_budget_tokens=env.whole("LLM_RUN_BUDGET_TOKENS", DEFAULT_RUN_BUDGET_TOKENS, minimum=0) or None,
        run_budget_max_tokens=env.whole("LLM_RUN_BUDGET_MAX_TOKENS", DEFAULT_RUN_BUDGET_MAX_TOKENS, minimum=0)
        or None,
        user_daily_tokens=env.whole("LLM_USER_DAILY_TOKENS", DEFAULT_USER_DAILY_TOKENS, minimum=0) or None,
        calibration_budget_tokens=env.whole(
            "LLM_CALIBRATION_BUDGET_TOKENS", DEFAULT_CALIBRATION_BUDGET_TOKENS, minimum=0
        )
        or None,
        loopback_only=env.flag("LLM_LOOPBACK_ONLY", False),
        prices=_prices(env, "LLM_PRICES"),
        default_family=env.raw("LLM_FAMILY"),
        judge_family=env.raw("LLM_JUDGE_FAMILY"),
        families={
            key.removeprefix(FAMILY_PREFIX).lower(): env.raw(key)
            for key in env.names()
            if key.startswith(FAMILY_PREFIX) and len(key) > len(FAMILY_PREFIX) and env.raw(key)
        },
    )
