"""README, Configuration: "a malformed value stops start-up with a message naming it". Each case loads the
settings module in a process of its own, as any start-up does (the server, a worker, a command)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def load_settings(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **variables}
    return subprocess.run(
        [sys.executable, "-c", "import agency.settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_environment_the_tests_run_in_loads() -> None:
    # The control: each refusal below comes from the one value it changes.
    loaded = load_settings()
    assert loaded.returncode == 0, loaded.stderr


MALFORMED = [
    ({"WEB_WORKERS": "four"}, "WEB_WORKERS must be a whole number, got 'four'"),
    ({"WEB_WORKERS": "0"}, "WEB_WORKERS must be between 1 and 64"),
    ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG must be true or false, got 'maybe'"),
    ({"DATABASE_URL": "mysql://db.example/desk"}, "DATABASE_URL must be a postgres:// URL"),
    ({"DATA_MODE": "offline"}, "DATA_MODE must be 'snapshot' or 'live', got 'offline'"),
    (
        {"RUN_HEARTBEAT_S": "60", "RUN_STALE_AFTER_S": "60"},
        "RUN_HEARTBEAT_S must be at least 1 and below",
    ),
    ({"RUN_MAX_STAGE_ATTEMPTS": "0"}, "RUN_MAX_STAGE_ATTEMPTS must be between 1 and 20"),
    ({"RUN_DB_OUTAGE_S": "2m"}, "RUN_DB_OUTAGE_S must be a whole number, got '2m'"),
    ({"RUN_DB_OUTAGE_S": "0"}, "RUN_DB_OUTAGE_S must be at least 1"),
    ({"LLM_MAX_RETRIES": "three"}, "LLM_MAX_RETRIES must be a whole number, got 'three'"),
    ({"LLM_TIMEOUT_S": "-1"}, "LLM_TIMEOUT_S must be positive"),
    ({"MEMO_ITERATIONS": "9"}, "MEMO_ITERATIONS must be a whole number from 1 to 5, got 9"),
    ({"MEMO_QUICK_ROSTER": "fundamentals,astrology"}, "MEMO_QUICK_ROSTER names unknown specialists"),
    # A workflow's own settings (<package>/settings.py) stop start-up the same way.
    ({"DECK_ACCENT_COLOUR": "blue"}, "DECK_ACCENT_COLOUR must be a colour written #RRGGBB"),
    ({"DECK_CYCLE_BUDGET_TOKENS": "many"}, "DECK_CYCLE_BUDGET_TOKENS must be a whole number"),
    ({"SCREEN_SCHEDULE": "friday evening"}, 'SCREEN_SCHEDULE must be "DAY HH:MM"'),
    ({"AGENCY_ROUNDS": "99"}, "AGENCY_ROUNDS must be a whole number from 1 to"),
    # A search API's key goes in a header: a query that carries one would be quoted by errors and logs.
    (
        {"DATA_MODE": "live", "SCREEN_SEARCH_URL": "https://news.example.org/rss?q={query}&apiKey=sk-1"},
        "SCREEN_SEARCH_URL carries a key in its query",
    ),
    ({"SCREEN_SEARCH_KEY_HEADER": "X Api: Key"}, "SCREEN_SEARCH_KEY_HEADER must be an HTTP header name"),
]


@pytest.mark.parametrize(
    ("variables", "message"),
    MALFORMED,
    ids=[",".join(f"{name}={value}" for name, value in variables.items()) for variables, _ in MALFORMED],
)
def test_a_malformed_value_stops_start_up_with_a_message_naming_it(
    variables: dict[str, str], message: str
) -> None:
    loaded = load_settings(**variables)
    assert loaded.returncode != 0
    last_line = loaded.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured: "), loaded.stderr[-2000:]
    assert message in last_line
