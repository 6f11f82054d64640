"""What a workflow's canned answers read of a request (agents.llm.fakes.server's FakeAnswer): the text of its
messages of one role, the ids a narrowed schema offers, and a stable number to vary answers by."""

from __future__ import annotations

import hashlib
from typing import Any


def message_text(messages: Any, role: str) -> str:
    """The contents of the request's messages of ``role``, joined."""
    if not isinstance(messages, list):
        return ""
    return "\n".join(
        str(m.get("content", "")) for m in messages if isinstance(m, dict) and m.get("role") == role
    )


def schema_enum(node: Any, name: str) -> list[str]:
    """The first enum (or const: an enum of one) under a property called ``name``, its own or its items',
    anywhere in the schema."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and isinstance(properties.get(name), dict):
            field = properties[name]
            for holder in (field, field.get("items")):
                if isinstance(holder, dict) and isinstance(holder.get("enum"), list):
                    return [str(value) for value in holder["enum"]]
                if isinstance(holder, dict) and "const" in holder:
                    return [str(holder["const"])]
        children: list[Any] = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return []
    for child in children:
        found = schema_enum(child, name)
        if found:
            return found
    return []


def stable_number(*parts: str) -> int:
    """The same number for the same parts, in every process (Python's hash() is salted per process)."""
    return int(hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8], 16)
