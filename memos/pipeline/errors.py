"""How a stage tells the run engine it cannot go on, which errors are worth another attempt, and how an error
is said on a page."""

from __future__ import annotations

import re

import psycopg
from django.db import DatabaseError, DataError, IntegrityError, InterfaceError, OperationalError
from pydantic import ValidationError

from agents.llm.errors import InvalidOutput, LLMError

_MAX_LINKS = 5


class StageFailed(Exception):
    """The run cannot go on; the message is shown on the run page and printed by the commands."""


class LeaseLost(Exception):
    """This worker no longer holds the stage (another worker claimed it, or the run ended meanwhile).

    Raised before a write, never after one: the stage stops and leaves the run to whoever holds it now.
    """


def shown(error: LLMError) -> str:
    """An LLM failure as the run page may show it. A refused answer's validation errors name fields the model
    invented (a key can be any text, figures included), so they stay in the ledger, not on the page."""
    if isinstance(error, InvalidOutput):
        return "the model's answer did not fit its schema, twice (the ledger keeps both answers)"
    return str(error)


# Errors about the data a write carried, not about the database being there: a value a column refuses (a NUL
# in text, a byte sequence the encoding lacks, a string too long) or a broken constraint.
_ABOUT_THE_DATA = (DataError, IntegrityError, psycopg.DataError, psycopg.IntegrityError)
_UNREACHABLE = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
_DATABASE = (DatabaseError, psycopg.Error)
DETAILS = "the details are in the server log"
# What a database error's own text looks like: its class's name, psycopg's name, the SQL it quotes.
_DATABASE_MESSAGE = re.compile(
    r"\b(?:Data|Integrity|Operational|Programming|Interface|Internal|Database|NotSupported)Error\b"
    r"|\bpsycopg|\bSQLSTATE\b|^LINE \d+:|\b(?:INSERT INTO|UPDATE|DELETE FROM|SELECT) \S+",
    re.MULTILINE,
)


# Stored data that does not fit the model code reads it with: the same data, read again, fails again.
UNREADABLE = "what was stored could not be read back in the shape the desk expects (a bug in the desk)"


def recurs_unchanged(error: BaseException) -> bool:
    """The stage wrote something the database refuses, or read back something that does not fit its model.
    Its next attempt would meet the same data the same way, so the run fails at once instead of being
    resumed."""
    return any(isinstance(link, (*_ABOUT_THE_DATA, ValidationError)) for link in _chain(error))


def described(error: BaseException) -> str:
    """An error of a stage as the run page may show it. A database error is said in words (what failed, and
    where its details are), never with its SQL or the database's own message; anything else as its type and
    message."""
    links = _chain(error)
    if any(isinstance(link, _ABOUT_THE_DATA) for link in links):
        return f"the database refused to store what the stage wrote; {DETAILS}"
    if any(isinstance(link, _UNREACHABLE) for link in links):
        return f"the database could not be reached; {DETAILS}"
    if any(isinstance(link, _DATABASE) for link in links):
        return f"the database reported an error; {DETAILS}"
    if any(isinstance(link, ValidationError) for link in links):
        # A library's message names fields and values and links to its own site: the log keeps it.
        return f"{UNREADABLE}; {DETAILS}"
    return f"{type(error).__name__}: {error}"


def plain(message: str) -> str:
    """A stored run or step message as a page shows it. One that still carries a database's own error (a row
    written before errors were put in words here) is said in words instead."""
    return f"a database error stopped this work; {DETAILS}" if _DATABASE_MESSAGE.search(message) else message


def _chain(error: BaseException) -> list[BaseException]:
    """The error and what caused it (Django wraps psycopg's errors), at most a few links deep."""
    links: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(links) < _MAX_LINKS and current not in links:
        links.append(current)
        current = current.__cause__ or current.__context__
    return links
