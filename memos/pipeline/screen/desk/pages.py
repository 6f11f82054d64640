"""The screen's step documents (seed 002): each kind's template reads its typed output alone, with the ids it
cites resolved against what the run was shown: the figures code computed (the market's and each symbol's)
and the documents the news analyst's searches found."""

from __future__ import annotations

from pydantic import ValidationError

from agents.screen.outputs import NewsOutput, QuantStep
from memos.models import AgentStep, Run
from memos.pipeline.screen.plan import NEWS_KIND, QUANT


def evidence_ids(run: Run) -> set[str]:
    """What this run's documents may resolve: its quant figures and the documents its searches found."""
    found: set[str] = set()
    done = run.steps.filter(kind__in=[QUANT, NEWS_KIND], status=AgentStep.Status.DONE)
    for kind, raw in done.values_list("kind", "output"):
        try:
            if kind == QUANT:
                quant = QuantStep.model_validate(raw).quant
                found.update(quant.market.facts.values())
                found.update(fact_id for profile in quant.symbols for fact_id in profile.facts.values())
            else:
                found.update(document.doc_id for document in NewsOutput.model_validate(raw).documents)
        except ValidationError:
            continue
    return found
