"""How a stage tells the run engine it cannot go on."""

from __future__ import annotations

from agents.llm.errors import InvalidOutput, LLMError


class StageFailed(Exception):
    """The run cannot go on; the message is shown on the run page and printed by the commands."""


class LeaseLost(Exception):
    """This worker no longer holds the stage (another worker claimed it, or the run ended meanwhile).

    Raised before a write, never after one: the stage stops and leaves the run to whoever holds it now.
    """


def shown(error: LLMError) -> str:
    """An LLM failure as the run page may show it. A refused answer's validation errors name fields the model
    invented (a key can be any text, figures included), so they stay in the ledger, not on the page."""
    if isinstance(error, InvalidOutput):
        return "the model's answer did not fit its schema, twice (the ledger keeps both answers)"
    return str(error)
