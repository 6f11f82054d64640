"""Server-Timing: the app's share of an answer, on every response where SERVER_TIMING turns it on."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_each_answer_says_how_long_the_app_took_where_it_is_on(alice: User) -> None:
    client = Client()
    client.force_login(alice)
    assert "Server-Timing" not in client.get("/")  # off by default: it tells a client the time inside
    timed = ["memos.server_timing.ServerTimingMiddleware", *settings.MIDDLEWARE]
    with override_settings(MIDDLEWARE=timed):
        client = Client()  # a client loads the middleware on its first request
        client.force_login(alice)
        for path, status in (("/", 200), ("/runs/00000000-0000-0000-0000-000000000000/", 404)):
            answer = client.get(path)
            assert answer.status_code == status
            timing = re.fullmatch(r"app;dur=([0-9.]+), cpu;dur=([0-9.]+)", answer["Server-Timing"])
            assert timing is not None and float(timing.group(1)) > 0
