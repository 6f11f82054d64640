"""Pages kept drawn for each reader while nothing in the database changes.

A page such as the home page, a run's page or a step's document is a function of its reader (their row), its
address, the headers it varies on, the rows of the database and the minute (a schedule's next run is reckoned
from the clock, to the minute). ``kept_for_reader`` draws a signed-in reader's GET once per such state and
keeps the answer in the shared cache (memos.cache); the same reader asking again before anything is committed
is answered from it, for the cost of the session, their row and one query (``committed_state``), whichever web
process they reach. Any commit anywhere (a step, a vote, a role given) names a new state: the next request
draws the page afresh, access checks included. Inside a transaction nothing is kept (``committed_state``).

Only what the reader may see is ever kept, under their own key, and only a plain 200 answer that sets no
cookie: a refusal, a redirect or a 404 is drawn every time. The one thing on a page that belongs to the
request rather than to the reader is the CSRF token of its forms: it is kept blank and filled with this
request's token as the answer leaves (``{% csrf_token %}`` draws one fixed form of field, and text from rows
is escaped, so nothing else can look like it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.csrf import get_token
from django.utils import timezone

from memos.cache import cache_key, cached_value, committed_state, keep

CSRF_FIELD = re.compile(rb'<input type="hidden" name="csrfmiddlewaretoken" value="[^"]*">')
BLANK_CSRF_FIELD = b'<input type="hidden" name="csrfmiddlewaretoken" value="">'

# A key names its minute: an entry is never read after that minute, and goes from Redis soon after (while
# runs commit every moment, most entries are never read at all: they must not pile up).
KEPT_SECONDS = 60

View = Callable[..., HttpResponseBase]


@dataclass(frozen=True)
class KeptAnswer:
    """A drawn page as kept: its body with blank CSRF fields, and the headers its view set."""

    body: bytes
    headers: tuple[tuple[str, str], ...]


def kept_for_reader(*, vary: tuple[str, ...] = ()) -> Callable[[View], View]:
    """Keep a view's answers per signed-in reader and state of the database (the module's docstring).
    ``vary``: the request headers the view's answer depends on (its ``Vary``), part of the key."""

    def decorate(view: View) -> View:
        name = f"{view.__module__}.{view.__qualname__}"

        @wraps(view)
        def kept(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            user = request.user
            if request.method != "GET" or not isinstance(user, User):
                return view(request, *args, **kwargs)
            state = committed_state()  # before anything the page reads: what is kept is at least this new
            if state is None:
                return view(request, *args, **kwargs)
            key = cache_key(
                "kept-page",
                name,
                # The row as this request read it (it may predate ``state`` by a moment): its own key.
                user.pk,
                user.username,
                user.is_active,
                user.is_staff,
                user.is_superuser,
                request.get_full_path(),
                *(request.headers.get(header, "") for header in vary),
                state,
                timezone.now().strftime("%Y-%m-%dT%H:%M"),
            )
            found = cached_value(key, KeptAnswer)
            if found is None:
                response = view(request, *args, **kwargs)
                answer = _keepable(response)
                if answer is None:
                    return response
                keep(key, answer, timeout=KEPT_SECONDS)
            else:
                answer = found
            return _served(request, answer)

        return kept

    return decorate


def _keepable(response: HttpResponseBase) -> KeptAnswer | None:
    if (
        response.status_code != 200
        or response.streaming
        or response.cookies
        or not isinstance(response, HttpResponse)
    ):
        return None
    return KeptAnswer(
        body=CSRF_FIELD.sub(BLANK_CSRF_FIELD, response.content),
        # Content-Length is the middleware's to set: the body's length changes with the token.
        headers=tuple((name, value) for name, value in response.headers.items() if name != "Content-Length"),
    )


def _served(request: HttpRequest, answer: KeptAnswer) -> HttpResponse:
    body = answer.body
    if BLANK_CSRF_FIELD in body:
        token = get_token(request).encode()  # this request's, as {% csrf_token %} would have drawn it
        body = body.replace(BLANK_CSRF_FIELD, BLANK_CSRF_FIELD[:-2] + token + b'">')
    response = HttpResponse(body)
    for header, value in answer.headers:
        response.headers[header] = value
    return response
