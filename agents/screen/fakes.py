"""The fake server's answers for the screen's roles: a whole screen without a model, grounded in what each
prompt offered (the document ids and symbols in the schema's enums, the sector in the prompt).

Deterministic: the same prompt gets the same answer, so a rerun costs nothing. The answers spread over what
the protocol must handle: a sector whose drivers are transient or structural (by the sector's name), strong
or weak evidence (by how many documents were found), every flag proposed somewhere (by the symbol), and a
managing director who asks for one change the protocol refuses and one it admits, names the first symbols
listed as its strongest (a list in list order, as the embedded model's was, which code's ranking withholds),
and on a screen of three sectors or more sends the first one back to the senior analyst, who rewrites it
("Revised after the managing director's review: ...").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agents.llm.fakes.reading import message_text, schema_enum, stable_number
from agents.llm.fakes.server import FakeAnswer

FLAGS = ("GREEN", "YELLOW", "RED")
SECTOR = re.compile(r"^Sector: (.+?), in the week", re.MULTILINE)
SENT_BACK = "The managing director's reason for sending it back"
SEND_BACK_FROM = 3  # sectors on the screen before the fake director sends one back
# A symbol's line of the senior analyst's prompt (memos.pipeline.screen.handoffs.sector_block).
SIGNAL = r"^{symbol} \(.*?\), signal ([^.\n]+)\."


def _has(schema: Mapping[str, Any], name: str) -> bool:
    return name in str(schema.get("properties", {}))


def screen_answer(role: str, schema: Mapping[str, Any], messages: Any) -> Any | None:
    user = message_text(messages, "user")
    if role == "news_analyst":
        return _sector_news(schema, user) if _has(schema, "key_drivers") else _overview(schema)
    if role == "senior_analyst":
        return _synthesis(schema, user) if _has(schema, "symbols") else _overall()
    if role == "managing_director":
        return _director(schema)
    return None


def _overview(schema: Mapping[str, Any]) -> dict[str, Any]:
    ids = schema_enum(schema, "citations")
    return {
        "summary": "Documents from the week point to a broad risk-off move across the market.",
        "key_events": [{"event": "Posts describe a broad sell-off in equities.", "citations": ids[:2]}]
        if ids
        else [],
        "evidence_quality": "weak" if ids else "none",
    }


def _sector_news(schema: Mapping[str, Any], user: str) -> dict[str, Any]:
    ids = schema_enum(schema, "citations")
    symbols = schema_enum(schema, "affected_symbols")
    found = SECTOR.search(user)
    sector = found.group(1) if found else ""
    transient = stable_number(sector) % 3 != 0
    drivers = []
    if ids:
        drivers.append(
            {
                "driver": "A one-off repricing" if transient else "A lasting shift in demand",
                "type": "transient" if transient else "structural",
                "evidence": "Several posts in the window describe the move and its cause.",
                "citations": ids[:3],
                "affected_symbols": symbols[:2],
            }
        )
    return {
        "news_summary": f"The documents found for {sector} discuss the week's move in its largest names.",
        "evidence_quality": "strong" if len(ids) >= 3 else ("weak" if ids else "none"),
        "key_drivers": drivers,
    }


def _synthesis(schema: Mapping[str, Any], user: str) -> dict[str, Any]:
    symbols = schema_enum(schema, "symbol")
    found = SECTOR.search(user)
    sector = found.group(1) if found else "the sector"
    revised = "Revised after the managing director's review: " if SENT_BACK in user else ""
    said = f"Most of the week in {sector} was the market's move; the news explains some more."
    return {
        "synthesis": revised + said,
        "drop_type": "transient",
        "confidence": "medium",
        "symbols": [
            {
                "symbol": symbol,
                "flag": FLAGS[stable_number(symbol) % 3],
                "flag_reason": _reason(symbol, user),
                "bullish_signals": ["momentum near oversold"],
                "bearish_signals": ["the market's trend is down"],
                "key_concern": "The market's slide could run further.",
            }
            for symbol in symbols
        ],
    }


def _reason(symbol: str, user: str) -> str:
    """A reason from the symbol's line of the prompt (its quant signal), never one sentence written for the
    whole sector (issue 32: "X follows its sector's story" under every symbol). Two symbols of a sector on
    the same signal read alike but for the symbol, so code leaves both out (agents.screen.verdicts)."""
    found = re.search(SIGNAL.format(symbol=re.escape(symbol)), user, re.MULTILINE)
    signal = found.group(1) if found else "no signal the prompt named"
    return f"{symbol} reads {signal} on its own quant signal."


def _overall() -> dict[str, Any]:
    return {
        "market_view": "The week was a broad market decline, with a few sectors moving on their own news.",
        "themes": ["A broad risk-off move.", "Commodity-linked names fell furthest."],
    }


def _director(schema: Mapping[str, Any]) -> dict[str, Any]:
    symbols = schema_enum(schema, "symbol")
    sectors = schema_enum(schema, "sector")
    changes = []
    if symbols:
        changes.append({"symbol": symbols[0], "to": "GREEN", "reason": "The driver looks transient to me."})
    if len(symbols) > 1:
        changes.append({"symbol": symbols[-1], "to": "RED", "reason": "Its own move is unexplained."})
    return {
        "quality_score": 7,
        "quality_rationale": "The flags follow the evidence; the news is thin for several sectors.",
        "flag_adjustments": changes,
        "strongest_candidates": symbols[:2],
        "weakest_candidates": symbols[-1:],
        "blind_spots": ["No view on rates or currencies."],
        "executive_summary": "A broad sell-off explains most of the week; a few sectors moved on their own.",
        "portfolio_note": "Candidates are spread across sectors.",
        "inconsistent_sectors": [
            {"sector": sectors[0], "reason": "Its flags read more certain than its evidence allows."}
        ]
        if len(sectors) >= SEND_BACK_FROM
        else [],
    }


FAKE_ROLES: dict[str, FakeAnswer] = dict.fromkeys(
    ("news_analyst", "senior_analyst", "managing_director"), screen_answer
)
