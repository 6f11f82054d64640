"""T12 De-AI / Humanizer: the tells that make a deck read as machine-written, counted per slide, each
finding quoting the exact phrase so a Reviser can fix just that.

| Rule             | Looks at      | Fires on                                                          |
|------------------|---------------|-------------------------------------------------------------------|
| em_dash          | deck words    | "—", a spaced en dash " – ", or a typed "--"                       |
| hedging          | deck words    | HEDGING_PATTERNS ("it's worth noting", "arguably" ...)             |
| filler           | deck words    | FILLER_PATTERNS ("delve", "game-changer", "robust", "unlock" ...), |
|                  |               | and "leverage" used as a verb (``_leverage_as_verb``)              |
| symmetrical_list | deck bullets  | a slide's 3+ bullets all near-identical in length and all opening  |
|                  |               | the same way; or every bulleted slide (3+ of them) has exactly 3   |
| ai_design        | PPTX and HTML | gradients, glow, soft edges, shadows, reflections, bevels; CSS     |
|                  |               | gradients, text shadows, blurred box shadows, blur filters; SVG    |
|                  |               | gradients and filters (agents.deck.humanizer_design)               |
| other_script     | deck words    | a run of characters in another script than the brief's, given its  |
|                  |               | language ("市场" in an English bullet: agents.text.scripts)         |

The words are the model-written ones (``Deck.thesis``, ``Slide.words()``): a figure's label, period and
source and the subtitle are written by code, and a finding there is nothing a Reviser could fix. Phrases
are matched case-insensitively at word boundaries, with typographic and straight apostrophes alike.
Slide 0 is the deck itself: its title and thesis, deck-wide design, and the deck-wide rule of three.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agents.deck.humanizer_design import html_design_tells, pptx_design_tells
from agents.deck.spec import CODE_SLIDES, Deck, Slide
from agents.text.scripts import Language, slips
from agents.text.untrusted import normalise_text

HumanizerRule = Literal[
    "em_dash", "hedging", "filler", "symmetrical_list", "ai_design", "other_script", "topic_title"
]
OTHER_SCRIPT: HumanizerRule = "other_script"

# Hedges: throat-clearing before a point, or a point withdrawn as it is made.
HEDGING_PATTERNS: tuple[str, ...] = (
    r"it['’]s worth (?:noting|mentioning)",
    r"it is worth (?:noting|mentioning)",
    r"worth (?:noting|mentioning) that",
    r"it is important to (?:note|remember)",
    r"it['’]s important to (?:note|remember)",
    r"it should be noted",
    r"arguably",
    r"needless to say",
    r"it goes without saying",
    r"in today['’]s (?:fast-paced|ever-changing|ever-evolving|rapidly evolving|digital)",
    r"in an ever-(?:changing|evolving)",
    r"it could be argued",
    r"one (?:could|might) argue",
    r"to (?:some|a certain) extent",
    r"generally speaking",
    r"it remains to be seen",
    r"only time will tell",
    r"at the end of the day",
    r"all things considered",
    r"that being said",
    r"having said that",
    r"(?:could|may|might) potentially",
    r"as an ai",
)
# Filler: words that sound like analysis and say nothing a board can act on. "Synergies" (plural) is left
# out on purpose: it is the M&A term for cost and revenue savings, not praise.
FILLER_PATTERNS: tuple[str, ...] = (
    r"in conclusion",
    r"a testament to",
    r"delv(?:e|es|ed|ing)",
    r"navigat(?:e|es|ed|ing) (?:the |this |today['’]s )?(?:\w+ )?landscape",
    r"ever-(?:changing|evolving) landscape",
    r"game[- ]?chang(?:er|ers|ing)",
    r"synergy",
    r"synergistic",
    r"robust(?:ly)?",
    r"unlock(?:s|ed|ing)?",
    r"seamless(?:ly)?",
    r"cutting[- ]edge",
    r"world[- ]class",
    r"best[- ]in[- ]class",
    r"state[- ]of[- ]the[- ]art",
    r"paradigm shift",
    r"holistic(?:ally)?",
    r"transformative",
    r"revolutioni[sz](?:e|es|ed|ing)",
    r"tapestry",
    r"in the realm of",
    r"empower(?:s|ed|ing|ment)?",
    r"harness(?:es|ed|ing)?",
    r"supercharg(?:e|es|ed|ing)",
    r"deep dive",
    r"dive deep(?:er)?",
    r"underscor(?:e|es|ed|ing)",
    r"showcas(?:e|es|ed|ing)",
    r"pivotal",
    r"multifaceted",
    r"spearhead(?:s|ed|ing)?",
    r"plays? a (?:crucial|key|pivotal|vital) role",
    r"moving the needle",
)
_DASH = re.compile(r"—|(?<=\s)–(?=\s)|(?<!-)-{2,3}(?!-)")
_HEDGING = [re.compile(rf"\b{pattern}\b", re.IGNORECASE) for pattern in HEDGING_PATTERNS]
_FILLER = [re.compile(rf"\b{pattern}\b", re.IGNORECASE) for pattern in FILLER_PATTERNS]
_PHRASE_RULES: tuple[tuple[HumanizerRule, list[re.Pattern[str]], str], ...] = (
    ("hedging", _HEDGING, "a hedge: state the point, or cut it"),
    ("filler", _FILLER, "filler: say the specific thing instead"),
)
# "Leverage" is a finance noun (net leverage, operating leverage, "leveraging up" is taking on debt); as a
# verb ("leverage its brand", "to leverage") it is consultant filler. It counts as a verb when a subject,
# "to" or a modal stands before it, or an object (a determiner or possessive) follows it.
_LEVERAGE = re.compile(r"\bleverag(?:e|es|ed|ing)\b", re.IGNORECASE)
_VERB_BEFORE = re.compile(
    r"\b(?:to|will|would|can|could|should|must|may|might|we|they|you)\s+$", re.IGNORECASE
)
_OBJECT_AFTER = re.compile(
    r"^\s+(?:its|their|our|his|her|your|the|this|these|those|that|a|an|every|each|existing|new)\b",
    re.IGNORECASE,
)
_LEVERAGE_UP = re.compile(r"^\s+up\b", re.IGNORECASE)

# Over-symmetry. People write lists of uneven items; a list whose every item is the same length and
# opens the same way (the same word, all gerunds, or all "Label: ...") reads as generated. Three items
# are the floor, since two items always look alike. Lengths count as near-identical when they differ by
# at most one word or 15% of the longest, whichever is more.
SYMMETRY_MIN_ITEMS = 3
SYMMETRY_LENGTH_SHARE = 0.15
# Three bullets on one slide is ordinary; three on every bulleted slide of a deck is the model's rule of
# three. Judged only across at least this many bulleted slides.
RULE_OF_THREE_MIN_SLIDES = 3
_QUOTE_CHARS = 80
_CONTEXT_WORDS = 3
_LABEL_COLON = re.compile(r"^\s*\S+(?:\s+\S+){0,3}:\s")


class HumanizerFinding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: HumanizerRule
    slide: int  # the deck slide's number; 0 for the deck as a whole
    where: str  # "title", "takeaway", "bullet 2", "deck thesis", "pptx 'Chart'", "html" ...
    quote: str  # the offending phrase, short, as written
    message: str


def humanize_findings(
    deck: Deck, *, pptx: bytes | None = None, html: str | None = None, language: Language | None = None
) -> list[HumanizerFinding]:
    """Every AI tell in the deck's words, and in the rendered files' design when they are given; with the
    brief's ``language``, every slip into another script."""
    found: list[HumanizerFinding] = []
    code_written = {slide.number for slide in deck.slides if slide.kind in CODE_SLIDES}
    for slide_number, where, text in deck_texts(deck):
        if slide_number in code_written:
            continue  # code's own words (the title, risks and sources slides): no reviser may change them
        found.extend(text_findings(text, slide=slide_number, where=where))
        if language is not None:
            found.extend(
                _finding(
                    OTHER_SCRIPT, slide_number, where, slip.shown.strip("'"), script_message(slip.script)
                )
                for slip in slips(text, language)
            )
    for slide in deck.slides:
        if slide.number not in code_written:
            found.extend(_symmetry_findings(slide))
            found.extend(_topic_title(slide))
    found.extend(_rule_of_three(deck))
    tells = [*(pptx_design_tells(pptx, deck) if pptx is not None else ()), *html_design_tells(html or "")]
    found.extend(_finding("ai_design", tell.slide, tell.where, tell.quote, tell.message) for tell in tells)
    return sorted(found, key=lambda finding: finding.slide)


def counts_by_slide(findings: Iterable[HumanizerFinding]) -> dict[int, dict[str, int]]:
    """{slide: {rule: count}} for the slides and rules that have findings."""
    counted: defaultdict[int, Counter[str]] = defaultdict(Counter)
    for finding in findings:
        counted[finding.slide][finding.rule] += 1
    return {slide: dict(counted[slide]) for slide in sorted(counted)}


def total(findings: Iterable[HumanizerFinding]) -> int:
    return sum(1 for _ in findings)


def text_findings(text: str, *, slide: int, where: str) -> list[HumanizerFinding]:
    """The em-dash, hedging and filler findings in one piece of text."""
    found = [
        _finding(
            "em_dash",
            slide,
            where,
            _around(text, match),
            "a dash where a comma, colon or full stop reads better",
        )
        for match in _DASH.finditer(text)
    ]
    for rule, patterns, message in _PHRASE_RULES:
        for match in _first_matches(text, patterns):
            found.append(_finding(rule, slide, where, match.group(), message))
    for match in _LEVERAGE.finditer(text):
        if _leverage_as_verb(text, match):
            found.append(
                _finding(
                    "filler", slide, where, match.group(), "'leverage' as a verb: say 'use' or the action"
                )
            )
    return found


def script_message(script: str) -> str:
    return f"text in another script than the brief's ({script}): write it in the brief's language"


def deck_texts(deck: Deck) -> Iterator[tuple[int, str, str]]:
    """(slide, where, text) for every model-written text of the deck; slide 0 is its title and thesis."""
    yield 0, "deck title", deck.title
    yield 0, "deck thesis", deck.thesis
    for slide in deck.slides:
        yield slide.number, "title", slide.title
        yield slide.number, "takeaway", slide.takeaway
        for index, bullet in enumerate(slide.bullets, start=1):
            yield slide.number, f"bullet {index}", bullet.text
        if slide.table is not None:
            yield slide.number, "table title", slide.table.title
        if slide.chart is not None:
            yield slide.number, "chart title", slide.chart.title


def _first_matches(text: str, patterns: list[re.Pattern[str]]) -> list[re.Match[str]]:
    """Matches of any pattern, in text order, none overlapping an earlier one ("it's worth noting that"
    is one hedge, not two)."""
    matches = sorted(
        (m for pattern in patterns for m in pattern.finditer(text)), key=lambda m: (m.start(), -m.end())
    )
    kept: list[re.Match[str]] = []
    for match in matches:
        if not kept or match.start() >= kept[-1].end():
            kept.append(match)
    return kept


def _leverage_as_verb(text: str, match: re.Match[str]) -> bool:
    before, after = text[max(0, match.start() - 40) : match.start()], text[match.end() : match.end() + 40]
    if _LEVERAGE_UP.match(after):
        return False
    return bool(_VERB_BEFORE.search(before) or _OBJECT_AFTER.match(after))


def _symmetry_findings(slide: Slide) -> list[HumanizerFinding]:
    # A bullet whose words code withheld is its figures alone: no wording to be symmetrical.
    texts = [bullet.text for bullet in slide.bullets if bullet.text.strip()]
    if len(texts) < SYMMETRY_MIN_ITEMS:
        return []
    lengths = [len(text.split()) for text in texts]
    spread_allowed = max(1, round(SYMMETRY_LENGTH_SHARE * max(lengths)))
    openings = {_opening(text) for text in texts}
    if max(lengths) - min(lengths) > spread_allowed or len(openings) != 1:
        return []
    shown = " / ".join(" ".join(text.split()[:2]) + "…" for text in texts)
    message = (
        f"all {len(texts)} bullets run {min(lengths)}-{max(lengths)} words and open the same way "
        f"({openings.pop()}): vary their length and openings"
    )
    return [_finding("symmetrical_list", slide.number, "bullets", shown, message)]


def _opening(text: str) -> str:
    """How a bullet opens: "Label:", a gerund, or its first word."""
    if _LABEL_COLON.match(text):
        return "'Label: ...'"
    words = text.split(maxsplit=1)
    first = words[0].lower().strip(".,;:!?") if words else ""
    if first.endswith("ing") and len(first) > 4:
        return "a gerund"
    return f"'{first}'"


# A title that names a subject instead of stating the slide's point ("Risks: what the filed figures say").
_TOPIC_TAIL = re.compile(
    r":\s*(?:what the (?:filed )?(?:figures|numbers|data) (?:say|show)|an? (?:overview|summary|look)|"
    r"the (?:numbers|figures|data)|key (?:figures|metrics|numbers))\b",
    re.IGNORECASE,
)
TOPIC_TITLE_WORDS = 3


def _topic_title(slide: Slide) -> list[HumanizerFinding]:
    """An action title states the slide's takeaway; a topic title (the section's name, a short label, or
    "Subject: what the figures say") is a tell of a template, not of an analyst."""
    title = slide.title.strip()
    if not title:
        return []
    name = slide.section.strip().casefold()
    named = title.casefold().startswith(name) and (
        len(title) == len(name) or title[len(name) :].lstrip().startswith(":")
    )
    if len(title.split()) > TOPIC_TITLE_WORDS and not named and not _TOPIC_TAIL.search(title):
        return []
    message = "a topic, not a point: make the title the slide's takeaway, a sentence a board can repeat"
    return [_finding("topic_title", slide.number, "title", title, message)]


def _rule_of_three(deck: Deck) -> list[HumanizerFinding]:
    # The executive summary's three reasons are asked for; code's slides list what they find.
    bulleted = [slide for slide in deck.slides if slide.bullets and slide.kind == "section"]
    if len(bulleted) < RULE_OF_THREE_MIN_SLIDES or any(len(slide.bullets) != 3 for slide in bulleted):
        return []
    numbers = ", ".join(str(slide.number) for slide in bulleted)
    message = "every bulleted slide has exactly three bullets: let each list be as long as its content"
    return [_finding("symmetrical_list", 0, "bullets", f"3 bullets on slides {numbers}", message)]


def _around(text: str, match: re.Match[str]) -> str:
    """The match with up to three words either side, as written."""
    before = text[max(0, match.start() - 60) : match.start()]
    after = text[match.end() : match.end() + 60]
    left = re.search(rf"(?:\S+\s+){{0,{_CONTEXT_WORDS}}}\S*$", before)
    right = re.match(rf"\S*(?:\s+\S+){{0,{_CONTEXT_WORDS}}}", after)
    return (before[left.start() :] if left else "") + match.group() + (right.group() if right else "")


def _finding(rule: HumanizerRule, slide: int, where: str, quote: str, message: str) -> HumanizerFinding:
    # Model-written text may carry lone surrogates or control characters: a finding must survive JSON
    # and a database column, so its quote is normalised (agents.text.untrusted) and kept short.
    return HumanizerFinding(
        rule=rule,
        slide=slide,
        where=where,
        quote=normalise_text(quote, max_chars=_QUOTE_CHARS),
        message=message,
    )
