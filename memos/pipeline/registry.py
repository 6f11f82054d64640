"""The workflows this version of the desk can run, by the name stored in ``Run.workflow``."""

from __future__ import annotations

from memos.pipeline.deck import WORKFLOW as DECK
from memos.pipeline.memo import WORKFLOW as MEMO
from memos.pipeline.workflows import Workflow

WORKFLOWS: dict[str, Workflow] = {MEMO.name: MEMO, DECK.name: DECK}


class UnknownWorkflow(KeyError):
    pass


def workflow_for(name: str) -> Workflow:
    try:
        return WORKFLOWS[name]
    except KeyError:
        raise UnknownWorkflow(f"this version of the desk cannot run {name!r} workflows yet") from None
