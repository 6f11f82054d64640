"""Formatting of code-owned numbers. Every figure on a page comes from a FactRecord through these filters."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from pydantic import BaseModel

from agents.data.formatting import format_value
from agents.text.figures import brief_numbers, segments
from agents.text.reader import paragraph
from agents.text.scripts import Language
from agents.text.sentences import fit
from agents.text.untrusted import web_link
from memos.models import Brief, FactRecord
from memos.pipeline.errors import plain
from memos.pipeline.language import brief_language
from memos.services.notifications import without_score
from memos.services.refs import Refs

register = template.Library()


@register.filter
def fact_value(fact: object) -> str:
    if not isinstance(fact, FactRecord):
        return "—"
    return format_value(fact.value, fact.unit)


@register.simple_tag
def cited(fact: object) -> SafeString:
    """The value linked to the filing that first reported it, with the fact id as its title.

    Anything that is not a FactRecord (a metric the filer does not report) shows as "not reported".
    """
    if not isinstance(fact, FactRecord):
        return mark_safe('<span class="muted">not reported</span>')
    label = (
        f"{fact.fact_id} · {fact.form} {fact.accession} filed {fact.filed}"
        if fact.accession
        else fact.fact_id
    )
    if fact.url.startswith("https://"):
        return format_html(
            '<a class="fact" href="{}" title="{}" target="_blank" rel="noopener noreferrer">{}</a>',
            fact.url,
            label,
            format_value(fact.value, fact.unit),
        )
    return format_html('<span class="fact" title="{}">{}</span>', label, format_value(fact.value, fact.unit))


# --- model prose and citations on run pages. Model text is never marked safe: every piece goes through
# format_html, which escapes it; only the markup around it is ours.

_NO_REFS = Refs({}, {}, frozenset())
MAX_UNRESOLVED_CHARS = 80


def _fact_link(fact: FactRecord) -> SafeString:
    return format_html(
        '<a class="fact-ref" href="{}" title="{}">{}</a>',
        reverse("fact", args=[fact.fact_id]),
        f"{fact.fact_id} · {fact.label or fact.metric}",
        format_value(fact.value, fact.unit),
    )


@register.simple_tag
def prose(text: object, refs: object = None, brief: object = None) -> SafeString:
    """Model-written text: ``[[fact id]]`` becomes the fact's value linked to its page; a sentence in which
    the model typed a figure, or slipped into another script than the ``brief``'s, is not shown, and one
    line of code's at the end of the paragraph says how many were withheld and why
    (agents.text.reader.paragraph); a sentence said twice is shown once; numbers the analyst's ``brief``
    contains are the analyst's and stay; everything else is escaped text."""
    if not isinstance(text, str):
        return SafeString("")
    known = refs if isinstance(refs, Refs) else _NO_REFS
    keep = (
        brief_numbers(brief.question, brief.audience, brief.notes)
        if isinstance(brief, Brief)
        else frozenset()
    )
    said_in = _language(brief) if isinstance(brief, Brief) else None
    shown = paragraph(text, known.known | known.labels.keys(), keep, said_in)
    parts: list[SafeString] = []
    for segment in shown.parts:
        fact = known.facts.get(segment.fact_id) if segment.kind == "fact" else None
        label = known.labels.get(segment.fact_id) if segment.kind == "fact" else None
        if fact is not None:
            parts.append(_fact_link(fact))
        elif label is not None:
            parts.append(
                format_html('<span class="finding-ref" title="{}">{}</span>', label, segment.fact_id)
            )
        elif segment.kind == "text":
            parts.append(format_html("{}", segment.text))
        else:
            parts.append(format_html('<em class="withheld small muted">{}</em>', "figure removed"))
    if shown.note:
        parts.append(
            format_html(
                '{}<em class="withheld small muted" title="withheld by code: figures come only from cited '
                'facts">({})</em>',
                " " if parts else "",
                shown.note,
            )
        )
    return format_html_join("", "{}", ((part,) for part in parts))


# A page shows many prose fields of one brief: its language (one query) is kept on the brief instance the
# page holds, the way Django keeps a row's related rows on it.
_LANGUAGE_ATTRIBUTE = "_desk_language"


def _language(brief: Brief) -> Language:
    found = brief.__dict__.get(_LANGUAGE_ATTRIBUTE)
    if not isinstance(found, Language):
        found = brief.__dict__[_LANGUAGE_ATTRIBUTE] = brief_language(brief)
    return found


@register.filter
def changes_only(changelog: object) -> str:
    """A changelog line without its score, for a reader the evaluator's scores are sealed from."""
    return without_score(str(changelog))


@register.filter
def plain_error(text: object) -> str:
    """A run's or a step's stored message, never a database's own error text (memos.pipeline.errors.plain)."""
    return plain(text) if isinstance(text, str) else ""


@register.filter
def sentences(text: object, limit: int = 240) -> str:
    """Code's own message in a bounded space: the whole sentences that fit, never half of one."""
    return fit(text, int(limit)) if isinstance(text, str) else ""


@register.simple_tag
def cite(evidence_id: object, refs: object = None) -> SafeString:
    """A citation: a fact or a source document linked to its page with its tier, or marked unresolved."""
    known = refs if isinstance(refs, Refs) else _NO_REFS
    cid = str(evidence_id)
    tier = known.tier(cid)
    if cid in known.facts:
        fact = known.facts[cid]
        title = f"{tier} · {fact.label or fact.metric} · {format_value(fact.value, fact.unit)}"
        return format_html(
            '<a class="cite tier-{}" href="{}" title="{}">{}</a>',
            tier,
            reverse("fact", args=[cid]),
            title,
            cid,
        )
    if cid in known.documents:
        title = f"{tier} · {known.documents[cid].title}"
        return format_html(
            '<a class="cite tier-{}" href="{}" title="{}">{}</a>',
            tier,
            reverse("source_document", args=[cid]),
            title,
            cid,
        )
    return format_html(
        '<code class="cite unresolved" title="resolves to no fact or document">{}</code>', _unresolved(cid)
    )


def _unresolved(cid: str) -> str:
    """An id that resolves to nothing was written by a model and may be any text: shown shortened, with any
    figure in it removed like a number in prose."""
    shown = cid if len(cid) <= MAX_UNRESOLVED_CHARS else cid[: MAX_UNRESOLVED_CHARS - 1] + "…"
    return "".join(segment.text for segment in segments(shown, frozenset()))


@register.filter
def signed(value: object) -> str:
    """+2, 0, −1: an inflation or a hill-climb delta, with its sign spelled out."""
    if not isinstance(value, int):
        return "—"
    return f"+{value}" if value > 0 else ("0" if value == 0 else f"−{abs(value)}")


@register.filter
def plain_number(value: object) -> str:
    """The stored decimal as written, without trailing zeros or an exponent: 391035000000, 0.4621."""
    if not isinstance(value, Decimal):
        return "—"
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.filter
def thousands(value: object) -> str:
    """A count of tokens, calls or rows as a reader reads it: 250,000."""
    return f"{value:,}" if isinstance(value, int) else str(value)


@register.simple_tag(takes_context=True)
def panel(context: template.Context, shown: Any) -> SafeString:
    """A workflow's panel on a version's page (memos.views.versions.Shown): its template, rendered with the
    page's context and the panel's own on top."""
    if context.template is None:  # only while a template renders, which is when a tag is called
        raise template.TemplateSyntaxError("panel is a template tag")
    with context.push(**shown.context):
        rendered: SafeString = context.template.engine.get_template(shown.template).render(context)
    return rendered


@register.filter
def output_fields(output: object) -> list[tuple[str, str, object]]:
    """A typed step output's fields for the plain step page (memos/step_documents/output.html), each as
    (label, how it is shown, value): "text" for a string (model prose, shown by ``prose``), "texts" for a
    list of strings, "value" for anything else (code's numbers and structures, shown as JSON)."""
    if not isinstance(output, BaseModel):
        return []
    fields: list[tuple[str, str, object]] = []
    for name, value in output.model_dump(mode="json").items():
        label = name.replace("_", " ")
        if isinstance(value, str):
            fields.append((label, "text", value))
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            fields.append((label, "texts", value))
        else:
            fields.append((label, "value", json.dumps(value, ensure_ascii=False, sort_keys=True)))
    return fields


@register.filter(name="web_link")
def web_link_filter(url: object) -> str:
    """A URL a page may link to (http or https only; agents.text.untrusted.web_link), or ""."""
    return web_link(url) if isinstance(url, str) else ""
