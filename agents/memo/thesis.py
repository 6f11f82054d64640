"""The headline thesis read against the evidence the memo says its recommendation rests on, by code.

A small model's memo can argue from one figure and name others as its load-bearing evidence. Read on a fresh
desk's quick AAPL memo (the embedded 1.5B): the thesis read a rising gross margin as a sign of pricing
pressure, and its load-bearing ids were the cash balance and net income. Every sentence cited true figures,
the evaluator accepted it at calibrated J+ 5, and the committee was asked to vote on a recommendation whose
argument and evidence never met. No evaluator's score can be trusted to see that; code can: the metrics the
thesis names (in words, or by citing a figure inline) are set against the metrics of its load-bearing figures
(``agents.text.metric_words`` holds the map every workflow's claim check reads).

The thesis stands when one metric it names is one its load-bearing figures are: a thesis may name more than
it rests on ("revenue grew while gross margin held" resting on revenue), but not only what it does not rest
on. Nothing is judged where the thesis names no metric (an argument from a filing's words) or rests on no
figure (only documents): there is no pair of metrics to compare. A thesis that fails does not change the
memo's text; the verdict becomes REVISE with code's reason (``agents.memo.verdict.decide``): its run ends
needing review, and the frozen memo's Verdict section tells the committee why.
"""

from __future__ import annotations

from agents.evidence import EvidenceCatalog, EvidenceItem
from agents.memo.schemas import MemoDraft
from agents.text.figure_claims import metrics_named
from agents.text.metric_words import metric_words_for


def thesis_faults(memo: MemoDraft, catalog: EvidenceCatalog) -> list[str]:
    """Code's words for a headline thesis that argues from no metric its load-bearing figures are ([] when
    it stands, or when there is nothing to compare)."""
    resting = _figures(memo.load_bearing, catalog)
    if not resting:
        return []
    named = metrics_named(memo.headline_thesis, lambda i: item.metric if (item := catalog.get(i)) else "")
    if not named or any(words.backs(item.metric) for words in named for item in resting):
        return []
    argued = _listed([words.name for words in named])
    rests_on = _listed(
        [
            f"{metric_words_for(metric)} ({', '.join(i.evidence_id for i in resting if i.metric == metric)})"
            for metric in dict.fromkeys(item.metric for item in resting)
        ]
    )
    return [
        f"the headline thesis argues from {argued}, but the evidence it names as load-bearing is {rests_on}: "
        f"none of it is {'that metric' if len(named) == 1 else 'any of those metrics'}"
    ]


def _figures(ids: list[str], catalog: EvidenceCatalog) -> list[EvidenceItem]:
    """The load-bearing ids that resolve to figures with a metric (documents and unknown ids aside)."""
    found = (catalog.get(evidence_id) for evidence_id in dict.fromkeys(ids))
    return [item for item in found if item is not None and item.kind == "fact" and item.metric]


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
