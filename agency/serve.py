"""The web server ``scripts/run.sh`` starts: ``python -m agency.serve --port 8000``.

Uvicorn with ``WEB_WORKERS`` processes, each serving ``agency.asgi`` (HTTP through Django, WebSocket through
Channels). A run page's socket may sit in any of them: the events an RQ job sends reach it through the
channel layer in Redis, never through the process that served the page.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import cast

import uvicorn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agency.serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agency.settings")
    # Read by the settings of every worker process: they pool their database connections.
    os.environ["ADESK_WEB_SERVER"] = "true"
    from django.conf import settings

    workers: int = settings.WEB_WORKERS  # read (and checked) by the settings module
    uvicorn.run(
        "agency.asgi:application",
        host=args.host,
        port=args.port,
        workers=workers,
        loop="uvloop",
        http="httptools",
        ws="websockets-sansio",
        # Django's handler speaks no lifespan protocol; saying so keeps a warning out of every start.
        lifespan="off",
        # Like Daphne's defaults: X-Forwarded-For is not believed (the login lockout counts by address), and
        # the server does not name itself.
        proxy_headers=False,
        server_header=False,
        # Live fragments are small and go to many sockets: compressing each one per socket costs more CPU
        # than it saves bytes on loopback or a LAN.
        ws_per_message_deflate=False,
        # On SIGTERM a worker waits this long for open sockets (pages reconnect) and requests, then ends them:
        # without a bound it would wait for every run page to be closed.
        timeout_graceful_shutdown=3,
        log_level=cast(dict[str, dict[str, str]], settings.LOGGING)["root"]["level"].lower(),
        access_log=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
