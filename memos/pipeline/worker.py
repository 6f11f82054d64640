"""The RQ worker the app runs (``manage.py rqworker default --worker-class memos.worker.DeskWorker``).

RQ forks a work-horse per job and imports the job's function there; without a warm parent every stage of
every run would pay for importing the pipeline (about a second, most of it ``openai``) and for building its
HTTP clients. This worker does both once, before it forks anything.
"""

from __future__ import annotations

from typing import Any

from rq.worker import Worker

from memos.pipeline.llm import warm_up


class DeskWorker(Worker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        warm_up()
