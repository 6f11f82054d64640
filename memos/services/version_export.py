"""A line of frozen versions as files, laid out as seed 001 section 7 lays them out (``manage.py
export_versions`` writes them):

    versions/
      v001/  <kind>.json  render.pdf  [deck.pptx]  scores.json  changelog.jsonl  text.md  audit.jsonl
      v002/  ...
      index.jsonl   one row per completed run, appended once and never rewritten

``<kind>.json`` (``deck.json``, ``memo.json``) is the artefact exactly as frozen and ``text.md`` its text, so
``memos.services.versions.content_hash(kind, <kind>.json, text.md)`` is its ``content_hash``.
``render.pdf`` and ``deck.pptx`` (whatever files its workflow declares) are the version's stored files
(memos.services.version_files), the bytes every reader downloads; their sha256 are in its index row.
``changelog.jsonl`` is the loop's changelog: one object per lap of the refinement loop that made a deck (its
run's lap steps), per synthesis iteration of a memo, as each workflow declares it. ``scores.json`` is its
scores as frozen.

What changes after freezing is kept out of the index, whose rows never change: a version's review status
and publication live in its audit trail, ``audit.jsonl``, one transition a line (append-only in the
database, so the file only grows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memos.models import ArtefactVersion
from memos.services import version_files
from memos.services.surfaces import surface_for

INDEX = "index.jsonl"


def folder_name(version: ArtefactVersion) -> str:
    return f"v{version.number:03d}"


def version_files_of(version: ArtefactVersion) -> dict[Path, bytes]:
    """The files of one version's folder, by their path under ``versions/``. A version frozen before its
    files were kept gets them rendered and stored first (memos.services.version_files.file_of)."""
    folder = Path(folder_name(version))
    files = {
        folder / f"{version.kind}.json": _json(version.content),
        folder / "text.md": version.rendered_text.encode(),
        folder / "scores.json": _json(_scores(version)),
        folder / "changelog.jsonl": jsonl(loop_changelog(version)),
        folder / "audit.jsonl": jsonl(_audit(version)),
    }
    for stored in version_files.stored_files(version):
        files[folder / stored.name] = version_files.body_of(stored)
    return files


def index_row(version: ArtefactVersion) -> dict[str, Any]:
    """The version's row of ``index.jsonl``: only what never changes once it is frozen."""
    rubrics = version.rubric_versions
    return {
        # seed 001 section 7 (its review status lives in the audit trail: audit.jsonl)
        "version": folder_name(version),
        "composite": version.score,
        "delta_vs_prev": version.score_delta,
        "rubric_version": ",".join(f"{name}-v{pin['version']}" for name, pin in sorted(rubrics.items()))
        or None,
        "data_version": version.data_version or None,
        # and what the desk knows besides
        "brief": version.brief_id,
        "kind": version.kind,
        "run": str(version.run_id),
        "content_hash": version.content_hash,
        "files": {stored.name: stored.sha256 for stored in version_files.stored_files(version)},
        "evaluated": version.evaluated,
        "score_label": version.score_label,
        "frozen_at": version.created_at.isoformat(),
        "changelog": version.changelog,
        "rubric_versions": rubrics,
        "prompt_versions": version.prompt_versions,
        "model_versions": version.model_versions,
        "verdict_families": version.verdict_families,
    }


def loop_changelog(version: ArtefactVersion) -> list[dict[str, Any]]:
    """What the loop that made the version did, one object per lap (a deck) or iteration (a memo), as its
    workflow declares it (memos.services.surfaces.Export); empty for a workflow with no loop."""
    return surface_for(version.kind).export.changelog(version)


def _scores(version: ArtefactVersion) -> dict[str, Any]:
    return {
        "version": folder_name(version),
        "evaluated": version.evaluated,
        "score": version.score,
        "score_label": version.score_label,
        "delta_vs_prev": version.score_delta,
        "scores": version.scores,
    }


def _audit(version: ArtefactVersion) -> list[dict[str, Any]]:
    return [
        {
            "at": event.created_at.isoformat(),
            "action": event.action,
            "actor": event.actor.username if event.actor is not None else None,
            "content_hash": event.content_hash,
            "detail": event.detail,
        }
        for event in version.audit.select_related("actor").order_by("created_at", "id")
    ]


def _json(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode()


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows).encode()
