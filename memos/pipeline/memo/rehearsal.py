"""Scripted answers for rehearsing a run against the fake OpenAI-compatible server (benchmarks, demos, tests).

The answers are shaped like a careful model's: specialists cite the evidence they were shown, the
synthesizer dates its catalyst inside the window, answers the previous iteration's gaps section by section,
and its self-scores climb by the hill-climb thresholds until they meet the escape valve's bar after the
second iteration (so a full profile runs two of its three iterations); the evaluator grades the final
iteration a competent 6 and 3, quoting it word for word. Every answer still goes through the gateway and
every check in code; nothing here bypasses the pipeline. Each answer is listed ``repeats`` times so a
resumed run that re-asks an unfinished call still finds one.
"""

from __future__ import annotations

from typing import Any

from agents.evidence import EvidenceItem
from agents.memo import escape, gaps, hillclimb
from agents.memo.catalysts import add_months
from agents.memo.roster import SPECIALISTS, MemoConfig
from agents.memo.schemas import (
    JMINUS_DIMENSIONS,
    JPLUS_DIMENSIONS,
    JMinusScores,
    JPlusScores,
    SynthesisIteration,
)
from agents.text.sentences import fit
from memos.models import Run
from memos.pipeline.memo.data import as_of
from memos.pipeline.memo.evidence import select_evidence

LAYERS = ("MICRO", "MESO", "MACRO")
CATALYST_DATE = "2026-10-30"  # inside the window of the bundled snapshot's companies
PASSES = ("first", "second", "third", "fourth", "fifth")
QUOTE = "cash generation funds a cycle the market discounts"
GAPS = (
    "The competitive response to pricing.",
    "Currency exposure outside the home market.",
    "What the regulatory docket implies for services.",
)


def script_for_run(run: Run, *, repeats: int = 2) -> dict[str, list[Any]]:
    """The rehearsal answers for a run that has not started: the evidence its data stage will select now."""
    config = MemoConfig.model_validate(run.config)
    company = run.brief.company
    if company is None:
        raise ValueError("a memo's rehearsal needs a brief about a company")
    evidence = select_evidence(company, config.roster)
    return rehearsal_script(evidence, iterations=config.iterations, repeats=repeats)


def rehearsal_script(
    by_specialist: dict[str, list[EvidenceItem]], *, iterations: int, repeats: int = 2
) -> dict[str, list[Any]]:
    script: dict[str, list[Any]] = {}
    cited: list[str] = []
    for name, items in by_specialist.items():
        answer = _specialist_answer(name, items)
        cited += [cid for claim in answer["claims"] for cid in claim["citations"]]
        script[f"specialist_{name}"] = [answer] * repeats
    load_bearing = list(dict.fromkeys(cited))[:3] or ["none"]
    newest = as_of(by_specialist)
    date = add_months(newest, 3).isoformat() if newest is not None else CATALYST_DATE
    script["synthesizer"] = [
        iteration_answer(number, load_bearing, catalyst_date=date) for number in range(1, iterations + 1)
    ] * repeats
    script["evaluator"] = [evaluation_answer(iterations)] * repeats
    return script


def _specialist_answer(name: str, items: list[EvidenceItem]) -> dict[str, Any]:
    title = SPECIALISTS[name].title.lower()
    claims = [
        {
            "layer": LAYERS[index % len(LAYERS)],
            "statement": _statement(title, item),
            "citations": [item.evidence_id],
            "tier": item.tier,
        }
        for index, item in enumerate(items[:3])
    ]
    return {
        "claims": claims,
        "coverage_gaps": [f"No management guidance in the {title} evidence."],
        "undercurrents": [f"The {title} picture depends on what the other specialists find."],
        "evidence_quality": "strong" if len(items) >= 3 else "weak",
    }


def _statement(title: str, item: EvidenceItem) -> str:
    if item.kind == "fact":
        return f"The {title} evidence puts {item.summary.split(':', 1)[0]} at [[{item.evidence_id}]]"
    return fit(f"A {item.kind} reports: {item.summary.split(':', 1)[-1].strip()}", 240)


def _scores(names: tuple[str, ...], total: int) -> dict[str, int]:
    """Spread ``total`` (0-10) over five 0-2 dimensions, first dimensions first."""
    scores = {}
    remaining = max(0, min(10, total))
    for name in names:
        scores[name] = min(2, remaining)
        remaining -= scores[name]
    return scores


def _self_scores(number: int) -> tuple[dict[str, int], dict[str, int]]:
    """J+ 6, 8, 10 and J- 3, 1, 0: each pass clears the hill-climb rule, the second meets the escape bar."""
    return _scores(JPLUS_DIMENSIONS, 4 + 2 * number), _scores(JMINUS_DIMENSIONS, max(0, 5 - 2 * number))


def final_iteration(iterations: int) -> int:
    """The iteration after which these answers stop the synthesis (the escape valve, computed by its code)."""
    previous: tuple[JPlusScores, JMinusScores] | None = None
    for number in range(1, iterations + 1):
        plus, minus = _self_scores(number)
        scores = (JPlusScores.model_validate(plus), JMinusScores.model_validate(minus))
        check = hillclimb.check(number, *scores, previous)
        answered = [gaps.GapCheck(gap=n, text=gap, outcome="addressed") for n, gap in enumerate(GAPS, 1)]
        iteration = SynthesisIteration.model_validate(iteration_answer(number, ["none"]))
        if escape.check(number, iterations, iteration, check, answered if previous else []).stop:
            return number
        previous = scores
    return iterations


def iteration_answer(
    number: int, load_bearing: list[str], *, catalyst_date: str = CATALYST_DATE
) -> dict[str, Any]:
    plus, minus = _self_scores(number)
    nth = PASSES[(number - 1) % len(PASSES)]
    answered = [
        {
            "gap": 1,
            "status": "addressed",
            "section": "meso",
            "note": "Peers' pricing now sets the meso view.",
        },
        {"gap": 2, "status": "addressed", "section": "macro", "note": "The macro view now names currency."},
        {
            "gap": 3,
            "status": "out_of_scope",
            "section": "risk_budget",
            "note": "No regulatory evidence reached this roster; the risk budget says so.",
        },
    ]
    return {
        "answered_gaps": answered if number > 1 else [],
        "analysis": {
            "macro": f"Rates, currency and the market's risk appetite frame the multiple ({nth} pass).",
            "meso": f"Peers' margins and pricing set the bar the company is measured against ({nth} pass).",
            "micro": f"Filed figures carry the thesis, starting with [[{load_bearing[0]}]].",
        },
        "memo": {
            "headline_thesis": f"Iteration {number}: {QUOTE}{_resting_on(load_bearing)}.",
            "risk_budget": "Size so a miss on next quarter's margins costs no more than the budget.",
            "catalysts": [
                {"event": "Next quarterly report", "date": catalyst_date, "expected_sign": "positive"}
            ],
            "falsifiers": [
                "Gross margin contracts in the next filed quarter.",
                "Revenue growth turns negative year on year.",
            ],
            "recommendation": "BUY",
            "sizing": "starter",
            "sizing_rationale": "A starter position until the catalyst confirms the mechanism.",
            "load_bearing": load_bearing,
            # The second falsifier is about one tracked metric: the register watches it once frozen.
            "falsifier_bindings": [
                {"falsifier": 2, "metric": "revenue_growth_yoy", "condition": "turns_negative"}
            ],
        },
        "what_i_missed": list(GAPS),
        "self_jplus": plus,
        "self_jminus": minus,
    }


def _resting_on(load_bearing: list[str]) -> str:
    """The thesis cites what it rests on, as a careful writer's does: code sets the metrics a thesis names
    against those of its load-bearing figures (agents.memo.thesis), and "cash generation" alone names a cash
    flow that the evidence cited first may not be."""
    return f", as [[{load_bearing[0]}]] shows" if load_bearing != ["none"] else ""


def evaluation_answer(iterations: int) -> dict[str, Any]:
    final = final_iteration(iterations)
    return {
        "grades": [
            {
                "iteration": number,
                # The final iteration lands at a competent 6/10 and 3/10; earlier ones climb towards it.
                "jplus": _scores(JPLUS_DIMENSIONS, 6 - 2 * max(0, final - number)),
                "jminus": _scores(JMINUS_DIMENSIONS, 3 + max(0, final - number)),
            }
            for number in range(1, iterations + 1)
        ],
        "divergences": [
            {
                "iteration": final,
                "dimension": "non_consensus",
                "quote": QUOTE,
                "justification": "The consensus already credits cash generation; no reason it is mispriced.",
            }
        ],
        "inflation_diagnosis": "Self-scores run about two points high, mostly on non-consensus.",
        "next_run_recommendation": "Name the consensus view explicitly and say why it is wrong.",
    }
