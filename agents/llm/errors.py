"""The gateway's error hierarchy: callers catch ``LLMError`` and nothing else escapes ``LLMGateway.complete``.

Two kinds of error live here. Per-attempt errors are raised by providers and limiters and handled by
the gateway (``TransientError`` is retried, ``ProviderFailure`` is not); outcome errors are what the gateway
raises to its caller once a call is over (``TransientFailure``, ``InvalidOutput``, ``BudgetExceeded``,
``ProviderRefused``, or the ``ProviderFailure`` itself).
"""

from __future__ import annotations

from typing import Literal

# "truncated": the body stops mid-JSON; "malformed": it is not UTF-8 JSON at all (an HTML page, garbage).
TransientKind = Literal["timeout", "connection", "rate_limit", "server", "truncated", "malformed", "limiter"]


class LLMError(Exception):
    """Base of every error the LLM gateway raises."""


class PromptError(LLMError):
    """A prompt file is malformed, or a render was given missing or unexpected variables."""


class ProviderRefused(LLMError):
    """The endpoint is not allowed (a hosted endpoint while ``loopback_only`` is on); nothing was sent."""


class BudgetExceeded(LLMError):
    """The run has spent its token budget; no call was made."""


class TransientError(LLMError):
    """One attempt failed in a way that may succeed if tried again (timeout, 429, 5xx, a cut-off or garbled
    body)."""

    def __init__(
        self, message: str, *, kind: TransientKind, retry_after_s: float | None = None, raw: str = ""
    ) -> None:
        super().__init__(message)
        self.kind: TransientKind = kind
        self.retry_after_s = retry_after_s
        self.raw = raw


class ProviderFailure(LLMError):
    """The provider rejected the request for good (bad request, auth, unknown model); retrying cannot help."""

    def __init__(self, message: str, *, status: int | None = None, raw: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.raw = raw


class TransientFailure(LLMError):
    """Every allowed attempt failed with a transient error; the last one is the ``__cause__``."""

    def __init__(self, message: str, *, attempts: int, last_kind: TransientKind) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_kind: TransientKind = last_kind


class InvalidOutput(LLMError):
    """The model's answer failed validation twice (the first answer and the one re-ask)."""

    def __init__(self, message: str, *, raw: str) -> None:
        super().__init__(message)
        self.raw = raw
