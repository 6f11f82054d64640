"""Claims read against every figure they cite, by code: one reading for every workflow that writes claims
over figures (the agency's inferences, the memo's specialists, the deck's bullets, the screen's narratives).

A small model writes sentences that cite true figures and still mislead. Read on embedded runs (issue 32):

- "Apple's operating cash flow has been increasing" over FY2023 110,543 M, FY2024 118,254 M, FY2025
  111,482 M: the first figure is below the last, but the latest year fell 5.7%;
- "net margin has been increasing" over 25.3%, 24.0%, 26.9%: not a rise in each year;
- "Apple's cash flow has been increasing", citing the cash balance: a balance is not a flow;
- "Apple should consider investing in customer service", offered as an inference from a 2015 post that
  says nothing of the kind: advice, not a finding.

``read_claim`` takes a claim's sentence and the figures it cites and says whether it stands, and if not, why,
in a reader's words with the figures shown. Three rules, in this order:

1. Advice is not a finding (only where the caller asks for findings, ``finding=True``): a sentence that
   advises ("should consider", "needs to", "it is recommended", "could expand") with nothing before or
   after its advice that the documents or figures could have reported.
2. The metric a claim names must be a metric it cites (agents.text.metric_words holds the map): a claim
   that cites figures and names a metric none of them is, is withheld, naming both.
3. A trend word holds at each step of the cited series of its metric, sorted by period: "increasing",
   "rose", "declined" (agents.text.directions) at every step; "steady", "stable", "flat" within a stated
   tolerance at every step. One period named in the words ("rose in FY2025") judges the step into it only.
   A rate's direction beside rates of change ("revenue grew" over growth rates) is read by their sign.
   A trend word over a level or a ratio (net income, a margin) needs two periods of it or more: "net income
   has been increasing steadily" beside one quarter's net income is withheld with that figure shown, since
   one period cannot show a trend. A figure that is itself a change (a growth rate, a week's return, alpha,
   a step of the earnings bridge: metric_words.SIGNED) carries a direction by its sign alone.

A claim that fails is withheld, not rewritten. A rewrite ("operating cash flow was mixed: it rose in FY2024
and fell 5.7% in FY2025") would be a sentence code wrote standing where a reader expects the model's
finding, and its change (-5.7%) is a figure no fact id carries. Withheld, the reason shows the whole series
(each figure with its period and fact id) and names each step's change, the latest last, so the reader sees
exactly what the claim got wrong; the figures themselves stay cited wherever the workflow shows them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from itertools import pairwise
from typing import Literal

from agents.text.directions import DOWN, UP
from agents.text.figures import BRACKETED
from agents.text.metric_words import SIGNED, MetricWords, Named, metric_words_for, named_metrics
from agents.text.sentences import without

# "Steady", "stable", "flat": a level that moved less than 5% in each step, a ratio or a rate (a margin, a
# growth rate) less than one percentage point. Restated filings move a level by a percent or two, and a
# reader calls a 3% move "flat" but not Apple's operating cash flow moving 7.0% and then 5.7%; a margin
# moving 1.3 points (25.3% to 24.0%) is a move a committee discusses, not "stable".
STEADY_LEVEL = Decimal("0.05")
STEADY_POINTS = Decimal("1")  # percentage points

Rule = Literal["", "advice", "metric", "trend"]
Trend = Literal["up", "down", "steady"]

STEADY = re.compile(r"\b(?:steady|stable|flat|unchanged|stabili[sz]ed|plateau\w*)\b", re.IGNORECASE)
# Advice: what someone should do, not what the documents or figures show.
ADVICE = re.compile(
    r"\b(?:should|ought to|needs? to|must|had better"
    r"|it is (?:recommended|advisable|advised|essential|important|crucial|critical|vital|imperative)"
    r"|(?:is|are) (?:recommended|advised|encouraged) to|recommend\w*|would (?:do well|benefit|be wise)"
    r"|(?:could|might|may|can) (?:consider|explore|expand|invest|focus|leverage|pursue|look|seek|benefit|"
    r"capitali[sz]e|diversify|enhance|strengthen|improve|develop|enter|launch|partner|adopt|prioriti[sz]e|"
    r"boost|increase|grow|target|tap|build|create|introduce|offer))\b",
    re.IGNORECASE,
)
# What may carry a finding beside the advice: a reason given for it.
_BECAUSE = re.compile(r"\b(?:because|since|given|as|due to|after|following)\b", re.IGNORECASE)
# Words of a report: what a document or a figure said happened.
_REPORT = re.compile(
    r"\b(?:report\w*|show\w*|post(?:s|ed)|announc\w*|said|says|note[sd]?|cit(?:es|ed)|mention\w*|according"
    r"|describ\w*|found|record\w*|face[sd]?|complain\w*|warn\w*|criticis\w*|criticiz\w*|launch(?:ed|es)"
    r"|was|were|is|are|has|had|have)\b",
    re.IGNORECASE,
)
# Whose words a sentence gives: "analysts recommend ..." reports what a document says, however short.
_ATTRIBUTED = re.compile(
    r"\b(?:analysts?|experts?|investors?|commentators?|traders?|articles?|posts?|news|documents?|users?"
    r"|according to)\b",
    re.IGNORECASE,
)

_PRAISE = re.compile(r"\b(?:strong\w*|robust|solid|healthy|impressive)\b", re.IGNORECASE)
_FISCAL = re.compile(r"FY(\d{4})(?:Q([1-4]))?")
_FINDING_WORDS = 3  # fewer words beside the advice than this ("Apple") carry no finding


@dataclass(frozen=True)
class CitedFigure:
    """One figure a claim cites, as code holds it."""

    fact_id: str
    metric: str  # the fact store's metric name ("operating_cash_flow", "net_margin")
    period: str  # "FY2024", "FY2025Q3", or a day ("2026-10-30")
    value: Decimal
    shown: str  # the value as a reader sees it ("USD 110,543 M", "25.3%")
    concept: str = ""  # the XBRL concept it came from, where filed ("us-gaap:NetCashProvided...")
    unit: str = ""  # the fact store's unit: USD, pure (0.253 is 25.3%), percent ...

    @property
    def entity(self) -> str:
        """Whose figure it is: what a fact id holds before its metric and period ("AAPL" of
        "AAPL:revenue:FY2024", "sector:energy" of the screen's "sector:energy:avg_alpha_1w:2015-08-21")."""
        return self.fact_id.rsplit(":", 2)[0] if self.fact_id.count(":") >= 2 else ""


@dataclass(frozen=True)
class Verdict:
    """Whether a claim stands against its figures; when not, which rule and why, in a reader's words."""

    rule: Rule
    reason: str
    series: tuple[str, ...] = ()  # the fact ids the reason shows, in period order

    @property
    def kept(self) -> bool:
        return not self.rule


KEPT = Verdict("", "")


def cited_figure(
    *, fact_id: str, metric: str, period: str, value: str, shown: str, unit: str = "", concept: str = ""
) -> CitedFigure | None:
    """A figure as the fact store or a workflow's evidence holds it (the value as text); None where the value
    is no number or the figure names no metric: nothing to read a claim against."""
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    if not metric or not number.is_finite():
        return None
    return CitedFigure(fact_id, metric, period, number, shown, concept, unit)


def read_claim(sentence: str, figures: Sequence[CitedFigure], *, finding: bool = False) -> Verdict:
    """Whether ``sentence`` stands against ``figures`` (every figure it cites, documents aside), and if not,
    why. ``finding``: the sentence must be a finding (an inference), so advice with none in it is withheld."""
    if finding and (why := advice(sentence)):
        return Verdict("advice", why)
    named = named_metrics(sentence)
    if figures and (wrong := _unbacked(named, figures)):
        return wrong
    return _trend(sentence, named, figures)


def advice(sentence: str) -> str:
    """Code's words for a sentence that advises and reports nothing, or ""."""
    found = ADVICE.search(sentence)
    if found is None:
        return ""
    before = sentence[: found.start()]
    after = sentence[found.end() :]
    reason = _BECAUSE.search(after)
    beside = [before, after[reason.end() :] if reason else ""]
    if any(_reports(part) for part in beside):
        return ""
    return "advice, not a finding from the documents: it says what should be done and reports nothing"


def _reports(text: str) -> bool:
    if BRACKETED.search(text) or _ATTRIBUTED.search(text):
        return True
    if len(re.findall(r"[\w'&]+", text)) < _FINDING_WORDS:
        return False
    return bool(
        UP.search(text)
        or DOWN.search(text)
        or STEADY.search(text)
        or named_metrics(text)
        or _REPORT.search(text)
    )


def _unbacked(named: list[Named], figures: Sequence[CitedFigure]) -> Verdict | None:
    for metric in dict.fromkeys(entry.words for entry in named):
        if not any(metric.backs(figure.metric, figure.concept) for figure in figures):
            cited = ", ".join(
                f"{metric_words_for(m)} ({', '.join(f.fact_id for f in figures if f.metric == m)})"
                for m in dict.fromkeys(figure.metric for figure in figures)
            )
            return Verdict(
                "metric",
                f"it names {metric.name}, but the figures it cites are {cited}: not {metric.name}",
                tuple(figure.fact_id for figure in figures),
            )
    return None


def _trend_words(sentence: str) -> list[tuple[Trend, int, int]]:
    kinds: tuple[tuple[re.Pattern[str], Trend], ...] = ((UP, "up"), (DOWN, "down"), (STEADY, "steady"))
    found = [
        (trend, match.start(), match.end())
        for pattern, trend in kinds
        for match in pattern.finditer(sentence)
    ]
    return sorted(found, key=lambda item: item[1])


def _trend(sentence: str, named: list[Named], figures: Sequence[CitedFigure]) -> Verdict:
    words = _trend_words(sentence)
    if not words:
        return _praise(sentence, named, figures)
    for index, (trend, start, end) in enumerate(words):
        since = words[index - 1][2] if index else 0
        until = words[index + 1][1] if index + 1 < len(words) else len(sentence)
        subject = _subject(named, since, start, end, until)
        if subject is not None:
            backing = [f for f in figures if subject.backs(f.metric, f.concept)]
        elif index == 0 and len({f.metric for f in figures}) == 1:
            backing = list(figures)  # the claim's one metric, said without its name ("It has grown")
        else:
            continue
        said = (trend, sentence[start:end])
        # One series per company and metric: a peer's revenue is no step of the company's.
        found = dict.fromkeys((figure.entity, figure.metric) for figure in backing)
        groups = [[figure for figure in backing if (figure.entity, figure.metric) == key] for key in found]
        for cited in groups:
            verdict = _judge(sentence, said, cited, subject=subject)
            if not verdict.kept:
                return verdict
        if groups and not any(_shows_a_trend(cited) for cited in groups):
            return _one_period(said, groups, subject=subject)
    return KEPT


def _shows_a_trend(cited: list[CitedFigure]) -> bool:
    """Whether one series could bear a trend word at all: a rate of change by its sign (a growth rate of
    +6% is a rise), a level or a ratio only by two periods or more of it."""
    if SIGNED.fullmatch(cited[0].metric):
        return True
    series = _series(cited)
    # Periods code cannot order are not read step by step, nor called one period when there are several.
    return len(series) > 1 or (not series and len({figure.period for figure in cited}) > 1)


def _one_period(
    said: tuple[Trend, str], groups: list[list[CitedFigure]], *, subject: MetricWords | None
) -> Verdict:
    """A trend word over a level or a ratio cited for one period only ("net income has been increasing"
    beside one quarter's net income): true or not, the figure cannot show it, and a reader takes the
    figure as the proof. Withheld with the figure shown (each company's, where a peer's is cited too: a
    peer's figure is no period of the company's series)."""
    trend, word = said
    name = subject.name if subject is not None else metric_words_for(groups[0][0].metric)
    what = {"up": "rose", "down": "fell", "steady": "held steady"}[trend]
    shown = [figure for cited in groups for figure in (_series(cited)[:1] or cited[:1])]
    return Verdict(
        "trend",
        f"it says {name} {what} (\u201c{word}\u201d), but it cites {name} for one period only: "
        f"{_shown(shown)}; one period cannot show a trend",
        tuple(f.fact_id for f in shown),
    )


def _subject(named: list[Named], since: int, start: int, end: int, until: int) -> MetricWords | None:
    """The metric a trend word is said of: the nearest one named before it since the last trend word, else
    the first named after it before the next one."""
    before = [entry for entry in named if since <= entry.start and entry.end <= start]
    if before:
        return before[-1].words
    after = [entry for entry in named if end <= entry.start and entry.end <= until]
    return after[0].words if after else None


def _judge(
    sentence: str, said: tuple[Trend, str], cited: list[CitedFigure], *, subject: MetricWords | None
) -> Verdict:
    """One trend word (its kind and its words) against the cited figures of one metric."""
    trend, word = said
    metric = cited[0].metric
    name = metric_words_for(metric)
    signed = bool(SIGNED.fullmatch(metric))
    if signed and trend != "steady" and not (subject is not None and subject.rate):
        # "Revenue grew" beside its growth rates: wrong only when every rate is on the other side of zero.
        wrong = [f for f in cited if (f.value < 0 if trend == "up" else f.value > 0)]
        if wrong and len(wrong) == len(cited):
            side = "below" if trend == "up" else "above"
            return Verdict(
                "trend",
                f"it says {subject.name if subject else name} went {trend} (\u201c{word}\u201d), but {name} "
                f"is {side} zero in every figure it cites: {_shown(cited)}",
                tuple(f.fact_id for f in cited),
            )
        return KEPT
    series = _series(cited)
    if len(series) < 2:
        return KEPT  # nothing to read step by step; a level's one period is _trend's to withhold
    steps = list(pairwise(series))
    judged = steps[slice(*_span(sentence, series))]
    if all(_holds(trend, earlier, later) for earlier, later in judged):
        return KEPT
    what = {"up": "rose", "down": "fell", "steady": "held steady"}[trend]
    scope = f"into {judged[0][1].period}" if len(judged) == 1 and len(steps) > 1 else "at each step"
    moves = _moves(steps)
    return Verdict(
        "trend",
        f"it says {name} {what} {scope} (\u201c{word}\u201d), but the series it cites does not: "
        f"{_shown(series)}; {moves}",
        tuple(f.fact_id for f in series),
    )


def _span(sentence: str, series: list[CitedFigure]) -> tuple[int, int]:
    """Which steps the words speak of: the one into the one period they name ("rose in FY2025"), those
    between the first and the last they name ("from FY2023 to FY2025"), else every step."""
    named = [i for i, figure in enumerate(series) if re.search(rf"\b{re.escape(figure.period)}\b", sentence)]
    if len(named) == 1 and named[0] > 0:
        return named[0] - 1, named[0]
    if len(named) > 1:
        return named[0], named[-1]
    return 0, len(series) - 1


def _praise(sentence: str, named: list[Named], figures: Sequence[CitedFigure]) -> Verdict:
    """Praise of a rate ("strong growth") beside rates of it that are all below zero."""
    rates = [entry.words for entry in named if entry.words.rate]
    if not rates or not _PRAISE.search(sentence):
        return KEPT
    cited = [f for f in figures if SIGNED.fullmatch(f.metric) and rates[0].backs(f.metric, f.concept)]
    if cited and all(f.value < 0 for f in cited):
        return Verdict(
            "trend",
            f"it calls {rates[0].name} strong, but every figure of it cited is below zero: {_shown(cited)}",
            tuple(f.fact_id for f in cited),
        )
    return KEPT


def _series(cited: list[CitedFigure]) -> list[CitedFigure]:
    """One metric's figures in period order, one a period, of the period kind most of them share (years
    with years, quarters with quarters: a quarter is no step from a year)."""
    keyed: dict[tuple[str, tuple[int, ...]], CitedFigure] = {}
    for figure in cited:
        key = _period_key(figure.period)
        if key is not None:
            keyed.setdefault(key, figure)
    kinds = [kind for kind, _ in keyed]
    if not kinds:
        return []
    kind = max(("year", "quarter", "day"), key=kinds.count)
    return [keyed[key] for key in sorted(key for key in keyed if key[0] == kind)]


def _period_key(period: str) -> tuple[str, tuple[int, ...]] | None:
    fiscal = _FISCAL.fullmatch(period.strip())
    if fiscal:
        year, quarter = int(fiscal.group(1)), fiscal.group(2)
        return ("quarter", (year, int(quarter))) if quarter else ("year", (year,))
    try:
        day = date.fromisoformat(period.strip())
    except ValueError:
        return None
    return "day", (day.toordinal(),)


def _ratio(figure: CitedFigure) -> Decimal | None:
    """How many percentage points one unit of the figure is, for a ratio or a rate; None for a level."""
    if figure.unit == "pure" or (not figure.unit and re.search(r"margin|growth|return|alpha", figure.metric)):
        return Decimal(100)
    if figure.unit == "percent":
        return Decimal(1)
    return None


def _holds(trend: Trend, earlier: CitedFigure, later: CitedFigure) -> bool:
    if trend == "up":
        return later.value > earlier.value
    if trend == "down":
        return later.value < earlier.value
    scale = _ratio(later)
    if scale is not None:
        return abs(later.value - earlier.value) * scale <= STEADY_POINTS
    if earlier.value == 0:
        return later.value == 0
    return abs(later.value - earlier.value) <= abs(earlier.value) * STEADY_LEVEL


def _moves(steps: list[tuple[CitedFigure, CitedFigure]]) -> str:
    """Each step's change in words, the latest last and named as such: "it rose 7.0% in FY2024 and fell
    5.7% in FY2025 (the latest change)"."""
    said = [_move(earlier, later) for earlier, later in steps]
    listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + f" and {said[-1]}"
    return f"it {listed} (the latest change)"


def _move(earlier: CitedFigure, later: CitedFigure) -> str:
    change = later.value - earlier.value
    verb = "rose" if change > 0 else "fell" if change < 0 else "was unchanged"
    if not change:
        return f"{verb} in {later.period}"
    scale = _ratio(later)
    if scale is not None:
        return f"{verb} {abs(change) * scale:.1f} points in {later.period}"
    if earlier.value > 0 and later.value > 0:
        return f"{verb} {abs(change) / earlier.value * 100:.1f}% in {later.period}"
    return f"{verb} in {later.period}"


def _shown(figures: Sequence[CitedFigure]) -> str:
    return ", ".join(f"{figure.period} {figure.shown} ({figure.fact_id})" for figure in figures)


@dataclass(frozen=True)
class ReadText:
    """A paragraph after its sentences were read against the figures each cites by ``[[fact id]]``."""

    text: str  # the sentences that stand, references kept
    withheld: tuple[str, ...]  # code's reason for each sentence withheld, with the sentence's opening words


def read_text(text: str, figures: Mapping[str, CitedFigure], *, finding: bool = False) -> ReadText:
    """Each sentence of ``text`` read against the figures it references (``[[AAPL:revenue:FY2024]]``, resolved
    in ``figures``): for prose that cites figures inline, as the screen's narratives and summaries do. A
    sentence that fails is withheld whole; the rest stand as written."""

    def failing(sentence: str) -> str:
        # Any bracketed id the figures hold: the screen's sector ids have four parts, not three.
        cited = [figures[ref] for ref in dict.fromkeys(BRACKETED.findall(sentence)) if ref in figures]
        verdict = read_claim(
            BRACKETED.sub(lambda match: _named(match.group(1)), sentence), cited, finding=finding
        )
        return "" if verdict.kept else (verdict.reason or verdict.rule)

    kept, withheld = without(text, failing)
    return ReadText(
        kept.strip(),
        tuple(f"\u201c{' '.join(s.split()[:6])} \u2026\u201d withheld: {why}" for s, why in withheld),
    )


def _named(fact_id: str) -> str:
    """A reference read as the words of what it is ("[[AAPL:alpha_1w:2015-12-31]]" as "alpha"), so that a
    sentence naming its metric only by citing it is read as naming that metric."""
    return metric_words_for(fact_id.rsplit(":", 2)[-2]) if fact_id.count(":") >= 2 else "the figure"


def metrics_named(text: str, metric_of: Callable[[str], str]) -> list[MetricWords]:
    """The metrics ``text`` names, once each, in order: in its words, and by each reference it cites
    (``metric_of`` gives a reference's metric, "" for none: "[[AAPL:gross_margin:FY2025]]" names gross
    margin). For checks that set what a text is about against figures it does not cite inline (a memo's
    thesis against its load-bearing ids, a falsifier against its binding)."""

    def as_words(match: re.Match[str]) -> str:
        metric = metric_of(match.group(1))
        return f" {metric_words_for(metric)} " if metric else " "

    return list(dict.fromkeys(found.words for found in named_metrics(BRACKETED.sub(as_words, text))))
