"""The critic of the agency's layer 3 (seed 004): a seasoned CFO who attacks every move, never scores one.

Round 1 is one critique appended to all three board threads (``prompts/agency_critic_opening.md``); rounds 2
to R are one turn per thread, answering that member (``prompts/agency_critic_reply.md``). The debate itself
is ``memos.pipeline.agency.debate``; a turn as a row is ``memos.pipeline.agency.turns``.
"""

from __future__ import annotations

from agents.llm.roles import Role

CRITIC = "critic"
CRITIC_TITLE = "Critic (a seasoned CFO)"
CRITIC_ROLE = Role.CRITIC
