"""The headline thesis against its load-bearing figures (agents.memo.thesis), and the verdict it turns."""

from __future__ import annotations

from typing import Any

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.schemas import Evaluation, MemoDraft, SynthesisIteration
from agents.memo.thesis import thesis_faults
from agents.memo.verdict import decide
from tests.agents.memo.answers import fact, iteration

CATALOG = EvidenceCatalog.of(
    [
        fact("cash", "FY2025", "29943000000"),
        fact("net_income", "FY2025", "112010000000"),
        fact("gross_margin", "FY2025", "0.469"),
        fact("revenue", "FY2025", "416161000000"),
        EvidenceItem(evidence_id="news:1", kind="document", tier="MEDIUM", summary="a press report"),
    ]
)


def _memo(thesis: str, load_bearing: list[str]) -> MemoDraft:
    return iteration(headline=thesis).memo.model_copy(update={"load_bearing": load_bearing})


def test_a_thesis_arguing_from_a_metric_its_load_bearing_figures_are_not_is_named_with_both() -> None:
    # The embedded 1.5B's memo: a margin argument resting on the cash balance and net income.
    memo = _memo(
        "Apple's rising gross margin signals pricing pressure ahead.",
        ["AAPL:cash:FY2025", "AAPL:net_income:FY2025"],
    )
    (fault,) = thesis_faults(memo, CATALOG)
    assert "argues from gross margin" in fault
    assert "the cash balance (AAPL:cash:FY2025) and net income (AAPL:net_income:FY2025)" in fault


def test_a_metric_cited_inline_counts_as_named() -> None:
    memo = _memo("The margin story [[AAPL:gross_margin:FY2025]] carries it.", ["AAPL:revenue:FY2025"])
    assert "gross margin" in thesis_faults(memo, CATALOG)[0]
    resting = _memo("Its story [[AAPL:gross_margin:FY2025]] carries it.", ["AAPL:gross_margin:FY2025"])
    assert thesis_faults(resting, CATALOG) == []


def test_a_thesis_stands_when_one_metric_it_names_is_load_bearing() -> None:
    memo = _memo("Revenue keeps compounding while gross margin holds.", ["AAPL:revenue:FY2025", "news:1"])
    assert thesis_faults(memo, CATALOG) == []


def test_nothing_is_judged_without_a_named_metric_or_a_load_bearing_figure() -> None:
    assert thesis_faults(_memo("The installed base locks buyers in.", ["AAPL:cash:FY2025"]), CATALOG) == []
    # Only a document (or an id that resolves to nothing) to rest on: no metric to compare.
    assert thesis_faults(_memo("Gross margin will widen.", ["news:1", "AAPL:nothing:FY1"]), CATALOG) == []


def _evaluation(jplus: int = 6, jminus: int = 3) -> Evaluation:
    one = iteration(jplus=jplus, jminus=jminus)
    grade: dict[str, Any] = {
        "iteration": 1,
        "jplus": one.self_jplus.model_dump(),
        "jminus": one.self_jminus.model_dump(),
    }
    return Evaluation.model_validate(
        {"grades": [grade], "divergences": [], "inflation_diagnosis": "d", "next_run_recommendation": "n"}
    )


def test_code_faults_make_an_accepted_memo_revise_and_say_why() -> None:
    done: list[SynthesisIteration] = [iteration()]
    assert decide(done, _evaluation()).decision == "ACCEPT"
    fault = "the headline thesis argues from gross margin, but ..."
    verdict = decide(done, _evaluation(), faults=[fault])
    assert verdict.decision == "REVISE" and verdict.code_faults == [fault]
    assert verdict.reason.endswith(f"code: {fault}")
    assert "calibrated J+ 6/10" in verdict.reason  # the scores still stand, and are shown
