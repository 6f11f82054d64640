"""The language a brief's readers read (agents.text.scripts): the brief's own scripts, and the names the fact
store holds, which are never a slip whatever their script."""

from __future__ import annotations

from agents.text.scripts import Language
from memos.models import Brief, Company


def brief_language(brief: Brief) -> Language:
    """One query: the companies' names as filed."""
    names = Company.objects.values_list("name", flat=True)
    return Language.of(brief.question, brief.audience, brief.notes, names=names)
