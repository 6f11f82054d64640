"""What a provider keeps of a reply, whole or streamed: text a ledger can store, counts it can hold."""

from __future__ import annotations

from typing import Any

# No completion uses ten million tokens; a bigger count is a broken server. Capped so that the ledger's
# columns (a 32-bit integer, a 12-digit cost) hold it, and still counted against the budget.
MAX_TOKEN_COUNT = 10_000_000


def storable(text: str) -> str:
    """Text that UTF-8 can carry and a PostgreSQL text column can hold: NUL and lone surrogates (which JSON
    escapes can spell, and which made sending the re-ask fail) become U+FFFD."""
    text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def token_count(value: Any) -> int:
    """A usage count as reported: anything but a non-negative integer is 0; capped at ``MAX_TOKEN_COUNT``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return min(value, MAX_TOKEN_COUNT)


def first_choice(data: Any) -> dict[str, Any] | None:
    """``choices[0]`` of a completion or of a streamed chunk, where it is a JSON object."""
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    first: dict[str, Any] = choices[0]
    return first
