"""Scripted answers for rehearsing a run against the fake OpenAI-compatible server (benchmarks, demos, tests).

The answers are shaped like a careful model's: specialists cite the evidence they were shown, the
synthesizer's self-scores climb by the hill-climb thresholds, and the evaluator grades two points below the
self-scores (the seed's stated inflation prior). Every answer still goes through the gateway and every check
in code; nothing here bypasses the pipeline. Each answer is listed ``repeats`` times so a resumed run that
re-asks an unfinished call still finds one.
"""

from __future__ import annotations

from typing import Any

from agents.memo.evidence import EvidenceItem
from agents.memo.roster import SPECIALISTS, MemoConfig
from agents.memo.schemas import JMINUS_DIMENSIONS, JPLUS_DIMENSIONS
from memos.models import Run
from memos.pipeline.memo.evidence import select_evidence

LAYERS = ("MICRO", "MESO", "MACRO")


def script_for_run(run: Run, *, repeats: int = 2) -> dict[str, list[Any]]:
    """The rehearsal answers for a run that has not started: the evidence its data stage will select now."""
    config = MemoConfig.model_validate(run.config)
    evidence = select_evidence(run.brief.company, config.roster)
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
    script["synthesizer"] = [
        iteration_answer(number, load_bearing) for number in range(1, iterations + 1)
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
    return f"A {item.kind} reports: {item.summary.split(':', 1)[-1].strip()[:200]}"


def _scores(names: tuple[str, ...], total: int) -> dict[str, int]:
    """Spread ``total`` (0-10) over five 0-2 dimensions, first dimensions first."""
    scores = {}
    remaining = max(0, min(10, total))
    for name in names:
        scores[name] = min(2, remaining)
        remaining -= scores[name]
    return scores


def iteration_answer(number: int, load_bearing: list[str]) -> dict[str, Any]:
    return {
        "analysis": {
            "macro": "Rates and the market's risk appetite frame the multiple.",
            "meso": "Peers' margins set the bar the company is measured against.",
            "micro": f"Filed figures carry the thesis, starting with [[{load_bearing[0]}]].",
        },
        "memo": {
            "headline_thesis": f"Iteration {number}: cash generation funds a cycle the market discounts.",
            "risk_budget": "Size so a miss on next quarter's margins costs no more than the budget.",
            "catalysts": [
                {"event": "Next quarterly report", "date": "2026-10-30", "expected_sign": "positive"}
            ],
            "falsifiers": [
                "Gross margin contracts in the next filed quarter.",
                "Revenue growth turns negative year on year.",
            ],
            "recommendation": "BUY",
            "sizing": "starter",
            "sizing_rationale": "A starter position until the catalyst confirms the mechanism.",
            "load_bearing": load_bearing,
        },
        "what_i_missed": [
            "The competitive response to pricing.",
            "Currency exposure outside the home market.",
            "What the regulatory docket implies for services.",
        ],
        "self_jplus": _scores(JPLUS_DIMENSIONS, 2 + 2 * number),
        "self_jminus": _scores(JMINUS_DIMENSIONS, max(0, 6 - number)),
    }


def evaluation_answer(iterations: int) -> dict[str, Any]:
    return {
        "grades": [
            {
                "iteration": number,
                # The final iteration lands at a competent 6/10 and 3/10; earlier ones climb towards it.
                "jplus": _scores(JPLUS_DIMENSIONS, 6 - 2 * (iterations - number)),
                "jminus": _scores(JMINUS_DIMENSIONS, 3 + (iterations - number)),
            }
            for number in range(1, iterations + 1)
        ],
        "divergences": [
            {
                "iteration": iterations,
                "dimension": "non_consensus",
                "quote": "cash generation funds a product cycle the market discounts",
                "justification": "The consensus already credits cash generation; no reason it is mispriced.",
            }
        ],
        "inflation_diagnosis": "Self-scores run about two points high, mostly on non-consensus.",
        "next_run_recommendation": "Name the consensus view explicitly and say why it is wrong.",
    }
