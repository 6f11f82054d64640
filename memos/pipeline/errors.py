"""How a stage tells the run engine it cannot go on."""

from __future__ import annotations


class StageFailed(Exception):
    """The run cannot go on; the message is shown on the run page and printed by the commands."""


class LeaseLost(Exception):
    """This worker no longer holds the stage (another worker claimed it, or the run ended meanwhile).

    Raised before a write, never after one: the stage stops and leaves the run to whoever holds it now.
    """
