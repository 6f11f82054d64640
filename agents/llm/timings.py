"""How fast an endpoint worked on one call, read from the response body kept in the ledger.

llama-server adds a ``timings`` object to each chat completion: prompt tokens evaluated and how long that
took, tokens generated and how long, and how many prompt tokens it reused from its cache (the prompt-prefix
reuse that makes stable text first in every prompt pay off). Hosted APIs send no such thing; their calls
show no speeds. The body is untrusted: only finite, non-negative numbers are read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallSpeeds:
    prompt_tokens: int  # evaluated for this call (not counting those reused from the cache)
    prompt_ms: float
    cached_tokens: int | None  # reused from the server's prompt cache, when it says
    generated_tokens: int
    generation_ms: float
    draft_tokens: int | None  # proposed by a draft model (speculative decoding), when it says
    draft_accepted: int | None

    @property
    def prompt_per_s(self) -> float | None:
        return self.prompt_tokens * 1000 / self.prompt_ms if self.prompt_ms > 0 else None

    @property
    def generation_per_s(self) -> float | None:
        return self.generated_tokens * 1000 / self.generation_ms if self.generation_ms > 0 else None


def speeds_from_raw(raw: str) -> CallSpeeds | None:
    """The call's speeds, or None when the body carries none (or is not JSON)."""
    if '"timings"' not in raw:
        return None
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    timings = body.get("timings") if isinstance(body, dict) else None
    if not isinstance(timings, dict):
        return None
    prompt_n, prompt_ms = _number(timings, "prompt_n"), _number(timings, "prompt_ms")
    generated_n, generated_ms = _number(timings, "predicted_n"), _number(timings, "predicted_ms")
    if None in (prompt_n, prompt_ms, generated_n, generated_ms):
        return None
    draft = _number(timings, "draft_n")
    accepted = _number(timings, "draft_n_accepted")
    cached = _number(timings, "cache_n")
    return CallSpeeds(
        prompt_tokens=int(prompt_n or 0),
        prompt_ms=float(prompt_ms or 0),
        cached_tokens=None if cached is None else int(cached),
        generated_tokens=int(generated_n or 0),
        generation_ms=float(generated_ms or 0),
        draft_tokens=None if draft is None else int(draft),
        draft_accepted=None if accepted is None else int(accepted),
    )


def _number(source: dict[str, Any], key: str) -> float | None:
    value = source.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
