"""The RQ worker the app runs (``manage.py rqworker default --worker-class``
``memos.pipeline.worker.DeskWorker``).

RQ forks a work-horse per job and imports the job's function there; without a warm parent every stage of
every run would pay for importing the pipeline (about a second, most of it ``openai``) and for building its
HTTP clients. This worker does both once, before it forks anything.
"""

from __future__ import annotations

from typing import Any

from rq.worker import Worker

from agents.llm.roles import Role


def warm_up() -> None:
    """Import every workflow's stages, load the prompts and build the shared gateway's clients."""
    from memos.pipeline import jobs  # noqa: F401 - imported for its side effect: loaded before fork
    from memos.pipeline.gateway import gateway
    from memos.pipeline.prompts import templates

    templates()
    gateway().warm(str(role) for role in Role)


class DeskWorker(Worker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        warm_up()
