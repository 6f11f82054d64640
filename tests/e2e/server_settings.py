"""The browser tests' web server settings: the desk's own, except that every log line names its process.

The server runs as scripts/run.sh starts it (``python -m agency.serve``: uvicorn with ``WEB_WORKERS``
processes). Its access log (a page answered) and its socket log (a WebSocket accepted) then say which of
them served what, so a test can show that one user's page and that page's live socket were served by two
different processes, and both worked. Nothing else differs from ``agency.settings``.
"""

from __future__ import annotations

import copy
from typing import Any

from agency.settings import *  # noqa: F403 - the desk's settings, every one of them
from agency.settings import LOGGING as DESK_LOGGING

SERVED_BY_FORMAT = "%(asctime)s pid=%(process)d %(levelname)s %(name)s: %(message)s"

_logging: dict[str, Any] = copy.deepcopy(DESK_LOGGING)
_logging["formatters"]["plain"]["format"] = SERVED_BY_FORMAT
# Uvicorn's own loggers ("uvicorn.error" propagates to "uvicorn") write through the same handler. Django
# applies this in each server process after uvicorn set up its logging there, so this is the one that holds.
for _name in ("uvicorn", "uvicorn.access"):
    _logging["loggers"][_name] = {"handlers": ["console"], "level": "INFO", "propagate": False}
LOGGING = _logging
