"""The RQ worker the app runs (``manage.py rqworker default --worker-class``
``memos.pipeline.worker.DeskWorker``).

RQ forks a work-horse per job and imports the job's function there; without a warm parent every stage of
every run would pay for importing the pipeline (about a second, most of it ``openai``) and for building its
HTTP clients. This worker does both once, before it forks anything.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from rq.worker import Worker

from agents.llm.roles import Role

log = logging.getLogger(__name__)
MAX_WAIT_S = 30.0


def warm_up() -> None:
    """Import every workflow's stages and the PDF renderer, load the prompts, build the shared gateway's
    clients, fingerprint the code, parse the bundled prices, read the bundled posts, compile the desk's
    templates and make what each workflow declares (``Workflow.warm_process``), freeze what was loaded out
    of the garbage collector's sight, and fork the print server. (Web processes import WeasyPrint only
    when they first render; a work-horse would pay its second of import per job.)"""
    from agents.render import (
        pdf,  # noqa: F401 - imported for its side effect: loaded before fork
        print_server,
    )
    from memos.cache import code_version
    from memos.pipeline import jobs  # noqa: F401 - imported for its side effect: loaded before fork
    from memos.pipeline.data_sources import warm_posts, warm_prices
    from memos.pipeline.gateway import gateway
    from memos.pipeline.prompts import templates
    from memos.pipeline.registry import WORKFLOWS

    templates()
    gateway().warm(str(role) for role in Role)
    # The fingerprint of the code every kept value is named by (memos.cache): a walk of some 1,200 files,
    # 30-50 ms, that a run's first cached read would otherwise pay on its path.
    code_version()
    warm_prices()
    warm_posts()
    # Kept per process, so a work-horse forked without them made its run's anew on the run's path: the
    # templates of the cards, versions and notices a run renders (2 ms each), and what each workflow
    # declares (a deck's 16:9 template, 70 ms).
    _compile_templates()
    for workflow in WORKFLOWS.values():
        workflow.warm_process()
    # What is loaded now lives as long as the process: out of the garbage collector's sight, a full
    # collection in a run scans only that run's objects (a gen-2 pass over everything took 90-125 ms, once
    # every few runs, in the middle of one), and a forked work-horse does not copy pages to count them.
    gc.collect()
    gc.freeze()
    # The versions' PDFs printed in a process of their own, forked now that WeasyPrint is loaded and before
    # any thread runs: a print on a work-horse's thread held the interpreter lock from its run for seconds.
    print_server.start()


def _compile_templates() -> None:
    """Compile every template of the desk's own folders (Django's cached loader keeps them per process)."""
    from django.template import TemplateSyntaxError, engines
    from django.template.loader import get_template

    for folder in [Path(folder) for engine in engines.all() for folder in engine.dirs]:
        for path in sorted(folder.rglob("*.html")):
            try:
                get_template(path.relative_to(folder).as_posix())
            except TemplateSyntaxError:  # the page that uses it says so; the worker still starts
                log.exception("worker: template %s does not compile", path)


def _until_redis_answers(worker: str, action: Callable[[], object]) -> None:
    wait = 1.0
    while True:
        try:
            action()
            return
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("worker %s: Redis is unreachable (%s); retrying in %.0f s", worker, exc, wait)
            time.sleep(wait)
            wait = min(MAX_WAIT_S, wait * 2)


class DeskWorker(Worker):
    """RQ's worker, warmed up, and made to outlive Redis restarts.

    RQ itself waits out an outage only while idle: a worker that starts during one, or whose job monitoring
    meets one, exits, and ``run.sh`` then stops the desk. This one waits for Redis to register its birth,
    and starts its work loop again when the loop ended without anyone asking it to stop.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        warm_up()

    def _set_ip_address(self, connection: redis.Redis) -> None:
        # RQ's constructor asks Redis for this worker's address: the first thing a new worker needs it for.
        _until_redis_answers(self.name, lambda: super(DeskWorker, self)._set_ip_address(connection))

    def register_birth(self) -> None:
        _until_redis_answers(self.name, super().register_birth)

    def teardown(self) -> None:
        # A work loop that ended because Redis went away (a job finishing during a restart) must still
        # record the worker's death once Redis is back: RQ refuses the restarted loop's birth otherwise
        # ("there exists an active worker named ..."), and a teardown that raised would end the process.
        _until_redis_answers(self.name, super().teardown)

    def work(self, *args: Any, **kwargs: Any) -> bool:
        worked = False
        while True:
            worked = bool(super().work(*args, **kwargs)) or worked
            if (
                self._stop_requested
                # An idle worker asked to stop (SIGTERM, Ctrl-C) ends its loop with StopRequested and leaves
                # _stop_requested unset; only the request's date says it was asked.
                or self._shutdown_requested_date is not None
                or kwargs.get("burst")
                or kwargs.get("max_jobs")
                or kwargs.get("max_idle_time")
            ):
                return worked
            log.warning("worker %s: its work loop ended on an error; starting it again", self.name)
            time.sleep(1.0)
