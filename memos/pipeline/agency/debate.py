"""One move's sandbox, exactly as seed 004 draws it: round 1 is one critique appended to i1, i2 and i3, then
D1, D2 and D3 answer in parallel; rounds 2 to R are three critic turns in parallel, then three board turns in
parallel; after round R each member scores the move. Each member also scores the move blind, before it sees
any debate (those calls run beside the opening critique, off the critical path), so the page can show what
the debate changed.

Every turn and score is a row written the moment its answer arrives (memos.pipeline.agency.turns). A
debate resumed after a killed worker reads its rows and asks only for the turns that are missing; a call that
had completed is answered by the ledger (the same thread gives the same request), so nothing is paid twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TypeVar

from pydantic import BaseModel

from agents.agency.board import BOARD, BOARD_ROLE, MEMBERS, SCORING_ROLE, THREAD_OF, Member, Thread
from agents.agency.checks import answer_check, change, echoes, shown
from agents.agency.config import AgencyConfig
from agents.agency.critic import CRITIC_ROLE
from agents.agency.narrowing import board_schema, critic_schema, score_schema
from agents.agency.outputs import DebateOutput, MemberScores, ProposedMove, Standing
from agents.agency.ranking import member_total
from agents.agency.schemas import METRICS, CriticTurn, ScoreCard
from agents.llm.gateway import LLMGateway
from agents.llm.types import CallContext, RenderedPrompt
from agents.text.quotes import quote_problem
from agents.text.sentences import trim_cut, within_bounds
from memos.models import DebateTurn, Move, MoveScore
from memos.pipeline import fanout
from memos.pipeline.agency.breadths import SCORES, TURNS
from memos.pipeline.agency.debate_inputs import DebateInputs
from memos.pipeline.agency.plan import SANDBOX
from memos.pipeline.agency.reads import Findings
from memos.pipeline.agency.turns import (
    ALL,
    CRITIC,
    MoveHold,
    Slot,
    in_thread,
    slot,
    thread_text,
    write_score,
    write_turn,
)
from memos.pipeline.breadth import Breadth
from memos.pipeline.prompts import template

T = TypeVar("T", bound=BaseModel)
BLIND, FINAL = MoveScore.Phase.BLIND, MoveScore.Phase.FINAL
NO_DEBATE = "(None yet: you score the move as proposed, before any debate.)"
FIRST_LOOK = "(None: this is your first look at the move.)"
NO_BLIND = "(None: this run asks for no scores before the debate.)"
ECHO = "Code: most of this answer repeats the critic's own sentences; it answers nothing new."


def move_document(move: ProposedMove, found: Findings, credited: Iterable[str]) -> str:
    """The move as every turn of its debate reads it (code-written, the same text for every call)."""
    others = [persona for persona in credited if persona != move.persona]
    lines = [
        f"{move.move_id} · {move.risk} risk · proposed by the {move.persona} analyst"
        + (f" (also proposed by: {', '.join(others)})" if others else ""),
        f"Title: {move.title}",
        f"The move: {move.move}",
        "Why:",
        *move.reasoning,
        "Risks the proposer sees: " + " ".join(move.risks),
        "Findings it cites:",
        *(f"- {ref}: {found.claims.get(ref, '(not found)')}" for ref in move.citations),
    ]
    return "\n".join(lines)


@dataclass
class Debate:
    """One move's debate by the worker that holds the move (``hold``): whoever that is, it reads the run's
    rows (``inputs``) and writes its turns under the move's lease."""

    gw: LLMGateway
    inputs: DebateInputs
    hold: MoveHold
    turns: dict[Slot, DebateTurn] = field(default_factory=dict)
    scores: dict[tuple[str, str], MoveScore] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.turns = {slot(turn): turn for turn in self.move.turns.all()}
        self.scores = {(score.member, score.phase): score for score in self.move.scores.all()}

    @property
    def move(self) -> Move:
        return self.hold.row

    @property
    def agency(self) -> AgencyConfig:
        return self.inputs.agency

    @property
    def found(self) -> Findings:
        return self.inputs.found

    @property
    def keep(self) -> frozenset[str]:
        return self.inputs.keep

    @cached_property
    def proposal(self) -> ProposedMove:
        return self.inputs.proposals[self.move.move_id]

    @cached_property
    def document(self) -> str:
        debated = {move.move_id: move for move in self.inputs.merged.debated}
        credited = (
            debated[self.move.move_id].credited if self.move.move_id in debated else [self.proposal.persona]
        )
        return move_document(self.proposal, self.found, credited)

    @cached_property
    def citable(self) -> tuple[str, ...]:
        return self.found.citable

    @cached_property
    def known(self) -> frozenset[str]:
        """What prose may reference: the claims (``[[F1.2]]``) and the figures."""
        return frozenset(self.citable)

    # --- the protocol

    def run(self) -> DebateOutput:
        rounds = self.agency.rounds
        blind = self._start(
            [partial(self.score, m, BLIND) for m in MEMBERS if (m, BLIND) not in self.scores]
            if self.agency.blind_scores
            else [],
            SCORES,
        )
        self.opening()
        self._batch([partial(self.answer, member, 1) for member in MEMBERS], TURNS)
        for number in range(2, rounds + 1):
            self._batch([partial(self.critique, THREAD_OF[member], number) for member in MEMBERS], TURNS)
            self._batch([partial(self.answer, member, number) for member in MEMBERS], TURNS)
        self._wait(blind)
        self._batch([partial(self.score, member, FINAL) for member in MEMBERS], SCORES)
        return self.summary()

    def _start(self, tasks: list[Callable[[], None]], breadth: Breadth) -> Iterator[tuple[int, Future[None]]]:
        """Start the calls now; the iterator gives each as it ends (each writes its own row)."""
        return fanout.in_parallel(enumerate(tasks), limit=self.gw.settings.max_concurrency, breadth=breadth)

    def _wait(self, started: Iterator[tuple[int, Future[None]]]) -> None:
        """Wait for every call started; the first error is raised once all have ended (the rows of the
        others are written)."""
        errors = [error for _, future in started if (error := future.exception()) is not None]
        if errors:
            raise errors[0]

    def _batch(self, tasks: list[Callable[[], None]], breadth: Breadth) -> None:
        self._wait(self._start(tasks, breadth))

    def _ask(self, prompt: RenderedPrompt, schema: type[T], role: str) -> tuple[T, str]:
        """The answer, every string the decoder closed at its bound cut back to its last whole sentence (a
        reader never meets half a sentence), and the ledger's key for the call."""
        self.hold.check()  # no new call for a move this worker no longer holds
        context = CallContext(run_id=str(self.inputs.run.pk), stage=SANDBOX, role=role)
        answer, key = self.gw.complete_traced(prompt, schema, context=context)
        return trim_cut(answer)[0], key

    def _render(self, name: str, values: dict[str, str], untrusted: dict[str, str]) -> RenderedPrompt:
        run = self.inputs.run
        return template(name, run).render(values, untrusted, nonce=run.nonce)

    def _keep(self, turn: DebateTurn) -> None:
        with self._lock:
            self.turns[slot(turn)] = turn

    def _thread(self, thread: Thread) -> list[DebateTurn]:
        with self._lock:
            return in_thread(list(self.turns.values()), thread)

    # --- turns

    def opening(self) -> None:
        """Round 1: one critique, appended to every thread."""
        at = (ALL, 1, CRITIC)
        if at in self.turns:
            return
        prompt = self._render("agency_critic_opening", {}, {"move": self.document})
        answer, key = self._ask(prompt, critic_schema(self.citable), CRITIC_ROLE)
        self._keep(write_turn(self.hold, at, prompt, key, **self._critic_fields(answer)))

    def critique(self, thread: Thread, number: int) -> None:
        """Rounds 2 to R: the critic answers one member in that member's thread."""
        at = (thread, number, CRITIC)
        if at in self.turns:
            return
        history = thread_text(self._thread(thread))
        prompt = self._render("agency_critic_reply", {}, {"move": self.document, "thread": history})
        answer, key = self._ask(prompt, critic_schema(self.citable), CRITIC_ROLE)
        self._keep(write_turn(self.hold, at, prompt, key, **self._critic_fields(answer)))

    def _critic_fields(self, answer: CriticTurn) -> dict[str, object]:
        points: list[str] = []
        notes: list[str] = []
        cited: list[str] = []
        for point in answer.points:
            seen = shown(point.point, self.known, self.keep, language=self.inputs.language)
            if seen.note:
                notes.append(seen.note)
            if not seen.empty:
                points.append(seen.text)
            cited.extend(ref for ref in point.citations if ref in self.citable)
        text = "\n".join(f"{index}. {point}" for index, point in enumerate(points, start=1))
        return {
            "text": text or "(Code withheld every point of this critique.)",
            "note": " ".join(notes)[:300],
            "citations": list(dict.fromkeys(cited)),
        }

    def answer(self, member: Member, number: int) -> None:
        """A board member answers the critic's latest turn in its thread."""
        thread = THREAD_OF[member]
        at = (thread, number, member)
        if at in self.turns:
            return
        history = self._thread(thread)
        critic_turns = [turn.text for turn in history if turn.speaker == CRITIC]
        earlier = [turn for turn in history if turn.speaker == member]
        prompt = self._render(
            BOARD[member].prompt, {}, {"move": self.document, "thread": thread_text(history)}
        )
        answer, key = self._ask(prompt, board_schema(self.citable), BOARD_ROLE)
        reply = shown(answer.reply, self.known, self.keep, language=self.inputs.language)
        echoed = echoes(answer.reply, critic_turns)
        cited = [ref for ref in answer.citations if ref in self.citable]
        moved = change(
            previous=earlier[-1].position if earlier else None,
            position=answer.position,
            moved_by=answer.moved_by,
            citations=cited,
            cited_before=[*self.proposal.citations, *(ref for turn in earlier for ref in turn.citations)],
            critic_turns=critic_turns,
            known_ids=frozenset(self.citable),
        )
        problem = answer_check(answer.answers, critic_turns[-1] if critic_turns else "")
        turn = write_turn(
            self.hold,
            at,
            prompt,
            key,
            text=reply.text or "(Code withheld every sentence of this answer.)",
            note=" ".join(filter(None, [ECHO if echoed else "", reply.note]))[:300],
            citations=cited,
            answers=answer.answers,
            answers_found=not problem,
            position=answer.position,
            changed=moved.changed,
            moved_by=moved.basis,
            change_supported=moved.supported,
        )
        self._keep(turn)

    # --- scores

    def score(self, member: Member, phase: str) -> None:
        if (member, phase) in self.scores:
            return
        board = BOARD[member]
        history = thread_text(self._thread(board.thread)) if phase == FINAL else ""
        # Each lens scores in a judge thread of its own: its final scores are asked with its own blind ones
        # before it, never with another lens's (seed 003: three lenses, not three clones of one verdict).
        prompt = self._render(
            board.score_prompt,
            {},
            {
                "move": self.document,
                "debate": history or NO_DEBATE,
                "own_blind": self._own_blind(member) if phase == FINAL else FIRST_LOOK,
            },
        )
        card, key = self._ask(prompt, score_schema(self.citable), SCORING_ROLE)
        texts = [self.document, history] if history else [self.document]
        checked = {
            name: {
                **card.metric(name).model_dump(),
                "quote_found": not quote_problem(
                    card.metric(name).quote, texts, where="the move or the debate"
                ),
            }
            for name in METRICS
        }
        row = write_score(
            self.hold,
            member=member,
            phase=phase,
            prompt=prompt,
            request_hash=key,
            impact=card.impact.score,
            feasibility=card.feasibility.score,
            risk_adjusted_return=card.risk_adjusted_return.score,
            strategic_alignment=card.strategic_alignment.score,
            card=checked,
        )
        with self._lock:
            self.scores[(member, phase)] = row

    def _own_blind(self, member: Member) -> str:
        """The lens's own scores before the debate, as its thread's earlier turn."""
        row = self.scores.get((member, BLIND))
        if row is None:
            return NO_BLIND
        return "\n".join(
            f"- {name}: {row.card[name]['score']} ({row.card[name].get('reason', '')})" for name in METRICS
        )

    # --- the outcome

    def summary(self) -> DebateOutput:
        final = {member: self.scores[(member, FINAL)] for member in MEMBERS}
        blind = {member: self.scores[(member, BLIND)] for member in MEMBERS if (member, BLIND) in self.scores}
        standings = []
        for member in MEMBERS:
            answers = [turn for turn in self._thread(THREAD_OF[member]) if turn.speaker == member]
            standings.append(
                Standing(
                    member=member,
                    position=answers[-1].position if answers else None,
                    changes=sum(1 for turn in answers if turn.changed),
                    supported_changes=sum(1 for turn in answers if turn.changed and turn.change_supported),
                )
            )
        weakest = min(MEMBERS, key=lambda member: (final[member].total, member))
        last_critique = [t for t in self._thread(THREAD_OF[weakest]) if t.speaker == CRITIC][-1]
        return DebateOutput(
            move_id=self.move.move_id,
            rounds=self.agency.rounds,
            turns=len(self.turns),
            standings=standings,
            blind=[_scores(member, row) for member, row in blind.items()],
            final=[_scores(member, row) for member, row in final.items()],
            total=sum(row.total for row in final.values()),
            blind_total=sum(row.total for row in blind.values()),
            objection=last_critique.text.split("\n", 1)[0].removeprefix("1. "),
            objection_by=f"the critic, to {weakest.upper()} ({BOARD[weakest].title.lower()}), "
            f"in round {last_critique.round}",
        )


def _scores(member: Member, row: MoveScore) -> MemberScores:
    # Bounded when the answer came (agents.text.sentences.bounded); a card stored before that is cut to its
    # bounds here, so a debate that finished is never lost to a reason's length.
    stored = {name: {k: v for k, v in row.card[name].items() if k != "quote_found"} for name in METRICS}
    card = ScoreCard.model_validate(within_bounds(ScoreCard, stored))
    return MemberScores(
        member=member,
        card=card,
        total=member_total(card),
        quotes_found=sum(1 for name in METRICS if row.card[name].get("quote_found")),
    )
