"""A model answer that repeats one phrase: told apart from an answer short of room, and stopped while it is
written.

The embedded 1.5B sometimes writes one phrase over and over (a list of fact ids, "The sector ..." again) until
``max_tokens``: on two cores a 900-token loop took five minutes of the demo screen, a 2,400-token one four.
The gateway tells a cut answer that loops from one short of room (``looped``: twice the room would be filled
the same way). A streamed answer is watched as it arrives (``LoopWatch``: the same test, or one block written
out four times), and its reading is stopped once the loop is plain: llama-server cancels a request whose
client went away, so the rest is never generated. The re-ask names the block it repeated (``loop_of``)
instead of showing the loop again: shown its looping answer, the 1.5B wrote it again character for character.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

# A cut answer whose tail compresses this well is a loop, not an answer short of room. Measured on the 1.5B's
# screen answers (zlib, the last 1,000 characters): one that listed fact ids until its 2,400-token bound,
# 0.099; its finished sector answers, however repetitive, 0.22-0.24; specialists' answers 0.42-0.47.
LOOP_TAIL_CHARS = 1_000
LOOP_RATIO = 0.15
# A streamed answer is stopped only when its tail still loops this many characters after it first did: an
# answer that finishes is never judged on a repetitive stretch of its middle alone.
STOP_MARGIN_CHARS = 400
CHECK_EVERY_CHARS = 100  # both checks take about 0.1 ms; a token is one to four characters
# A tail that is one block written out again and again, character for character, is a loop sooner: four
# times over (and at least 400 characters). The 1.5B's market overview repeated four fact ids (112
# characters, 67 tokens) from its first sentence: the compression check stopped it at 1,411 characters,
# 846 of its 900 tokens; four repeats are 450 characters. No answer of ours writes a block four times.
REPEATS = 4
MIN_REPEATED_CHARS = 400
MAX_BLOCK_CHARS = 300

# A re-ask quotes at most this much of the block a loop repeated.
MAX_QUOTED_BLOCK_CHARS = 80

# The finish reason of a streamed answer whose reading was stopped because it looped (never a server's).
STOPPED_LOOPING = "looping"


def looped(content: str) -> bool:
    """Whether an answer's tail is one phrase repeated: twice the room would be filled the same way."""
    # A "\ud800" escape in the JSON decodes to a lone surrogate, which strict UTF-8 cannot encode.
    tail = content[-LOOP_TAIL_CHARS:].encode("utf-8", "surrogatepass")
    if len(tail) < LOOP_TAIL_CHARS:
        return False
    return len(zlib.compress(tail, 9)) / len(tail) < LOOP_RATIO


def repeats_block(content: str) -> bool:
    """Whether the answer ends in one block of characters written ``REPEATS`` times over, exactly."""
    return _period(content) is not None


def _period(content: str) -> int | None:
    """The length of the shortest block ``content``'s tail repeats by ``repeats_block``'s rule, if any."""
    for block in range(1, MAX_BLOCK_CHARS + 1):
        span = max(REPEATS * block, MIN_REPEATED_CHARS)
        if len(content) < span:
            return None
        tail = content[-span:]
        if tail[block:] == tail[:-block]:  # the tail has period ``block``
            return block
    return None


@dataclass(frozen=True)
class Loop:
    """Where an answer's loop began, and the block it repeats (a loop that only compresses: its tail)."""

    start: int
    block: str


def loop_of(content: str) -> Loop:
    """The loop ``content`` ends in: the shortest block its tail repeats exactly, traced back to where the
    repeating began; a tail that only compresses like a loop is taken from ``LOOP_TAIL_CHARS`` before its
    end, its block its last ``MAX_QUOTED_BLOCK_CHARS`` characters."""
    period = _period(content)
    if period is None:
        return Loop(max(len(content) - LOOP_TAIL_CHARS, 0), content[-MAX_QUOTED_BLOCK_CHARS:])
    start = len(content) - period
    while start > 0 and content[start - 1] == content[start - 1 + period]:
        start -= 1
    return Loop(start, content[start : start + period])


@dataclass
class LoopWatch:
    """Watches a streamed answer's length as it grows; ``loops`` says when to stop reading it."""

    _checked_at: int = 0
    _looping_since: int | None = None

    def loops(self, content: str) -> bool:
        """Whether ``content`` (the answer so far) ends in one block written ``REPEATS`` times over, or has
        looped for ``STOP_MARGIN_CHARS`` past the point its tail first did. Checked every
        ``CHECK_EVERY_CHARS`` of growth."""
        if len(content) - self._checked_at < CHECK_EVERY_CHARS:
            return False
        self._checked_at = len(content)
        if repeats_block(content):
            return True
        if not looped(content):
            self._looping_since = None
            return False
        if self._looping_since is None:
            self._looping_since = len(content)
        return len(content) - self._looping_since >= STOP_MARGIN_CHARS
