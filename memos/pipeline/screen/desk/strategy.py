"""The screen's strategy page: the desk's strategy (``SCREEN_STRATEGY``) and seed 002's success criteria
week by week, read from the screen versions the reader may see (issue 32, 4). Each version froze its
criteria with its flags (``ScreenResult.criteria``), so the history needs no table of its own: it is read
from the frozen content, a few keys of each (not the whole content: a demo screen's is about 1 MB)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from pydantic import ValidationError

from agents.screen.config import Strategy
from agents.screen.outputs import Criteria
from memos.pipeline.screen.plan import NAME as KIND
from memos.pipeline.screen.profiles import default_strategy
from memos.pipeline.workflows import ConfigurationError
from memos.services.access import visible_versions
from memos.views.users import user_of

TEMPLATE = "memos/screen/strategy.html"
SEED_NO_CATALYST = 0.2  # seed 002: at least 20% of the low-evidence symbols say no catalyst was found


@dataclass(frozen=True)
class Week:
    """One frozen screen's criteria, as its version froze them."""

    version_id: int
    named: str  # "screen v2"
    question: str  # its brief's
    as_of: str
    criteria: Criteria | None  # None: frozen before the criteria were measured

    @property
    def no_catalyst(self) -> str:
        share = self.criteria.no_catalyst_share if self.criteria else None
        return "n/a" if share is None else f"{share:.0%}"

    @property
    def meets_no_catalyst(self) -> bool:
        share = self.criteria.no_catalyst_share if self.criteria else None
        return share is not None and share >= SEED_NO_CATALYST

    @property
    def within_bound(self) -> bool:
        return self.criteria is not None and self.criteria.llm_calls <= self.criteria.call_bound


def weeks(rows: list[tuple[int, Any, Any, Any, Any]]) -> list[Week]:
    """(version id, its brief's question, its number, the frozen as-of date, the frozen criteria) rows ->
    weeks, the latest week first, the latest version of a week first."""
    found = []
    for pk, question, number, as_of, raw in rows:
        try:
            criteria = Criteria.model_validate(raw) if raw else None
        except ValidationError:
            criteria = None
        found.append(Week(pk, f"{KIND} v{number}", str(question), str(as_of or "?"), criteria))
    return sorted(found, key=lambda w: (w.as_of, -w.version_id), reverse=True)


@require_safe
@login_required
def strategy_page(request: HttpRequest) -> HttpResponse:
    versions = visible_versions(user_of(request)).filter(kind=KIND).order_by("created_at")
    rows = list(
        versions.values_list(
            "pk", "brief__question", "number", "content__result__as_of", "content__result__criteria"
        )
    )
    strategy: Strategy | None = None
    problem = ""
    try:
        strategy = default_strategy()
    except ConfigurationError as exc:
        problem = str(exc)
    return render(
        request,
        TEMPLATE,
        {"weeks": weeks(rows), "strategy": strategy, "problem": problem, "seed_share": SEED_NO_CATALYST},
    )
