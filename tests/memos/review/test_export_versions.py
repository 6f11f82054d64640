"""``manage.py export_versions``: a line of a brief's frozen versions written as seed 001 section 7 lays them
out, from real runs (the real openai client against the fake OpenAI-compatible server, PostgreSQL)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from memos.models import AgentStep, ArtefactVersion, Brief, VersionFile
from memos.services import review
from memos.services.accounts import Roles
from memos.services.versions import content_hash
from tests.memos.deck_support import finished_deck
from tests.memos.pipeline_support import finished_run, load_desk_data, person

pytestmark = pytest.mark.django_db(transaction=True)

SEED_FIELDS = ("version", "composite", "delta_vs_prev", "rubric_version", "data_version")
DESK_FIELDS = (
    "brief",
    "kind",
    "run",
    "content_hash",
    "files",
    "evaluated",
    "frozen_at",
    "score_label",
    "changelog",
    "prompt_versions",
    "model_versions",
)
MEMO_FOLDER = ("memo.json", "render.pdf", "scores.json", "changelog.jsonl", "text.md", "audit.jsonl")
DECK_FOLDER = (
    "deck.json",
    "render.pdf",
    "deck.pptx",
    "scores.json",
    "changelog.jsonl",
    "text.md",
    "audit.jsonl",
)


def export(brief_id: object, out: Path, *more: str) -> tuple[int, str, str]:
    """Run the command as ``manage.py`` would: its exit status, stdout and stderr."""
    stdout, stderr = StringIO(), StringIO()
    try:
        call_command("export_versions", str(brief_id), "--out", str(out), *more, stdout=stdout, stderr=stderr)
    except SystemExit as exit_:
        return int(exit_.code or 0), stdout.getvalue(), stderr.getvalue()
    return 0, stdout.getvalue(), stderr.getvalue()


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "versions" / "index.jsonl").read_text().splitlines()]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored(version: ArtefactVersion, name: str) -> bytes:
    return bytes(VersionFile.objects.get(version=version, name=name).body)


@pytest.fixture
def two_versions() -> tuple[ArtefactVersion, ArtefactVersion]:
    load_desk_data("AAPL")
    ana = person("ana", Roles.ANALYST)
    member = person("cm1", Roles.COMMITTEE)
    first = finished_run(ana)
    v1 = ArtefactVersion.objects.get(run=first)
    review.cast_vote(version=v1, member=member, choice="reject", rationale="the thesis leans on one quarter")
    v2 = ArtefactVersion.objects.get(run=finished_run(ana, brief_of=first))
    v1.refresh_from_db()
    return v1, v2


def test_it_writes_a_folder_per_version_and_an_index_row_per_version_with_the_seeds_fields(
    two_versions: tuple[ArtefactVersion, ArtefactVersion], tmp_path: Path
) -> None:
    v1, v2 = two_versions
    code, out, err = export(v1.brief_id, tmp_path)
    assert (code, err) == (0, "")
    assert "exported 2 memo versions" in out and "2 index rows appended" in out

    root = tmp_path / "versions"
    assert sorted(p.name for p in root.iterdir()) == ["index.jsonl", "v001", "v002"]
    for folder in ("v001", "v002"):
        assert sorted(p.name for p in (root / folder).iterdir()) == sorted(MEMO_FOLDER)

    first, second = rows(tmp_path)
    for row in (first, second):
        assert set(SEED_FIELDS) | set(DESK_FIELDS) <= row.keys()
        # What changes after freezing is not in a row that never changes: it is in the audit trail.
        assert "status" not in row and "published_at" not in row
    assert (first["version"], second["version"]) == ("v001", "v002")
    assert (first["composite"], second["composite"]) == (v1.score, v2.score)
    assert first["delta_vs_prev"] is None and second["delta_vs_prev"] == v2.score_delta
    assert second["delta_vs_prev"] is not None
    assert second["rubric_version"] == ",".join(
        f"{name}-v{pin['version']}" for name, pin in sorted(v2.rubric_versions.items())
    )
    assert second["rubric_version"]
    assert second["data_version"] == v2.data_version and second["data_version"]
    assert second["content_hash"] == v2.content_hash and second["kind"] == "memo"
    assert second["run"] == str(v2.run_id) and second["changelog"] == v2.changelog
    assert second["evaluated"] is True and second["score_label"] == "calibrated J+"
    assert second["frozen_at"] == v2.created_at.isoformat()
    assert second["prompt_versions"] == v2.prompt_versions and second["model_versions"] == v2.model_versions
    assert second["brief"] == v2.brief_id
    assert second["files"] == {"render.pdf": VersionFile.objects.get(version=v2, name="render.pdf").sha256}


def test_each_folder_holds_the_frozen_memo_its_stored_pdf_its_iterations_and_its_audit_trail(
    two_versions: tuple[ArtefactVersion, ArtefactVersion], tmp_path: Path
) -> None:
    v1, _ = two_versions
    assert export(v1.brief_id, tmp_path)[0] == 0
    folder = tmp_path / "versions" / "v001"

    content = json.loads((folder / "memo.json").read_text())
    text = (folder / "text.md").read_text()
    assert content == v1.content and text == v1.rendered_text
    # A reader can check the folder against the index without the desk.
    assert content_hash("memo", content, text) == v1.content_hash == rows(tmp_path)[0]["content_hash"]

    scores = json.loads((folder / "scores.json").read_text())
    assert scores["score"] == v1.score and scores["scores"] == v1.scores and scores["evaluated"] is True

    # The loop's changelog: one row per synthesis iteration of the run that made the version.
    iterations = AgentStep.objects.filter(run=v1.run, kind="iteration", status="done").count()
    changelog = lines_of(folder / "changelog.jsonl")
    assert iterations >= 1 and [row["iteration"] for row in changelog] == list(range(1, iterations + 1))
    assert {"jplus", "jminus", "passed", "reason", "rewritten"} <= changelog[0].keys()

    trail = lines_of(folder / "audit.jsonl")
    assert [(e["action"], e["actor"]) for e in trail] == [
        ("frozen", None),
        ("motion_opened", None),
        ("voted", "cm1"),
        ("superseded", None),
        ("motion_closed", None),
    ]
    assert trail[2]["detail"]["rationale"] == "the thesis leans on one quarter"
    assert {e["content_hash"] for e in trail} == {v1.content_hash}

    pdf = (folder / "render.pdf").read_bytes()
    assert pdf == stored(v1, "render.pdf") and pdf.startswith(b"%PDF-") and len(pdf) > 5000


def test_exporting_again_rewrites_the_same_bytes(
    two_versions: tuple[ArtefactVersion, ArtefactVersion], tmp_path: Path
) -> None:
    v1, _ = two_versions
    assert export(v1.brief_id, tmp_path)[0] == 0
    first = snapshot(tmp_path)
    code, out, _ = export(v1.brief_id, tmp_path)
    assert code == 0 and "0 files written, 13 unchanged; 0 index rows appended" in out
    assert snapshot(tmp_path) == first

    # Into a fresh folder too: the PDF is the stored one.
    assert export(v1.brief_id, tmp_path / "again")[0] == 0
    assert snapshot(tmp_path / "again") == first


def test_the_index_is_appended_to_never_rewritten_and_a_status_change_reaches_only_the_audit_trail(
    tmp_path: Path,
) -> None:
    load_desk_data("AAPL")
    ana = person("ana", Roles.ANALYST)
    first = finished_run(ana)
    v1 = ArtefactVersion.objects.get(run=first)
    assert export(v1.brief_id, tmp_path)[0] == 0
    index = tmp_path / "versions" / "index.jsonl"
    before = index.read_bytes()
    pdf_before = (tmp_path / "versions" / "v001" / "render.pdf").read_bytes()

    v2 = ArtefactVersion.objects.get(run=finished_run(ana, brief_of=first))  # supersedes v1
    code, out, _ = export(v1.brief_id, tmp_path)
    assert code == 0 and "1 index row appended" in out
    after = index.read_bytes()
    assert after.startswith(before), "the rows already there keep their bytes"
    assert [row["version"] for row in rows(tmp_path)] == ["v001", "v002"]
    assert rows(tmp_path)[1]["content_hash"] == v2.content_hash
    assert (tmp_path / "versions" / "v001" / "render.pdf").read_bytes() == pdf_before
    trail = lines_of(tmp_path / "versions" / "v001" / "audit.jsonl")
    assert trail[-2]["action"] == "superseded" and trail[-2]["detail"] == {"by": "v2"}


def test_a_deck_line_is_exported_with_its_stored_slides_pptx_and_the_changelog_of_its_laps(
    tmp_path: Path,
) -> None:
    done = finished_deck("quick")
    version = done.version
    memo = ArtefactVersion.objects.get(run=finished_run(done.run.brief.owner, brief_of=done.run))
    assert (version.number, memo.number) == (1, 1)

    code, _, stderr = export(version.brief_id, tmp_path / "both")
    assert code == 2 and "has deck and memo versions: say which line to export with --kind deck or" in stderr
    assert not (tmp_path / "both").exists()

    code, out, _ = export(version.brief_id, tmp_path, "--kind", "deck")
    assert code == 0 and "exported 1 deck version" in out
    folder = tmp_path / "versions" / "v001"
    assert sorted(p.name for p in folder.iterdir()) == sorted(DECK_FOLDER)
    assert (folder / "render.pdf").read_bytes() == stored(version, "render.pdf")
    assert (folder / "deck.pptx").read_bytes() == stored(version, "deck.pptx")
    assert json.loads((folder / "deck.json").read_text())["deck"] == done.output.deck.model_dump(mode="json")
    laps = lines_of(folder / "changelog.jsonl")
    assert [row["lap"] for row in laps] == list(range(1, done.output.laps + 1))
    assert [(row["action"], row["target"], row["accepted"]) for row in laps] == [
        (entry.action, entry.target, entry.accepted) for entry in done.output.changelog
    ]
    (row,) = rows(tmp_path)
    assert row["kind"] == "deck" and set(row["files"]) == {"render.pdf", "deck.pptx"}

    # The memo line is another export: into the same folder it is refused.
    code, _, stderr = export(version.brief_id, tmp_path, "--kind", "memo")
    assert code == 2 and f"holds the export of brief {version.brief_id} deck" in stderr


@pytest.mark.parametrize(
    ("brief_id", "said"),
    [
        ("seven", "the brief id must be a number, not 'seven'"),
        ("1.5", "must be a number"),
        ("999999", "no brief has id 999999"),
    ],
)
def test_a_bad_brief_id_exits_2_with_a_message_and_writes_nothing(
    brief_id: str, said: str, tmp_path: Path
) -> None:
    out = tmp_path / "export"
    code, stdout, stderr = export(brief_id, out)
    assert code == 2 and said in stderr and stderr.startswith("export_versions: ")
    assert stdout == "" and not out.exists()


def test_an_out_that_is_a_file_exits_2_and_leaves_it_as_it_was(
    two_versions: tuple[ArtefactVersion, ArtefactVersion], tmp_path: Path
) -> None:
    v1, _ = two_versions
    target = tmp_path / "a-file"
    target.write_text("keep me")
    code, _, stderr = export(v1.brief_id, target)
    assert code == 2 and "is a file, not a folder" in stderr
    assert target.read_text() == "keep me" and list(tmp_path.iterdir()) == [target]


def test_a_brief_with_no_version_or_a_folder_holding_another_export_exits_2(
    two_versions: tuple[ArtefactVersion, ArtefactVersion], tmp_path: Path
) -> None:
    v1, _ = two_versions
    empty = Brief.objects.create(company=v1.brief.company, question="Nothing run yet", owner=v1.brief.owner)
    code, _, stderr = export(empty.pk, tmp_path / "none")
    assert code == 2 and f"brief {empty.pk} has no frozen version yet" in stderr
    assert not (tmp_path / "none").exists()
    code, _, stderr = export(v1.brief_id, tmp_path / "none", "--kind", "deck")
    assert code == 2 and f"brief {v1.brief_id} has no deck version: it has memo versions" in stderr

    assert export(v1.brief_id, tmp_path / "shared")[0] == 0
    before = snapshot(tmp_path / "shared")
    other = finished_run(User.objects.get(username="ana"), question="Is the margin durable?")
    code, _, stderr = export(other.brief_id, tmp_path / "shared")
    assert code == 2 and f"holds the export of brief {v1.brief_id} memo" in stderr
    assert snapshot(tmp_path / "shared") == before

    # An index whose rows this database did not freeze (another database's export) is not appended to.
    index = tmp_path / "shared" / "versions" / "index.jsonl"
    forged = [
        row | {"content_hash": "f" * 64} if row["version"] == "v001" else row
        for row in rows(tmp_path / "shared")
    ]
    index.write_text("".join(json.dumps(row) + "\n" for row in forged))
    code, _, stderr = export(v1.brief_id, tmp_path / "shared")
    assert code == 2 and "has rows for v001 that this database did not freeze" in stderr
