"""A run's LLM ledger as a page: every call it made or took from the cache, what it cost, how fast it was.

Anyone who may see the run may see its ledger (the same access rule as the run page); prompts and answers
stay in the admin. One query for the calls, whatever their number.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from agents.llm.timings import CallSpeeds, speeds_from_raw
from memos.models import LLMCall
from memos.services.access import visible_runs
from memos.views.users import user_of


@dataclass(frozen=True)
class LedgerRow:
    call: LLMCall
    speeds: CallSpeeds | None


@require_safe
@login_required
def run_ledger(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = get_object_or_404(visible_runs(user_of(request)).select_related("brief__company"), pk=run_id)
    calls = LLMCall.objects.filter(run=run).order_by("created_at", "id")
    rows = [LedgerRow(call, _speeds(call)) for call in calls.defer("parsed")]
    paid = [row for row in rows if row.call.outcome != LLMCall.Outcome.CACHED]
    totals = calls.exclude(outcome=LLMCall.Outcome.CACHED).aggregate(
        tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"), cost=Sum("cost"), ms=Sum("duration_ms")
    )
    timed = [row.speeds for row in paid if row.speeds is not None]
    context = {
        "run": run,
        "rows": rows,
        "paid": len(paid),
        "cached": len(rows) - len(paid),
        "totals": totals,
        "prompt_per_s": _overall(sum(s.prompt_tokens for s in timed), sum(s.prompt_ms for s in timed)),
        "generation_per_s": _overall(
            sum(s.generated_tokens for s in timed), sum(s.generation_ms for s in timed)
        ),
        "reused_tokens": sum(s.cached_tokens or 0 for s in timed),
    }
    return render(request, "memos/run_ledger.html", context)


def _speeds(call: LLMCall) -> CallSpeeds | None:
    # A call answered from the ledger keeps the first call's body: its timings are not this call's.
    return None if call.outcome == LLMCall.Outcome.CACHED else speeds_from_raw(call.raw_response)


def _overall(tokens: int, ms: float) -> float | None:
    return tokens * 1000 / ms if ms > 0 else None
