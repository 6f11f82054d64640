"""Malformed chat-completion replies for the release gate: hand-picked families, then seeded random ones.

Every reply is what the fake server's ``raw`` fault sends as it is: a status, a content type, extra headers
and any bytes. ``malformed_replies()`` returns them deduplicated, in a fixed order, the same on every run.
"""

from __future__ import annotations

import base64
import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

JSON_TYPE = "application/json"
SEED = 20261101
VALID = {"risk": "low", "title": "Buy back shares", "score": 42}
DEEP = 100_000  # deeper than any recursion limit, in the body or in the content
HUGE = 4 * 1024 * 1024


@dataclass(frozen=True)
class Reply:
    family: str
    body: bytes
    status: int = 200
    content_type: str | None = JSON_TYPE
    headers: tuple[tuple[str, str], ...] = ()

    def fault(self) -> dict[str, Any]:
        return {
            "kind": "raw",
            "status": self.status,
            "body_b64": base64.b64encode(self.body).decode(),
            "content_type": self.content_type,
            "headers": dict(self.headers),
        }

    def describe(self) -> str:
        shown = self.body[:80] + (b"..." if len(self.body) > 80 else b"")
        return f"{self.family} HTTP {self.status} {self.content_type!r} {len(self.body)} bytes {shown!r}"


def completion(content: Any = None, **overrides: Any) -> dict[str, Any]:
    """A well-formed chat completion whose content is ``content`` (a valid answer by default)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-malformed",
        "object": "chat.completion",
        "created": 1_790_000_000,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": json.dumps(VALID) if content is None else content,
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 31, "completion_tokens": 17, "total_tokens": 48},
    }
    body.update(overrides)
    return body


def encoded(value: Any) -> bytes:
    return json.dumps(value).encode()


GOOD = encoded(completion())
COMPACT = json.dumps(completion(), separators=(",", ":")).encode()
PRETTY = json.dumps(completion(), indent=2).encode()
MISSING = object()

# (path into the completion, as keys and indexes) -> every odd value tried there; MISSING deletes the key.
ODD_VALUES: list[Any] = [MISSING, None, True, 0, -1, 1.5, 2**64, "", "x", [], {}, [None], {"a": 1}]
PATHS: list[tuple[str | int, ...]] = [
    ("id",),
    ("object",),
    ("created",),
    ("model",),
    ("choices",),
    ("choices", 0),
    ("choices", 0, "index"),
    ("choices", 0, "message"),
    ("choices", 0, "message", "role"),
    ("choices", 0, "message", "content"),
    ("choices", 0, "finish_reason"),
    ("usage",),
    ("usage", "prompt_tokens"),
    ("usage", "completion_tokens"),
    ("usage", "total_tokens"),
]


def with_value(path: tuple[str | int, ...], value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    body = copy.deepcopy(base if base is not None else completion())
    node: Any = body
    for step in path[:-1]:
        node = node[step]
    if value is MISSING:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return body


def _empty_and_whitespace() -> Iterator[Reply]:
    for body in [b"", b" ", b"\n", b"\r\n", b"\t", b"   \n\t  ", b"\x00", b"\x00" * 16, b"\x0b\x0c", b"\xa0"]:
        for content_type in [JSON_TYPE, None, "text/plain"]:
            yield Reply("empty or whitespace", body, content_type=content_type)


def _truncated() -> Iterator[Reply]:
    for cut in range(1, len(COMPACT)):
        yield Reply("truncated JSON", COMPACT[:cut])
    for cut in range(1, len(PRETTY), 7):
        yield Reply("truncated JSON", PRETTY[:cut])


BAD_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xc0\xaf", b"\x80", b"\xe2\x82"]


def _invalid_utf8() -> Iterator[Reply]:
    anchors = [b'"content": "', b'"model": "fake', b'"finish_reason": "st', b'"choices"', b'"us', b"{", b", "]
    for bad in BAD_UTF8:
        yield Reply("invalid UTF-8 outside strings", bad + GOOD)
        yield Reply("invalid UTF-8 outside strings", GOOD + bad)
        yield Reply("invalid UTF-8 outside strings", GOOD.replace(b'"', bad, 1))
        for anchor in anchors:
            at = GOOD.index(anchor) + len(anchor)
            family = (
                "invalid UTF-8 inside strings" if anchor.endswith(b'"') else "invalid UTF-8 outside strings"
            )
            yield Reply(family, GOOD[:at] + bad + GOOD[at:])
        # Inside the answer's own JSON: the title.
        yield Reply("invalid UTF-8 inside strings", GOOD.replace(b"Buy back", b"Buy " + bad))


ODD_ESCAPES = [b"\\ud800", b"\\udc00", b"\\udfff\\ud800", b"\\u0000", b"\\u001b", b"\\uFFFE", b"\\x41", b"\\"]


def _odd_escapes() -> Iterator[Reply]:
    """Escapes that decode to what UTF-8 text cannot hold (lone surrogates) or a database refuses (NUL)."""
    anchors = [b'"content": "', b'"model": "', b'"finish_reason": "', b'"role": "', b'"id": "']
    for escape in ODD_ESCAPES:
        for anchor in anchors:
            at = GOOD.index(anchor) + len(anchor)
            yield Reply("odd escapes in strings", GOOD[:at] + escape + GOOD[at:])
        title = GOOD.index(b"Buy back")
        yield Reply("odd escapes in strings", GOOD[:title] + escape.replace(b"\\", b"\\\\") + GOOD[title:])
        error = b'{"error": {"message": "bad ' + escape + b' request", "type": "x' + escape + b'"}}'
        for status in [400, 429, 500]:
            yield Reply("odd escapes in strings", error, status=status)


def _wrong_top_level() -> Iterator[Reply]:
    for value in [
        [],
        [completion()],
        "",
        "a string",
        0,
        -1,
        1.5,
        1e300,
        None,
        True,
        False,
        {},
        [[[]]],
        {"a": 1},
    ]:
        yield Reply("wrong top-level type", encoded(value))
    for literal in [b"1e400", b"-0", b"0x10", b"01", b"'single'", b"{'a': 1}", b"undefined", b"None", b"nul"]:
        yield Reply("wrong top-level type", literal)


def _type_confusion() -> Iterator[Reply]:
    """Every field of the completion missing, null, or of the wrong type."""
    for path in PATHS:
        for value in ODD_VALUES:
            yield Reply(f"wrong type at {'.'.join(map(str, path))}", encoded(with_value(path, value)))


def _choices_and_message() -> Iterator[Reply]:
    for choices in [
        [None],
        [1],
        ["s"],
        [[]],
        [{}],
        [{"index": 0}],
        {"0": completion()["choices"][0]},
        [True],
    ]:
        yield Reply("odd choices", encoded(completion(choices=choices)))
    for message in [[], 1, "text", {"role": "assistant"}, {"content": json.dumps(VALID)}, {"tool_calls": []}]:
        yield Reply("odd message", encoded(with_value(("choices", 0, "message"), message)))
    for content in [VALID, [VALID], 42, 4.2, True, json.dumps(VALID).encode().hex()]:
        yield Reply("odd content", encoded(with_value(("choices", 0, "message", "content"), content)))
    for role in ["user", "system", "tool", "", None, 7]:
        yield Reply("odd role", encoded(with_value(("choices", 0, "message", "role"), role)))


def _finish_reasons() -> Iterator[Reply]:
    for reason in [
        "length",
        "LENGTH",
        " length",
        "content_filter",
        "tool_calls",
        "function_call",
        "stop ",
        "x" * 5000,
    ]:
        yield Reply("odd finish_reason", encoded(with_value(("choices", 0, "finish_reason"), reason)))
    for values in [{}, {"prompt_tokens": -5, "completion_tokens": -1}, {"prompt_tokens": "7"}]:
        yield Reply("odd usage", encoded(completion(usage=values)))
    for count in [10**30, 2**63, 2**31, -(2**63), 1e308, "12", "many", 12.0, float(2**53)]:
        yield Reply(
            "odd usage", encoded(completion(usage={"prompt_tokens": count, "completion_tokens": count}))
        )


WRONG_ANSWERS: list[Any] = [
    {},
    [],
    [VALID],
    None,
    True,
    42,
    "low",
    VALID | {"risk": "extreme"},
    VALID | {"risk": None},
    VALID | {"title": "ab"},
    VALID | {"title": "x" * 61},
    VALID | {"title": 12345},
    VALID | {"score": -1},
    VALID | {"score": 121},
    VALID | {"score": "42"},
    VALID | {"score": 42.5},
    VALID | {"score": True},
    VALID | {"score": 10**40},
    VALID | {"extra": 1},
    {"risk": "low"},
    {"title": "Buy back shares", "score": 42},
    {"move": VALID},
    {"RISK": "low", "TITLE": "Buy back shares", "SCORE": 42},
]


def _content_of_the_wrong_schema() -> Iterator[Reply]:
    for answer in WRONG_ANSWERS:
        yield Reply("content of the wrong schema", encoded(completion(json.dumps(answer))))
    raw_contents = [
        '{"risk": "low", "title": "Buy back shares", "score": 42} trailing',
        '{"risk": "low", "title": "Buy back shares", "score": 42}{"risk": "low"}',
        '{"risk": "low", "title": "\\ud800 back shares", "score": 42}',  # a lone surrogate
        '{"risk": "low", "title": "\\u0000 NUL shares", "score": 42}',
        '{"risk": "low", "title": "Buy back shares", "score": 1' + "0" * 5000 + "}",
        '{"risk": "low", "title": "Buy back shares", "score": 42, "score": "x"}',
        '{"risk": "low", "title": "Buy back shares", "score": 4.2e1}',
        '{"risk": "low", "title": "Buy back shares", "score": 42,}',
        "{risk: 'low', title: 'Buy back shares', score: 42}",
    ]
    for content in raw_contents:
        yield Reply("content of the wrong schema", encoded(completion(content)))


def _content_not_json() -> Iterator[Reply]:
    for content in [
        "",
        " ",
        "\n\n",
        "Sure! Here is the analysis you asked for.",
        "risk: low\ntitle: Buy back shares\nscore: 42",
        "<answer><risk>low</risk></answer>",
        "{",
        "}",
        "[",
        "undefined",
        "NaN",
        "null",
        "\ufeff" + json.dumps(VALID),
        "\x00" * 10,
        "I cannot help with that.",
        json.dumps(json.dumps(VALID)),  # JSON of a string holding the answer
    ]:
        yield Reply("content that is not JSON", encoded(completion(content)))


def _fenced() -> Iterator[Reply]:
    for content in [
        "```json\n{bad\n```",
        "```json\n{}\n```",
        "```\n```",
        "```",
        "``````",
        "```json```",
        "```json\n" + json.dumps(VALID),
        json.dumps(VALID) + "\n```",
        "```json\n" + json.dumps(VALID | {"risk": "extreme"}) + "\n```",
        "```python\nprint('hi')\n```",
        "```\n" + "[" * 1000 + "\n```",
        "~~~json\n" + json.dumps(VALID) + "\n~~~",
        "```json\n```json\n" + json.dumps(VALID) + "\n```\n```",
        "```js on\n" + json.dumps(VALID) + "\n```",
    ]:
        yield Reply("Markdown fence around invalid JSON", encoded(completion(content)))


def _huge() -> Iterator[Reply]:
    yield Reply("huge", encoded(completion("a" * HUGE)))
    yield Reply("huge", encoded(completion(json.dumps(VALID | {"title": "t" * HUGE}))))
    yield Reply("huge", GOOD[:-1] + b" " * HUGE + b"}")
    yield Reply("huge", encoded(completion(choices=[completion()["choices"][0]] * 50_000)))
    yield Reply("huge", GOOD.replace(b'"prompt_tokens": 31', b'"prompt_tokens": 1' + b"0" * 10_000))
    yield Reply("huge", b"[" + b"1," * (HUGE // 2) + b"1]")
    yield Reply("huge", GOOD + b" " + GOOD)


def _deep() -> Iterator[Reply]:
    yield Reply("deeply nested", b"[" * DEEP)
    yield Reply("deeply nested", b"[" * DEEP + b"]" * DEEP)
    yield Reply("deeply nested", b'{"a":' * DEEP + b"1" + b"}" * DEEP)
    yield Reply(
        "deeply nested", GOOD.replace(b'"usage": {', b'"usage": ' + b"[" * DEEP + b"]" * DEEP + b', "u": {')
    )
    deep_content = json.dumps({"choices": None}).encode()
    yield Reply("deeply nested", GOOD[:-1] + b', "extra": ' + b"{" * 5 + deep_content)
    for content in ["[" * DEEP, "[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP]:
        yield Reply("deeply nested content", encoded(completion(content)))
    nested: Any = VALID
    for _ in range(200):
        nested = {"risk": nested}
    yield Reply("deeply nested content", encoded(completion(json.dumps(nested))))


def _nan_and_infinity() -> Iterator[Reply]:
    for literal in [b"NaN", b"Infinity", b"-Infinity"]:
        yield Reply("NaN and Infinity", literal)
        yield Reply("NaN and Infinity", GOOD.replace(b"31", literal))
        yield Reply("NaN and Infinity", GOOD.replace(b"1790000000", literal))
        score = literal.decode()
        yield Reply(
            "NaN and Infinity",
            encoded(completion(f'{{"risk": "low", "title": "Buy back", "score": {score}}}')),
        )


def _duplicate_keys() -> Iterator[Reply]:
    choices = json.dumps(completion()["choices"])
    for first, second in [(choices, "null"), ("null", choices), (choices, "[]"), ('"x"', choices)]:
        yield Reply("duplicate keys", f'{{"choices": {first}, "choices": {second}}}'.encode())
    yield Reply("duplicate keys", GOOD.replace(b'"content":', b'"content": null, "content":'))
    yield Reply("duplicate keys", GOOD.replace(b'"content":', b'"content": 7, "content": "x", "content":'))
    yield Reply("duplicate keys", GOOD.replace(b'"message": {', b'"message": null, "message": {'))
    yield Reply("duplicate keys", GOOD.replace(b'"usage":', b'"usage": {"prompt_tokens": -4}, "usage":'))
    for content in [
        '{"risk": "low", "risk": "extreme", "title": "Buy back", "score": 1}',
        '{"risk": "low"} {}',
    ]:
        yield Reply("duplicate keys", encoded(completion(content)))


def _byte_order_marks() -> Iterator[Reply]:
    text = GOOD.decode()
    yield Reply("byte order mark", b"\xef\xbb\xbf" + GOOD)
    yield Reply("byte order mark", b"\xef\xbb\xbf\xef\xbb\xbf" + GOOD)
    yield Reply("byte order mark", b"\xef\xbb\xbf")
    yield Reply("byte order mark", b"\xef\xbb\xbf" + b" ")
    for codec in ["utf-16", "utf-16-le", "utf-16-be", "utf-32"]:
        for content_type in [JSON_TYPE, f"application/json; charset={codec}"]:
            yield Reply("byte order mark", text.encode(codec), content_type=content_type)
    yield Reply("byte order mark", b"\xff\xfe" + GOOD)
    yield Reply("byte order mark", encoded(completion("\ufeff\ufeff" + json.dumps(VALID))))


CONTENT_TYPES: list[str | None] = [
    None,
    "",
    ";;;",
    "text/html",
    "text/plain",
    "text/event-stream",
    "application/octet-stream",
    "application/xml",
    "multipart/form-data; boundary=x",
    "application/json; charset=",
    "application/json; charset=bogus",
    "application/json; charset=latin-1",
    "application/json; charset=cp500",
    "application/json; charset=utf-7",
    "application/json; charset=idna",
    "application/json; charset=punycode",
    "application/json; charset=rot13",
    "application/json; charset=zlib",
    "application/json; charset=bz2",
    "application/json; charset=base64",
    "application/json; charset=hex",
    "application/json; charset=uu",
    "application/json; charset=quopri",
    "application/json; charset=mbcs",
    "application/json; charset=undefined",
    'application/json; charset="utf-8',
]


def _content_types() -> Iterator[Reply]:
    error_body = encoded({"error": {"message": "bad request", "type": "invalid_request_error"}})
    for content_type in CONTENT_TYPES:
        yield Reply("wrong content type", GOOD, content_type=content_type)
        yield Reply("wrong content type", GOOD[:40], content_type=content_type)
        yield Reply("wrong content type", b"\xff\xfe\x00garbage", content_type=content_type)
        yield Reply("wrong content type", error_body, status=400, content_type=content_type)
        yield Reply("wrong content type", b"\xff" + error_body, status=503, content_type=content_type)
    for encoding in ["gzip", "deflate", "br", "zstd", "identity", "compress", "gzip, gzip", "x-unknown"]:
        yield Reply("odd content encoding", GOOD, headers=(("Content-Encoding", encoding),))
        yield Reply("odd content encoding", b"\x1f\x8b\x08garbage", headers=(("Content-Encoding", encoding),))


HTML_PAGES = [
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
    b"<hr><center>nginx</center></body></html>",
    b"<!DOCTYPE html><html lang=en><title>Error 520</title><body>Web server is returning an unknown error"
    b"</body></html>",
    b"<!doctype html><h1>Service Unavailable</h1><p>The server is temporarily busy, try again later.</p>",
    b"<html><body><h1>It works!</h1></body></html>",
    b"<html><body>Sign in to continue <form action='/login'></form></body></html>",
    b"<?xml version='1.0'?><Error><Code>AccessDenied</Code></Error>",
]


def _html_pages() -> Iterator[Reply]:
    for page in HTML_PAGES:
        for content_type in ["text/html", "text/html; charset=utf-8", JSON_TYPE]:
            yield Reply("HTML error page with 200", page, content_type=content_type)


STATUSES = [
    *[200, 201, 202, 203, 204, 205, 206, 226, 299],
    *[300, 301, 302, 303, 304, 305, 307, 308, 399],
    *[400, 401, 402, 403, 404, 405, 408, 409, 410, 413, 415, 418, 422, 425, 429, 431, 451, 499],
    *[500, 501, 502, 503, 504, 507, 520, 529, 599],
]
ODD_BODIES = [
    b"",
    HTML_PAGES[0],
    b"\xff\xfe\xfd",
    GOOD[:50],
    GOOD,
    encoded({"error": None}),
    encoded({"error": "a string"}),
    encoded({"error": {"message": 12, "code": []}}),
    encoded([]),
    b"null",
]


def _statuses() -> Iterator[Reply]:
    for status in STATUSES:
        for body in ODD_BODIES:
            yield Reply(f"HTTP {status // 100}xx with an odd body", body, status=status)
    for status in [301, 302, 303, 307, 308]:
        for location in [
            "/v1/chat/completions",
            "http://127.0.0.1:9/v1/chat/completions",
            "",
            "::not a url::",
        ]:
            headers = (("Location", location),)
            yield Reply("redirect", GOOD, status=status, headers=headers)
    for status in [429, 503]:
        for value in ["-1", "NaN", "inf", "1e999", "99999999999", "Wed, 99 Foo 2026", "", "\u00e9"]:
            for name in ["Retry-After", "Retry-After-Ms"]:
                yield Reply("odd Retry-After", b"", status=status, headers=((name, value),))


def _random_bytes(rng: random.Random) -> Iterator[Reply]:
    for _ in range(150):
        length = rng.choice([1, 2, 3, 8, 30, 100, 300, 2000])
        yield Reply("random bytes", rng.randbytes(length))


STRUCTURAL = b'{}[]",:\\ 0123456789.-+eEtrufalsn'


def _random_mutations(rng: random.Random) -> Iterator[Reply]:
    for _ in range(300):
        body = bytearray(rng.choice([GOOD, COMPACT, PRETTY]))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(body))
            match rng.randrange(6):
                case 0:
                    body[at] ^= 1 << rng.randrange(8)
                case 1:
                    del body[at]
                case 2:
                    body.insert(at, rng.randrange(256))
                case 3:
                    body.insert(at, rng.choice(STRUCTURAL))
                case 4:
                    end = min(len(body), at + rng.randint(1, 20))
                    body[at:at] = body[at:end]
                case _:
                    del body[at : at + rng.randint(1, 30)]
        yield Reply("random mutation", bytes(body))


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    scalars: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.randint(-(2**70), 2**70),
        lambda: rng.uniform(-1e6, 1e6),
        lambda: "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0x80, 0xD7FF)])) for _ in range(8)),
        lambda: rng.choice(["low", "medium", "high", "stop", "length", "assistant", "", json.dumps(VALID)]),
    ]
    if kind < len(scalars):
        return scalars[kind]()
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["risk", "title", "score", "choices", "message", "content", "usage", "x"]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _random_types(rng: random.Random) -> Iterator[Reply]:
    for _ in range(250):
        body = completion()
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(PATHS)
            value = MISSING if rng.random() < 0.15 else _random_value(rng)
            try:
                body = with_value(path, value, body)
            except (KeyError, IndexError, TypeError):  # an earlier change took the parent away
                continue
        yield Reply("random types", encoded(body))


def _random_answers(rng: random.Random) -> Iterator[Reply]:
    for _ in range(150):
        answer = dict(VALID)
        for _ in range(rng.randint(1, 3)):
            key = rng.choice([*VALID, "extra"])
            if rng.random() < 0.2:
                answer.pop(key, None)
            else:
                answer[key] = _random_value(rng)
        yield Reply("random answers", encoded(completion(json.dumps(answer))))


FAMILIES: list[Callable[[], Iterator[Reply]]] = [
    _empty_and_whitespace,
    _truncated,
    _invalid_utf8,
    _odd_escapes,
    _wrong_top_level,
    _type_confusion,
    _choices_and_message,
    _finish_reasons,
    _content_of_the_wrong_schema,
    _content_not_json,
    _fenced,
    _huge,
    _deep,
    _nan_and_infinity,
    _duplicate_keys,
    _byte_order_marks,
    _content_types,
    _html_pages,
    _statuses,
]
RANDOM_FAMILIES: list[Callable[[random.Random], Iterator[Reply]]] = [
    _random_bytes,
    _random_mutations,
    _random_types,
    _random_answers,
]


def malformed_replies(seed: int = SEED) -> list[Reply]:
    rng = random.Random(seed)  # reproducible test data, not security
    replies = [reply for family in FAMILIES for reply in family()]
    replies += [reply for family in RANDOM_FAMILIES for reply in family(rng)]
    unique: dict[tuple[int, str | None, tuple[tuple[str, str], ...], bytes], Reply] = {}
    for reply in replies:
        unique.setdefault((reply.status, reply.content_type, reply.headers, reply.body), reply)
    return list(unique.values())
