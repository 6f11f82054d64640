"""``manage.py export_versions BRIEF_ID --out DIR [--kind memo|deck]``: a line of a brief's frozen versions
as files, laid out as seed 001 section 7 lays them out (memos.services.version_export):

    DIR/versions/
      v001/  <kind>.json  render.pdf  [deck.pptx]  scores.json  changelog.jsonl  text.md  audit.jsonl
      v002/  ...
      index.jsonl   one row per completed run: the seed's fields (version, composite, delta_vs_prev,
                    rubric_version, data_version), then the brief, kind, run, content hash, files' sha256,
                    evaluation, times, changelog and pins

A brief has a line of versions per kind (memo v1, v2 and deck v1, v2): ``--kind`` says which one, and may be
left out when the brief has only one. ``render.pdf`` and ``deck.pptx`` are the bytes stored when the version
was frozen, so an export today and one in a year give the same files.

``index.jsonl`` is appended to, never rewritten: exporting into a folder that holds an export of this line
already adds the rows of the versions it lacks, after the rows it has, whose bytes stay as they are.
Statuses are not in it (they change; the index does not): they are in each version's ``audit.jsonl``.

Everything is read before a byte is written, so bad input leaves DIR as it was. Bad input (a brief id that is
not a number or names no brief, a brief with no version of the line, a brief with two lines and no
``--kind``, an --out that is a file, a DIR holding another line's export or rows that do not match this
database) is one line on stderr and exit status 2, as the desk's other commands do. The same database gives
the same bytes: JSON with sorted keys and the stored files. A file whose bytes are already there is left
alone; the others are replaced atomically.
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
from memos.services.version_export import INDEX, folder_name, index_row, jsonl, version_files_of


class BadExport(ValueError):
    """Input the command refuses before writing anything."""


class Command(BaseCommand):
    help = "Write a line of a brief's frozen versions to DIR/versions/ (vNNN folders and index.jsonl)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("brief_id", help="the brief's id (as in /admin/memos/brief/)")
        parser.add_argument("--out", type=Path, required=True, help="the folder to write versions/ into")
        parser.add_argument(
            "--kind", help="the line to export (memo, deck); needed only when the brief has more than one"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            brief = _brief(options["brief_id"])
            kind = _kind(brief, options["kind"])
            versions = list(
                ArtefactVersion.objects.filter(brief=brief, kind=kind)
                .select_related("brief__company")
                .order_by("number")
            )
            root = _versions_root(options["out"])
            indexed = _indexed(root, versions)
        except BadExport as exc:
            self.stderr.write(f"export_versions: {exc}")
            raise SystemExit(2) from exc
        files: dict[Path, bytes] = {}
        for version in versions:
            files |= version_files_of(version)
        index = root / INDEX
        new_rows = [index_row(version) for version in versions if folder_name(version) not in indexed]
        written = sum(_write(root / relative, content) for relative, content in files.items())
        if new_rows:
            before = index.read_bytes() if index.exists() else b""
            written += _write(index, before + jsonl(new_rows))
        total = len(files) + 1
        self.stdout.write(
            f"exported {len(versions)} {kind} version{'s' if len(versions) != 1 else ''} of brief {brief.pk} "
            f"({brief.subject}) to {root}: {written} file{'s' if written != 1 else ''} written, "
            f"{total - written} unchanged; {len(new_rows)} index row{'s' if len(new_rows) != 1 else ''} "
            "appended"
        )


def _brief(text: str) -> Brief:
    try:
        brief_id = int(text)
    except ValueError:
        raise BadExport(f"the brief id must be a number, not {text!r}") from None
    found = Brief.objects.select_related("company").filter(pk=brief_id).first()
    if found is None:
        raise BadExport(f"no brief has id {brief_id}")
    return found


def _kind(brief: Brief, asked: str | None) -> str:
    kinds = sorted(set(ArtefactVersion.objects.filter(brief=brief).values_list("kind", flat=True)))
    if asked is not None:
        if asked not in kinds:
            has = f"it has {' and '.join(kinds)} versions" if kinds else "it has no version yet"
            raise BadExport(f"brief {brief.pk} has no {asked} version: {has}")
        return asked
    if not kinds:
        raise BadExport(f"brief {brief.pk} has no frozen version yet: nothing to export")
    if len(kinds) > 1:
        raise BadExport(
            f"brief {brief.pk} has {' and '.join(kinds)} versions: say which line to export with "
            + " or ".join(f"--kind {kind}" for kind in kinds)
        )
    return kinds[0]


def _versions_root(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise BadExport(f"--out {out} is a file, not a folder")
    root = out / "versions"
    if root.exists() and not root.is_dir():
        raise BadExport(f"{root} is a file, not a folder")
    return root


def _indexed(root: Path, versions: list[ArtefactVersion]) -> set[str]:
    """The versions ``root``'s index has rows for already, once it is sure they are rows of this line, as this
    database froze them (an export is appended to, never rewritten)."""
    index = root / INDEX
    if not index.exists():
        return set()
    try:
        rows = [json.loads(line) for line in index.read_text().splitlines() if line]
        lines = {(row["brief"], row["kind"]) for row in rows}
        hashes = {str(row["version"]): str(row["content_hash"]) for row in rows}
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise BadExport(f"{index} is not an export of this command ({exc}); choose another --out") from exc
    ours = {(versions[0].brief_id, versions[0].kind)}
    if lines - ours:
        theirs = ", ".join(f"brief {brief} {kind}" for brief, kind in sorted(lines - ours))
        raise BadExport(f"{root} holds the export of {theirs}; choose another --out")
    frozen = {folder_name(version): version.content_hash for version in versions}
    differ = sorted(name for name, digest in hashes.items() if frozen.get(name) != digest)
    if differ:
        raise BadExport(
            f"{index} has rows for {', '.join(differ)} that this database did not freeze as they are "
            "(another database's export?); choose another --out"
        )
    return set(hashes)


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
