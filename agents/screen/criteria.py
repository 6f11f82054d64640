"""Seed 002's success criteria, measured by code over every symbol of a finished screen:

1. grounding: every number in an assessment is code's (the split is recomputed and must read the same; the
   models' words carry no digit outside a ``[[fact id]]`` reference) and every source it cites is a
   document its sector's news reading found; ten symbols are traced in full for a reader to check;
2. sector consistency: the symbols of one sector share its evidence grade and its sources;
3. alpha/beta clarity: every assessment splits the week into the market's part and its own, in numbers;
4. honest "I don't know": the share of low-evidence symbols (none or weak) whose reason says no specific
   catalyst was identified (the seed asks for at least 20%);
5. fewer LLM calls: the calls made against seed 002's bound of two per sector plus three.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from agents.screen.evidence import NOTHING_OWN
from agents.screen.flags import LIMITED, NO_NEWS, PURE_BETA, UNEXPLAINED
from agents.screen.outputs import Assessment, Criteria, NewsOutput, Trace
from agents.screen.quant import QuantOutput, decomposition
from agents.text.figures import REF

NO_CATALYST = "no specific catalyst identified"
SAMPLE = 10
_DIGIT = re.compile(r"\d")
# The protocol's sentences are code's, numbers included ("-2.40% beyond the market").
_PROTOCOL = [
    re.escape(PURE_BETA),
    re.escape(NO_NEWS),
    re.escape(UNEXPLAINED).replace(re.escape("{alpha}"), r"[+-]\d+\.\d{2}%"),
    re.escape(LIMITED).replace(re.escape("{cited}"), r".*?"),
    # A symbol with nothing of its own: code's sentence, its count and date included.
    re.sub(r"\\\{\w+\\\}", ".*?", re.escape(NOTHING_OWN)),
]


def model_part(reason: str) -> str:
    """The reason without the protocol's sentences: what a model wrote."""
    text = reason
    for pattern in _PROTOCOL:
        text = re.sub(pattern, "", text, flags=re.DOTALL)
    return text.strip()


def trace(assessment: Assessment, quant: QuantOutput, news: NewsOutput | None) -> Trace:
    profile = quant.symbol(assessment.symbol)
    problems: list[str] = []
    figures: dict[str, str] = {}
    if profile is None:
        problems.append("no quant profile")
    else:
        f = profile.figures
        expected = decomposition(
            profile.symbol, f.get("return_1w"), f.get("alpha_1w"), f.get("beta"), quant.market.benchmark
        )
        if expected != assessment.split:
            problems.append("the split does not read as code computes it")
        figures = {k: profile.facts[k] for k in ("return_1w", "beta", "alpha_1w") if k in profile.facts}
    words = model_part(assessment.flag_reason)
    for text, where in ((words, "reason"), (assessment.key_concern, "key concern")):
        if _DIGIT.search(REF.sub("", text)):
            problems.append(f"a digit outside a reference in the {where}")
    found = {d.doc_id for d in news.documents} if news else set()
    unknown = [ref for ref in assessment.sources if ref not in found]
    if unknown:
        problems.append(f"sources the search did not find: {', '.join(unknown)}")
    return Trace(
        symbol=assessment.symbol,
        flag=assessment.flag,
        split=assessment.split,
        figures=figures,
        sources=list(assessment.sources),
        model_words=words,
        grounded=not problems,
        problems=problems,
    )


def measure(
    assessments: list[Assessment],
    quant: QuantOutput,
    news: Mapping[str, NewsOutput],
    *,
    llm_calls: int,
    call_bound: int,
    seed: str,
) -> Criteria:
    traces = [trace(a, quant, news.get(a.sector)) for a in assessments]
    by_sector: dict[str, list[Assessment]] = {}
    for a in assessments:
        by_sector.setdefault(a.sector, []).append(a)
    consistent = sum(
        1
        for members in by_sector.values()
        if len({a.evidence_quality for a in members}) == 1 and len({tuple(a.sources) for a in members}) == 1
    )
    low = [a for a in assessments if a.evidence_quality in ("none", "weak")]
    sample = random.Random(seed).sample(traces, min(SAMPLE, len(traces)))  # noqa: S311  # a sample, not a secret
    return Criteria(
        symbols=len(assessments),
        grounded=sum(1 for t in traces if t.grounded),
        sectors=len(by_sector),
        consistent_sectors=consistent,
        split_stated=sum(
            1 for a in assessments if "is the market's move" in a.split and "its own" in a.split
        ),
        low_evidence=len(low),
        said_no_catalyst=sum(1 for a in low if NO_CATALYST in a.flag_reason.lower()),
        llm_calls=llm_calls,
        call_bound=call_bound,
        sample=sorted(sample, key=lambda t: t.symbol),
    )


def criteria_lines(criteria: Criteria) -> list[str]:
    """The criteria as the command and the run's summary print them."""
    share = criteria.no_catalyst_share
    return [
        f"1. grounding: {criteria.grounded} of {criteria.symbols} assessments traced to code's figures and "
        "found documents",
        f"2. sector consistency: {criteria.consistent_sectors} of {criteria.sectors} sectors share one "
        "evidence grade and one set of sources",
        f"3. alpha/beta split stated: {criteria.split_stated} of {criteria.symbols}",
        f'4. honest "I don\'t know": {criteria.said_no_catalyst} of {criteria.low_evidence} low-evidence '
        f"symbols say no specific catalyst was identified"
        + (f" ({share:.0%}; the seed asks for 20% or more)" if share is not None else ""),
        f"5. LLM calls: {criteria.llm_calls} (bound {criteria.call_bound}) for {criteria.symbols} symbols",
    ]
