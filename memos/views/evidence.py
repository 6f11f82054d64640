"""Where a figure or a cited text comes from: a fact with its filing, a source document with its link."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from agents.text.untrusted import web_link
from memos.models import FactRecord, SourceDocument
from memos.pipeline.evidence import fiscal_label


@require_safe
@login_required
def fact_detail(request: HttpRequest, fact_id: str) -> HttpResponse:
    fact = get_object_or_404(FactRecord.objects.select_related("company"), fact_id=fact_id)
    inputs = [str(i) for i in fact.inputs] if isinstance(fact.inputs, list) else []
    known_inputs = set(FactRecord.objects.filter(fact_id__in=inputs).values_list("fact_id", flat=True))
    context = {
        "fact": fact,
        "inputs": [(fact_input, fact_input in known_inputs) for fact_input in inputs],
        "safe_url": web_link(fact.url),
        "fiscal": fiscal_label(fact),
    }
    return render(request, "memos/fact.html", context)


@require_safe
@login_required
def source_document(request: HttpRequest, doc_id: str) -> HttpResponse:
    document = get_object_or_404(SourceDocument, doc_id=doc_id)
    return render(
        request, "memos/source_document.html", {"document": document, "safe_url": web_link(document.url)}
    )
