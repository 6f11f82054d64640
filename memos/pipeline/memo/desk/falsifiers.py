"""The positions register as pages read it. Watches are opened when a memo is frozen, by the memo workflow's
freeze hook (memos.pipeline.memo.watches.open_watches); what happens when newer data meets a watch's condition
is memos.pipeline.memo.desk.falsifier_hits."""

from __future__ import annotations

from memos.models import ArtefactVersion, FalsifierWatch


def watches_of(version: ArtefactVersion) -> list[FalsifierWatch]:
    """The register's rows for a version's page, in falsifier order."""
    return list(FalsifierWatch.objects.filter(version=version).select_related("run").order_by("number"))
