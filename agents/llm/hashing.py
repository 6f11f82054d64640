"""Content hashes: the request hash is the ledger's cache key, the prompt hash names a prompt file's bytes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from agents.llm.types import Message


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def canonical_json(value: Any) -> str:
    """One spelling per value (sorted keys, no spaces), so equal requests hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_hash(
    *,
    base_url: str,
    model: str,
    messages: Sequence[Message],
    json_schema: dict[str, Any],
    temperature: float,
    max_tokens: int,
) -> str:
    # The endpoint is part of the key: the same model name on another server (a hosted model, a local one,
    # another quantisation) is another model, and its answer must not stand in for this one's.
    payload = {
        "base_url": base_url.rstrip("/"),
        "model": model,
        "messages": [m.model_dump() for m in messages],
        "schema": json_schema,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    return sha256_hex(canonical_json(payload))
