"""A debate turn (and a board score) as the rows hold them: written one turn at a time under its move's
fence, read back on a resume, and shown to the models and to readers as the threads i1, i2 and i3.

Round 1's critique is one row (thread "all") that opens every thread. Writes are fenced by the move's lease
(memos.pipeline.substeps.SubStepHold), whichever worker debates it. A thread as a prompt carries it is
built by code from the rows, oldest turn first, so each turn only appends to the text the previous call of
the thread was sent: the prompt's prefix is stable, and an endpoint's prompt cache can reuse it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.db import models

from agents.agency.board import BOARD, THREADS, Member, Thread
from agents.llm.types import RenderedPrompt
from memos.models import DebateTurn, Move, MoveScore
from memos.pipeline.substeps import SubStepHold

R = TypeVar("R", bound=models.Model)
MoveHold = SubStepHold[Move]  # a worker's claim on one move's debate
ALL = DebateTurn.Thread.ALL
CRITIC = DebateTurn.Speaker.CRITIC
Slot = tuple[str, int, str]  # (thread, round, speaker)


def slot(turn: DebateTurn) -> Slot:
    return (turn.thread, turn.round, turn.speaker)


def in_thread(turns: Iterable[DebateTurn], thread: Thread) -> list[DebateTurn]:
    """The thread's turns in order: the opening critique, then each round's critic turn and the member's
    answer."""
    mine = [turn for turn in turns if turn.thread in (ALL, thread)]
    return sorted(mine, key=lambda turn: (turn.round, turn.speaker != CRITIC))


def speaker_label(speaker: str) -> str:
    if speaker == CRITIC:
        return "critic"
    member = BOARD[speaker]  # type: ignore[index]  # a board turn's speaker is d1, d2 or d3
    return f"{speaker.upper()} {member.title.lower()}"


def thread_text(turns: Iterable[DebateTurn]) -> str:
    """The thread as a prompt carries it (see the module's note); "" before anyone has spoken."""
    blocks = []
    for turn in turns:
        head = f"[round {turn.round} · {speaker_label(turn.speaker)}"
        head += f" · {turn.position}]" if turn.position else "]"
        body = f"Answering: \u201c{turn.answers}\u201d\n{turn.text}" if turn.answers else turn.text
        blocks.append(f"{head}\n{body}")
    return "\n\n".join(blocks)


def thread_json(turns: Iterable[DebateTurn]) -> list[dict[str, Any]]:
    """A thread as ``--out`` writes it (threads/m<N>/i<k>.json): a list of turns."""
    return [
        {
            "round": turn.round,
            "speaker": turn.speaker,
            "text": turn.text,
            **(
                {"answers": turn.answers, "position": turn.position, "changed": turn.changed}
                if turn.position
                else {}
            ),
            **({"moved_by": turn.moved_by} if turn.changed else {}),
        }
        for turn in turns
    ]


def threads_of(move: Move) -> dict[str, list[DebateTurn]]:
    turns = list(move.turns.all())
    return {thread: in_thread(turns, thread) for thread in THREADS}


def _insert_once(
    hold: MoveHold, model: type[R], slot: dict[str, Any], fields: dict[str, Any], what: str
) -> R:
    """One row for ``slot`` under the move's lease, in one statement (memos.pipeline.substeps). A row
    already written for its slot (a call answered twice around a takeover) is read back, never doubled."""
    return hold.insert_once(model, slot, fields, what=what)


def _provenance(prompt: RenderedPrompt, request_hash: str) -> dict[str, Any]:
    return {
        "prompt_name": prompt.name,
        "prompt_version": prompt.version,
        "prompt_hash": prompt.content_hash,
        "request_hash": request_hash,
    }


def write_turn(
    hold: MoveHold, at: Slot, prompt: RenderedPrompt, request_hash: str, **fields: Any
) -> DebateTurn:
    """One turn, as it arrives, under the move's lease."""
    thread, round_, speaker = at
    slot = {"move": hold.row, "thread": thread, "round": round_, "speaker": speaker}
    provenance = _provenance(prompt, request_hash) | {"worker": hold.worker}
    return _insert_once(hold, DebateTurn, slot, fields | provenance, f"writing a turn of {hold.row.move_id}")


def write_score(
    hold: MoveHold,
    *,
    member: Member,
    phase: str,
    prompt: RenderedPrompt,
    request_hash: str,
    **fields: Any,
) -> MoveScore:
    slot = {"move": hold.row, "member": member, "phase": phase}
    provenance = _provenance(prompt, request_hash)
    return _insert_once(hold, MoveScore, slot, fields | provenance, f"writing a score of {hold.row.move_id}")
