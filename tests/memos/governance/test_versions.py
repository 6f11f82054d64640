"""Prompts and rubrics as versions (memos.services.governance): seeded from the files idempotently, never
changed in the database, checked before a new version is made, switched by activation, and pinned by a run
from its start to its end, resumes included."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from agents.llm.errors import PromptError
from agents.memo.rubric import MEMO_RUBRIC
from agents.rubrics import RubricError
from memos.models import PromptVersion, RubricVersion, Run
from memos.pipeline import prompts
from memos.services import governance
from memos.services.errors import ServiceError
from memos.services.governance import activate, propose_prompt, propose_rubric, seed_from_files
from tests.conftest import ROOT
from tests.memos.factories import company, run_for

pytestmark = pytest.mark.django_db

PROMPTS = ROOT / "prompts"
RUBRICS = PROMPTS / "rubrics"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def every_row() -> list[object]:
    return [*PromptVersion.objects.order_by("pk").values(), *RubricVersion.objects.order_by("pk").values()]


def active(model: type[PromptVersion | RubricVersion], name: str) -> Any:
    return model._default_manager.get(name=name, is_active=True)


def edited(text: str, marker: str = "Governance marker: edited in the admin.") -> str:
    return text.replace("\n## User\n", f"\n{marker}\n\n## User\n", 1)


# --- seeding from the files


def test_seeding_stores_each_file_as_version_1_active_with_the_files_own_hash() -> None:
    report = seed_from_files()

    files = [*sorted(PROMPTS.glob("*.md")), *sorted(RUBRICS.glob("*.yaml"))]
    assert len(report.lines) == len(files) == PromptVersion.objects.count() + RubricVersion.objects.count()
    for path in files:
        model = PromptVersion if path.suffix == ".md" else RubricVersion
        row = model._default_manager.get(source_path=str(path.relative_to(ROOT)))
        assert (row.version, row.is_active, row.source, row.activated_by) == (1, True, "file", None)
        assert row.content_hash == sha256(path.read_bytes())
        assert row.content.encode("utf-8") == path.read_bytes()
    memo = RubricVersion.objects.get(name=MEMO_RUBRIC)
    assert memo.data["thresholds"]["hill_climb_min_jplus_gain"] == 1.5
    r2 = RubricVersion.objects.get(name="deck_r2")
    assert r2.data["thresholds"]["ship_bar"] == 4.3
    assert r2.data["objectives"][0]["dimensions"][0]["weight"] == 0.25


def test_the_seed_command_run_twice_changes_nothing() -> None:
    first, second = StringIO(), StringIO()
    call_command("seed_governance", stdout=first)
    before = every_row()
    call_command("seed_governance", stdout=second)

    assert every_row() == before
    count = len(before)
    assert f"{count} files, 0 unchanged" in first.getvalue()
    assert second.getvalue().strip() == f"prompts and rubrics: {count} files, {count} unchanged"


@pytest.fixture
def file_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The prompt and rubric files, copied where a test may change them; seeding reads the copy."""
    folder = tmp_path / "prompts"
    folder.mkdir()
    for path in PROMPTS.glob("*.md"):
        shutil.copy(path, folder / path.name)
    shutil.copytree(RUBRICS, folder / "rubrics")
    monkeypatch.setattr(governance, "prompt_dir", lambda: folder)
    monkeypatch.setattr(governance, "rubric_dir", lambda: folder / "rubrics")
    return folder


def _outcome(report: governance.SeedReport, name: str) -> governance.SeedLine:
    return next(line for line in report.lines if line.name == name)


def test_a_changed_file_is_the_next_version_and_active_while_the_files_rule_that_name(
    file_copy: Path, admin_user: User
) -> None:
    seed_from_files()
    synthesizer = file_copy / "synthesizer.md"
    synthesizer.write_text(edited(synthesizer.read_text(encoding="utf-8"), "A file edit."), encoding="utf-8")

    line = _outcome(seed_from_files(), "synthesizer")

    assert (line.version, line.outcome) == (2, "activated")
    second = active(PromptVersion, "synthesizer")
    assert (second.version, second.source) == (2, "file")
    assert second.content_hash == sha256(synthesizer.read_bytes())
    assert PromptVersion.objects.get(name="synthesizer", version=1).is_active is False


def test_a_changed_file_leaves_an_admins_choice_active_unless_that_choice_no_longer_fits_the_code(
    file_copy: Path, admin_user: User
) -> None:
    seed_from_files()
    chosen = propose_prompt(
        base=active(PromptVersion, "synthesizer"),
        content=edited(active(PromptVersion, "synthesizer").content),
        user=admin_user,
    )
    activate(version=chosen, user=admin_user)
    synthesizer = file_copy / "synthesizer.md"
    text = synthesizer.read_text(encoding="utf-8")
    synthesizer.write_text(edited(text, "A file edit."), encoding="utf-8")

    kept = _outcome(seed_from_files(), "synthesizer")

    assert (kept.version, kept.outcome) == (3, "kept")
    assert "v2, chosen in the admin, stays active" in kept.detail
    assert active(PromptVersion, "synthesizer").pk == chosen.pk
    before = every_row()
    assert {line.outcome for line in seed_from_files().lines} == {"unchanged"}  # idempotent here too
    assert every_row() == before

    # The code moved on: the file now has a placeholder the admin's version lacks. The file's version wins.
    synthesizer.write_text(text.replace("{correction}", "{correction}\n{note_from_code}"), encoding="utf-8")
    replaced = _outcome(seed_from_files(), "synthesizer")
    assert (replaced.version, replaced.outcome) == (4, "activated")
    assert "replaces v2" in replaced.detail and "placeholders differ" in replaced.detail


def test_a_changed_rubric_file_becomes_a_version_with_its_data(file_copy: Path) -> None:
    seed_from_files()
    r1 = file_copy / "rubrics" / "deck_r1.yaml"
    text = r1.read_text(encoding="utf-8")
    r1.write_text(text.replace("entry_bar: 3.2", "entry_bar: 3.5"), encoding="utf-8")

    assert _outcome(seed_from_files(), "deck_r1").outcome == "activated"
    assert active(RubricVersion, "deck_r1").data["thresholds"]["entry_bar"] == 3.5


def test_a_malformed_file_stops_the_seeding_naming_the_file(file_copy: Path) -> None:
    (file_copy / "evaluator.md").write_text("no front matter\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(SystemExit) as stopped:
        call_command("seed_governance", stdout=StringIO(), stderr=err)
    assert stopped.value.code == 2 and "evaluator.md" in err.getvalue() and "front matter" in err.getvalue()


def test_a_malformed_file_stops_start_up_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "broken.yaml").write_text(
        "name: broken\nscale: {min: 0, max: 5}\n", encoding="utf-8"
    )
    monkeypatch.setattr(prompts, "prompt_dir", lambda: tmp_path)
    prompts.rubric_files.cache_clear()
    try:
        with pytest.raises(RubricError, match=r"broken\.yaml: bad rubric: .*objectives"):
            prompts.load_at_start()
        (tmp_path / "evaluator.md").write_text("---\nname: evaluator\n---\n", encoding="utf-8")
        prompts.templates.cache_clear()
        with pytest.raises(PromptError, match=r"evaluator\.md"):
            prompts.load_at_start()
    finally:
        prompts.templates.cache_clear()
        prompts.rubric_files.cache_clear()
        monkeypatch.undo()
        prompts.load_at_start()


# --- versions never change; one is active


def test_a_version_never_changes_or_disappears_in_the_database(admin_user: User) -> None:
    seed_from_files()
    row = active(PromptVersion, "evaluator")
    before = PromptVersion.objects.filter(pk=row.pk).values().get()

    def raw_sql() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memos_promptversion SET content_hash = %s WHERE id = %s", ["0" * 64, row.pk]
            )

    attempts: list[Callable[[], object]] = [
        lambda: PromptVersion.objects.filter(pk=row.pk).update(content="You are helpful."),
        lambda: PromptVersion.objects.filter(pk=row.pk).update(version=7),
        lambda: PromptVersion.objects.filter(pk=row.pk).delete(),
        lambda: RubricVersion.objects.filter(name=MEMO_RUBRIC).update(data={}),
        raw_sql,
    ]
    for attempt in attempts:
        with pytest.raises(IntegrityError, match="governed version"), transaction.atomic():
            attempt()
    assert PromptVersion.objects.filter(pk=row.pk).values().get() == before


def test_only_one_version_of_a_name_can_be_active(admin_user: User) -> None:
    seed_from_files()
    first = active(PromptVersion, "evaluator")
    second = propose_prompt(base=first, content=edited(first.content), user=admin_user)
    with pytest.raises(IntegrityError, match="one_active_prompt_version_per_name"), transaction.atomic():
        PromptVersion.objects.filter(pk=second.pk).update(is_active=True)

    assert activate(version=second, user=admin_user) is True
    assert activate(version=second, user=admin_user) is False  # already active: nothing to do
    assert list(PromptVersion.objects.filter(name="evaluator", is_active=True)) == [second]
    second.refresh_from_db()
    assert second.activated_by == admin_user and second.activated_at is not None


# --- an edit is checked, and refused with its problem named


def _swap(old: str, new: str) -> Any:
    def change(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return change


REFUSED_PROMPTS = {
    "broken front matter": ("synthesizer", _swap("temperature: 0.3", "temperature: hot"), "temperature"),
    "no front matter": ("synthesizer", _swap("---\nname:", "name:"), "starts with YAML front matter"),
    "a dropped placeholder": ("synthesizer", _swap("{aperture}", "(none)"), "{aperture} dropped"),
    "an added placeholder": ("evaluator", _swap("{ticker}", "{ticker} {mood}"), "{mood} added"),
    "a lost rubric term": ("synthesizer", _swap("at least 1.5", "a little"), "'at least 1.5'"),
    "a lost specialist term": ("specialist_macro", _swap("Silence", "Quiet"), "'Silence'"),
    "another name": ("evaluator", _swap("name: evaluator", "name: judge"), "keeps that name"),
    "another output type": (
        "evaluator",
        _swap("agents.memo.schemas:Evaluation", "agents.memo.schemas:SpecialistBrief"),
        "output_schema changed",
    ),
    "no change": ("evaluator", lambda text: text.replace("\n", "\r\n"), "nothing changed"),
}


@pytest.mark.parametrize("case", list(REFUSED_PROMPTS))
def test_an_edit_that_breaks_a_prompt_is_refused_naming_the_problem(case: str, admin_user: User) -> None:
    seed_from_files()
    name, change, problem = REFUSED_PROMPTS[case]
    base = active(PromptVersion, name)
    with pytest.raises(ServiceError) as refused:
        propose_prompt(base=base, content=change(base.content), user=admin_user)
    assert problem in str(refused.value)
    assert PromptVersion.objects.filter(name=name).count() == 1


REFUSED_RUBRICS = {
    "weights that do not sum to 1": (MEMO_RUBRIC, _swap("weight: 0.2", "weight: 0.3"), "sum to 1.1, not 1"),
    "a renamed dimension": (
        MEMO_RUBRIC,
        _swap("key: non_consensus", "key: contrarian"),
        "missing non_consensus; unknown contrarian",
    ),
    "a dropped threshold": ("deck_r1", _swap("entry_bar: 3.2", "entry: 3.2"), "entry_bar are missing"),
    "a dropped gate": ("deck_r2", _swap("key: truth", "key: honesty"), "gate(s) truth are missing"),
    "not YAML": ("deck_r2", _swap("scale: {min: 0, max: 5}", "scale: {min: 0, max: 5"), "not valid YAML"),
}


@pytest.mark.parametrize("case", list(REFUSED_RUBRICS))
def test_an_edit_that_breaks_a_rubric_is_refused_naming_the_problem(case: str, admin_user: User) -> None:
    seed_from_files()
    name, change, problem = REFUSED_RUBRICS[case]
    base = active(RubricVersion, name)
    with pytest.raises(ServiceError) as refused:
        propose_rubric(base=base, content=change(base.content), user=admin_user)
    assert problem in str(refused.value)
    assert RubricVersion.objects.filter(name=name).count() == 1


def test_a_retuned_rubric_is_the_next_version_with_its_data(admin_user: User) -> None:
    seed_from_files()
    base = active(RubricVersion, "deck_r2")
    content = base.content.replace("ship_bar: 4.3", "ship_bar: 4.5")
    new = propose_rubric(base=base, content=content, user=admin_user, note="higher")
    assert (new.version, new.is_active, new.based_on, new.note) == (2, False, base, "higher")
    assert new.data["thresholds"]["ship_bar"] == 4.5 and new.content_hash == sha256(new.content.encode())


def test_a_version_that_no_longer_fits_the_code_cannot_be_activated(admin_user: User) -> None:
    seed_from_files()
    old = active(PromptVersion, "evaluator")
    # A version stored before the code's prompt gained a placeholder (written here as the trigger allows).
    stale = PromptVersion.objects.create(
        name="evaluator",
        version=2,
        content=old.content.replace("{ticker}", "TICKER"),
        content_hash="f" * 64,
        source=PromptVersion.Source.ADMIN,
    )
    with pytest.raises(ServiceError, match=r"cannot be activated: .*\{ticker\} dropped"):
        activate(version=stale, user=admin_user)
    assert active(PromptVersion, "evaluator").pk == old.pk


def test_a_version_from_before_the_check_with_untrusted_text_in_its_system_part_is_retired(
    file_copy: Path, admin_user: User
) -> None:
    seed_from_files()
    old = active(PromptVersion, "specialist_news")
    system, user = old.content.split("\n## User\n")
    # Stored before saves were checked for it, and activated by an admin: the news itself in the system part.
    stored = PromptVersion.objects.create(
        name="specialist_news",
        version=2,
        content=f"{system}\n{{documents}}\n\n## User\n" + user.replace("{documents}", "(above)"),
        content_hash="e" * 64,
        source=PromptVersion.Source.ADMIN,
    )
    with pytest.raises(
        ServiceError, match=r"cannot be activated: .*\{documents\} moved into the system section"
    ):
        activate(version=stored, user=admin_user)
    PromptVersion.objects.filter(pk=old.pk).update(is_active=False)
    PromptVersion.objects.filter(pk=stored.pk).update(is_active=True, activated_by=admin_user)

    # The next start's seeding puts the file's version back, naming why.
    news = file_copy / "specialist_news.md"
    news.write_text(edited(news.read_text(encoding="utf-8"), "A file edit."), encoding="utf-8")
    replaced = _outcome(seed_from_files(), "specialist_news")

    assert (
        replaced.outcome == "activated" and "moved a placeholder into the system section" in replaced.detail
    )
    assert active(PromptVersion, "specialist_news").version == 3


# --- a run's pins


def test_a_run_pins_the_active_versions_and_names_them(alice: User, admin_user: User) -> None:
    from memos.services.runs import create_brief, start_run

    company()
    first = start_run(
        brief=create_brief(owner=alice, ticker="AAPL", question="Is it durable?"),
        user=alice,
        workflow="memo",
        profile="full",
    )
    evaluator = active(PromptVersion, "evaluator")
    assert first.prompt_versions["evaluator"] == {
        "version": 1,
        "hash": evaluator.content_hash,
        "id": evaluator.pk,
    }
    assert set(first.rubric_versions) == {MEMO_RUBRIC, "deck_r1", "deck_r2"}
    assert set(first.prompt_versions) == {p.name for p in PromptVersion.objects.all()}

    newer = propose_prompt(base=evaluator, content=edited(evaluator.content), user=admin_user)
    activate(version=newer, user=admin_user)
    Run.objects.filter(pk=first.pk).update(status=Run.Status.DONE)
    second = start_run(brief=first.brief, user=alice, workflow="memo", profile="full")

    assert second.prompt_versions["evaluator"]["hash"] == newer.content_hash
    named = {(p.kind, p.name): p for p in governance.pinned_versions(second)}
    assert (named["prompt", "evaluator"].version, named["prompt", "evaluator"].content_hash) == (
        2,
        newer.content_hash,
    )
    assert named["rubric", MEMO_RUBRIC].version == 1
    assert next(p.kind for p in governance.pinned_versions(second)) == "rubric"
    first.refresh_from_db()
    assert first.prompt_versions["evaluator"]["hash"] == evaluator.content_hash  # the first run's stay


def test_a_pinned_template_is_read_and_parsed_once_then_served_from_memory(
    alice: User, admin_user: User, django_assert_num_queries: Any
) -> None:
    seed_from_files()
    base = active(PromptVersion, "synthesizer")
    # Unique to this test: the parsed-template cache belongs to the process, shared by every test in it.
    marker = f"Governance marker {uuid.uuid4()}."
    newer = propose_prompt(base=base, content=edited(base.content, marker), user=admin_user)
    run = run_for(alice)
    pins = {"synthesizer": {"version": 2, "hash": newer.content_hash, "id": newer.pk}}
    Run.objects.filter(pk=run.pk).update(prompt_versions=pins)
    run.refresh_from_db()

    with django_assert_num_queries(1):
        first = prompts.template("synthesizer", run)
    with django_assert_num_queries(0):
        again = prompts.template("synthesizer", run)
        file_version = prompts.template("evaluator", run)  # not pinned: the file loaded at start-up

    assert again is first and first.content_hash == newer.content_hash and marker in first.system
    assert file_version is prompts.templates()["evaluator"]
    run.prompt_versions = {"evaluator": {"version": 1, "hash": file_version.content_hash}}
    with django_assert_num_queries(0):  # a pin of the file's own content needs no row at all
        assert prompts.template("evaluator", run) is file_version
