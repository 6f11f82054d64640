"""``manage.py export_versions BRIEF_ID --out DIR``: a brief's frozen versions as files (seed 001 section 7).

    DIR/versions/
      v001/  <kind>.json  render.pdf  scores.json  changelog.jsonl  text.md
      v002/  ...
      index.jsonl   one row per version: the seed's fields (version, status, composite, delta_vs_prev,
                    rubric_version, data_version), then the brief, kind, content hash, evaluation, times
                    and pins

``<kind>.json`` is the artefact exactly as frozen and ``text.md`` its text, so a reader can check a folder
against the index: ``memos.services.versions.content_hash(kind, <kind>.json, text.md)`` is its
``content_hash``. ``changelog.jsonl`` is the version's audit trail, one transition a line. ``render.pdf``
is the version's stored PDF (memos.services.version_files), the bytes every reader downloads.

Everything is read and rendered before a byte is written, so bad input or a failed render leaves DIR as it
was. Bad input (a brief id that is not a number or names no brief, a brief with no version yet, an --out that
is a file, a DIR holding another brief's export) is one line on stderr and exit status 2, as the desk's other
commands do. The same database gives the same bytes: JSON with sorted keys, and the stored PDF. A file whose
bytes are already there is left alone; the others are replaced atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from memos.models import ArtefactVersion, Brief
from memos.services import version_files

INDEX = "index.jsonl"


class BadExport(ValueError):
    """Input the command refuses before writing anything."""


class Command(BaseCommand):
    help = "Write a brief's frozen versions to DIR/versions/ (vNNN folders and index.jsonl)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("brief_id", help="the brief's id (as in /admin/memos/brief/)")
        parser.add_argument("--out", type=Path, required=True, help="the folder to write versions/ into")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            brief = _brief(options["brief_id"])
            root = _versions_root(options["out"], brief)
            versions = list(
                ArtefactVersion.objects.filter(brief=brief)
                .select_related("brief__company", "brief__owner", "run__created_by")
                .order_by("number")
            )
            if not versions:
                raise BadExport(f"brief {brief.pk} has no frozen version yet: nothing to export")
        except BadExport as exc:
            self.stderr.write(f"export_versions: {exc}")
            raise SystemExit(2) from exc
        files = export(versions)
        written = sum(_write(root / relative, content) for relative, content in files.items())
        self.stdout.write(
            f"exported {len(versions)} version{'s' if len(versions) != 1 else ''} of brief {brief.pk} "
            f"({brief.company.ticker}) to {root}: {written} file{'s' if written != 1 else ''} written, "
            f"{len(files) - written} unchanged"
        )


def export(versions: list[ArtefactVersion]) -> dict[Path, bytes]:
    """Every file of the export, by its path under ``versions/``, built in memory."""
    files: dict[Path, bytes] = {}
    rows: list[dict[str, Any]] = []
    for version in versions:
        folder = Path(folder_name(version))
        files[folder / f"{version.kind}.json"] = _json(version.content)
        files[folder / "scores.json"] = _json(_scores(version))
        files[folder / "changelog.jsonl"] = _jsonl(_audit(version))
        files[folder / "text.md"] = version.rendered_text.encode()
        files[folder / "render.pdf"] = render_pdf(version)
        rows.append(index_row(version))
    files[Path(INDEX)] = _jsonl(rows)
    return files


def folder_name(version: ArtefactVersion) -> str:
    return f"v{version.number:03d}"


def render_pdf(version: ArtefactVersion) -> bytes:
    """The version's stored PDF (rendered and stored first if it was frozen before files were kept)."""
    return version_files.body_of(version_files.file_of(version, version_files.RENDER_PDF))


def index_row(version: ArtefactVersion) -> dict[str, Any]:
    rubrics = version.rubric_versions
    return {
        # seed 001 section 7
        "version": folder_name(version),
        "status": version.status,
        "composite": version.score,
        "delta_vs_prev": version.score_delta,
        "rubric_version": ",".join(f"{name}-v{pin['version']}" for name, pin in sorted(rubrics.items()))
        or None,
        "data_version": version.data_version or None,
        # and what the desk knows besides
        "brief": version.brief_id,
        "kind": version.kind,
        "content_hash": version.content_hash,
        "evaluated": version.evaluated,
        "score_label": version.score_label,
        "frozen_at": version.created_at.isoformat(),
        "published_at": version.published_at.isoformat() if version.published_at else None,
        "changelog": version.changelog,
        "rubric_versions": rubrics,
        "prompt_versions": version.prompt_versions,
        "model_versions": version.model_versions,
    }


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


def _brief(text: str) -> Brief:
    try:
        brief_id = int(text)
    except ValueError:
        raise BadExport(f"the brief id must be a number, not {text!r}") from None
    found = Brief.objects.select_related("company").filter(pk=brief_id).first()
    if found is None:
        raise BadExport(f"no brief has id {brief_id}")
    return found


def _versions_root(out: Path, brief: Brief) -> Path:
    """``out/versions``, once it is sure writing there replaces nothing but this brief's own export."""
    if out.exists() and not out.is_dir():
        raise BadExport(f"--out {out} is a file, not a folder")
    root = out / "versions"
    if root.exists() and not root.is_dir():
        raise BadExport(f"{root} is a file, not a folder")
    index = root / INDEX
    if index.exists():
        try:
            briefs = {json.loads(line)["brief"] for line in index.read_text().splitlines() if line}
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise BadExport(
                f"{index} is not an export of this command ({exc}); choose another --out"
            ) from exc
        if briefs - {brief.pk}:
            theirs = ", ".join(str(b) for b in sorted(briefs - {brief.pk}))
            raise BadExport(f"{root} holds the export of brief {theirs}; choose another --out")
    return root


def _json(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode()


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows).encode()


def _write(path: Path, content: bytes) -> bool:
    """Write ``content`` to ``path`` unless it holds those bytes already; whether it wrote. A reader never
    sees half a file: the bytes go to a temporary file beside it, which then replaces it."""
    if path.is_file() and path.read_bytes() == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o644)  # mkstemp's 0600 is for the moment it is half written
            handle.write(content)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True
