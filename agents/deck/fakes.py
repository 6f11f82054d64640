"""The fake server's answers for the deck roles (seed 001): grounded decks without a model.

The drafter's and the reviser's schemas are narrowed to the run's fact ids and the scope's sections (enums,
agents.deck.narrowing), so the answer is built from what the prompt offered: one slide per required
section, a chart of one metric over its periods, a table of one period's figures, bullets that cite facts,
plain words and no typed number. The judge answers a steady 4 with a quote taken from the deck it was shown,
the planner asks to tighten the first slide, the scope builder names the usual board sections. Tests that
need other judgements script them by prompt name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agents.llm.fakes.server import FakeAnswer

DECK_ROLES = frozenset({"scope_builder", "rubric_builder", "drafter", "scorer", "planner", "reviser"})
SECTIONS = ("Thesis", "Performance", "Profitability", "Risks", "Recommendation")
SLIDE_LINE = re.compile(r"^Slide \d+ \[[^\]]*\] (.+)$", re.MULTILINE)
JUDGE_SCORE = 4
THESIS = "The filed figures support holding the position while watching the risks named here."


def deck_answer(role: str, schema: Mapping[str, Any], messages: Any) -> Any | None:
    """The answer for a deck role, or None when the schema is not one the deck asks (then the caller's
    generic example stands)."""
    text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict)) if messages else ""
    if role == "scope_builder":
        return _scope(schema)
    if role == "drafter":
        return _drafted(schema)
    if role == "reviser":
        return _revision(schema, text)
    if role == "scorer":
        return _judgement(schema, text)
    if role == "planner":
        return _work_order(schema)
    return None


def _scope(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The fake scope, within the profile's bound on sections: "Risks" (code's own slide answers it) goes
    first."""
    bound = int((_find(schema, "required_sections") or {}).get("maxItems", len(SECTIONS)))
    names = [name for name in SECTIONS if name != "Risks" or bound >= len(SECTIONS)][:bound]
    return {
        "audience": "The investment committee deciding on the position.",
        "decision": "Whether to hold, add to or trim the position.",
        "required_sections": [
            {"name": name, "purpose": f"What the committee needs to know about {name.lower()}."}
            for name in names
        ],
        "key_questions": ["Is growth holding up?", "What would change the recommendation?"],
    }


def _defs(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    found: Mapping[str, Any] = schema.get("$defs", {})
    return found


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _resolve(schema, _defs(schema)[ref.rsplit("/", 1)[-1]])
    for key in ("anyOf", "oneOf"):
        for option in node.get(key, []):
            if option.get("type") != "null":
                return _resolve(schema, option)
    return node


def _find(schema: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    prop = schema.get("properties", {}).get(name)
    return _resolve(schema, prop) if isinstance(prop, dict) else None


def _slide_schema(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    for node in _defs(schema).values():
        if "takeaway" in node.get("properties", {}):
            found: Mapping[str, Any] = node
            return found
    raise ValueError("no slide in this schema")


def _enum(schema: Mapping[str, Any], node: Mapping[str, Any], name: str) -> list[Any]:
    prop = _resolve(schema, node.get("properties", {}).get(name, {}))
    items = prop.get("items")
    if isinstance(items, dict):
        prop = _resolve(schema, items)
    return list(prop.get("enum", []))


def _ids(schema: Mapping[str, Any]) -> list[str]:
    for node in _defs(schema).values():
        if "points" in node.get("properties", {}):
            return [str(i) for i in _enum(schema, node, "points")]
    return []


def _by_metric(ids: list[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for fact_id in ids:
        parts = fact_id.split(":")
        if len(parts) == 3 and parts[2].startswith("FY") and "Q" not in parts[2]:
            grouped.setdefault(parts[1], []).append(fact_id)
    return {metric: sorted(found, key=lambda i: i.rsplit(":", 1)[-1]) for metric, found in grouped.items()}


def _slide(section: str, index: int, ids: list[str]) -> dict[str, Any]:
    grouped = _by_metric(ids)
    series = [found for found in grouped.values() if len(found) >= 2]
    slide: dict[str, Any] = {
        "section": section,
        "title": f"{section} supports holding the position",
        "takeaway": f"The committee should read {section.lower()} as support for the recommendation.",
        "bullets": [],
        "table": None,
        "chart": None,
    }
    if series and index % 2 == 0:
        points = series[(index // 2) % len(series)][-5:]
        slide["chart"] = {"title": f"{section} over the last fiscal years", "kind": "bar", "points": points}
        slide["bullets"] = [{"text": f"{section}: the latest year sets the trend", "figures": points[-1:]}]
    elif ids:
        # A different handful of the latest figures on each slide: a board reads each table once.
        latest = [found[-1] for found in grouped.values()] or ids
        start = (index * 3) % len(latest)
        rows = (latest[start:] + latest[:start])[:4]
        if len(rows) >= 2:
            slide["table"] = {"title": f"{section} at a glance", "rows": rows}
        slide["bullets"] = [{"text": f"Filed figures back the {section.lower()} view", "figures": rows[:1]}]
    else:
        slide["bullets"] = [{"text": f"No filed figure speaks to {section.lower()}", "figures": []}]
    return slide


def _drafted(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The drafter writes each section's slide apart, and the deck's title and thesis beside them."""
    properties = schema.get("properties", {})
    if "takeaway" in properties:
        return _one_slide(schema)
    if "thesis" in properties:
        ids = _reason_ids(schema)
        reasons = [
            "The filed revenue record backs the case",
            "Margins show the pricing the case rests on",
            "Cash generation pays for the plan",
        ]
        return {
            "title": "A board view of the position",
            "thesis": THESIS,
            "recommendation": "Hold the position and review it after the next annual filing",
            "reasons": [
                {"text": text, "figures": ids[index : index + 1]} for index, text in enumerate(reasons)
            ],
        }
    return None


def _reason_ids(schema: Mapping[str, Any]) -> list[str]:
    """The fact ids a reason may cite (the framing's narrowed schema), the latest fiscal year's first."""
    for node in _defs(schema).values():
        if "figures" in node.get("properties", {}) and "text" in node.get("properties", {}):
            ids = [str(i) for i in _enum(schema, node, "figures")]
            latest = [found[-1] for found in _by_metric(ids).values()]
            return latest or ids
    return []


def _one_slide(schema: Mapping[str, Any]) -> dict[str, Any]:
    """One section's slide (the drafter drafts each section apart): the section is the schema's only one."""
    sections = [str(s) for s in _enum(schema, schema, "section")] or [SECTIONS[0]]
    section = sections[0]
    index = SECTIONS.index(section) if section in SECTIONS else sum(map(ord, section)) % len(SECTIONS)
    return _slide(section, index, _ids(schema))


def _revision(schema: Mapping[str, Any], prompt: str) -> dict[str, Any]:
    """The first named slide again, in its own section (read from the deck the prompt shows)."""
    numbers: list[int] = []
    for node in _defs(schema).values():
        if "number" in node.get("properties", {}) and "slide" in node.get("properties", {}):
            numbers = [int(n) for n in _resolve(schema, node["properties"]["number"]).get("enum", [1])]
    slide_node = _slide_schema(schema)
    sections = [str(s) for s in _enum(schema, slide_node, "section")] or list(SECTIONS)
    number = numbers[0] if numbers else 1
    shown = re.search(rf"^Slide {number} \[([^\],]+)", prompt, re.MULTILINE)
    section = (
        shown.group(1) if shown and shown.group(1) in sections else sections[(number - 1) % len(sections)]
    )
    slide = _slide(section, number - 1, _ids(schema))
    slide["title"] = f"{section} in one line for the board"
    return {
        "slides": [{"number": number, "slide": slide}],
        "remove": [],
        "add": [],
        "reason": "The slide now says its point in one line.",
    }


def _judgement(schema: Mapping[str, Any], prompt: str) -> dict[str, Any]:
    titles = SLIDE_LINE.findall(prompt)
    quote = (titles[0] if titles else "the deck").strip()[:150]
    score_node: Mapping[str, Any] = {}
    for node in _defs(schema).values():
        if "evidence" in node.get("properties", {}):
            score_node = node
    dimensions = _enum(schema, score_node, "dimension")
    if not dimensions:  # the scorer asked without a judgement's schema (a warm-up's)
        raise ValueError("not a judgement's schema")
    scores = _find(schema, "scores") or {}
    count = int(scores.get("maxItems", len(dimensions)))
    return {
        "scores": [
            {"dimension": dimension, "score": JUDGE_SCORE, "evidence": quote}
            for dimension in dimensions[:count]
        ],
        "weakest": [
            {
                "slide": 3,
                "dimension": dimensions[0],
                "problem": "The first slide could say more in fewer words.",
            }
        ],
    }


def _work_order(schema: Mapping[str, Any]) -> dict[str, Any]:
    targets = [
        str(t) for t in _resolve(schema, schema.get("properties", {}).get("target", {})).get("enum", [])
    ]
    return {
        "target": targets[-1] if targets else "clean_concise_story",
        "action": "tighten_text",
        "slides": [3],  # the first section's (slide 1 is code's title slide, slide 2 the summary)
        "instruction": "Say the first section's point in fewer words.",
    }


# What the fake server answers for each of the deck's roles (agents.llm.fakes.server loads it by module name,
# as memos.pipeline.deck declares it).
FAKE_ROLES: dict[str, FakeAnswer] = dict.fromkeys(DECK_ROLES, deck_answer)
