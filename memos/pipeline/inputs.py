"""What every workflow's prompts carry of the brief: the analyst's words, fenced like any untrusted text, the
numbers in them, which a model may repeat (they are the analyst's, not the model's), and its language."""

from __future__ import annotations

from agents.text.figures import brief_numbers
from agents.text.scripts import Language
from memos.pipeline.context import StageContext
from memos.pipeline.language import brief_language


def brief_block(ctx: StageContext) -> str:
    """The analyst's own words: a person typed them, so prompts carry them fenced, like any untrusted text."""
    brief = ctx.run.brief
    block = f"Question: {brief.question}\nAudience: {brief.audience}\nNotes: {brief.notes or '(none)'}"
    # A run may look at something beyond its brief, written by code (a week's flag and its reason).
    focus = str(ctx.config.get("focus") or "")
    return f"{block}\nThis run's focus: {focus}" if focus else block


def brief_words(ctx: StageContext) -> tuple[str, str, str]:
    brief = ctx.run.brief
    return brief.question, brief.audience, brief.notes


def kept_numbers(ctx: StageContext) -> frozenset[str]:
    """Numbers the analyst's brief (and the run's focus code wrote) contains: the memo may repeat them
    (they are not the model's)."""
    return brief_numbers(*brief_words(ctx), str(ctx.config.get("focus") or ""))


def language(ctx: StageContext) -> Language:
    """The brief's language: model text in another script is a slip code catches (agents.text.scripts).
    Read once a stage (it reads every company's name): a memo's last stage asked for it three times."""
    return ctx.inputs(_language)


def _language(ctx: StageContext) -> Language:
    return brief_language(ctx.run.brief)
