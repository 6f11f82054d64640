"""A frozen version's content and the audit trail cannot change, on any write path: each path below is tried,
each inside its own savepoint so the test goes on, and the row is read back byte for byte afterwards.

The database answers (migration 0008's triggers), not only the code: the ORM's save, update, bulk_update and
delete, raw SQL, and the admin, both the desk's read-only pages (memos/admin/review.py, which refuse with a
403) and a careless admin class that offers every permission (whose save the trigger refuses). The two
columns a review moves, ``status`` and ``published_at``, still change, the time once and with the status.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Model, ProtectedError
from django.test import Client, override_settings
from django.urls import path

import memos.admin.review  # noqa: F401  # registers the review's admin pages (memos/admin/__init__.py imports it too)
from memos.models import ArtefactVersion, AuditEvent, Brief, Run, VersionFile
from memos.services.versions import canonical_content, content_hash, record, rendered_text
from tests.memos.factories import company, run_for

pytestmark = pytest.mark.django_db

Status = ArtefactVersion.Status
MUTABLE = {"status", "published_at"}
SECTIONS = {"Headline thesis": "Cash generation funds a cycle the market discounts.", "Risk budget": "Small."}
CONTENT = {"memo": {"headline_thesis": SECTIONS["Headline thesis"], "scores": [6, 3.5]}, "evaluated": True}

# A careless admin: a plain ModelAdmin offers a superuser add, change and delete. The trigger still refuses.
careless = admin.AdminSite(name="careless")
careless.register(ArtefactVersion)
careless.register(AuditEvent)
urlpatterns = [path("careless/", careless.urls)]
CARELESS = "/careless/memos"


def frozen_version(run: Run, *, number: int = 1) -> ArtefactVersion:
    """A version as freezing leaves it, but with no audit rows, motion or notices: what refuses its deletion
    is then the trigger, not the PROTECT of a row pointing at it."""
    text = rendered_text(SECTIONS)
    content = {**CONTENT, "iteration": number}  # one version per run and content (a constraint)
    return ArtefactVersion.objects.create(
        brief=run.brief,
        run=run,
        number=number,
        kind="memo",
        title="AAPL memo: Is the services mix durable?",
        content=content,
        rendered_text=text,
        content_hash=content_hash("memo", content, text),
        evaluated=True,
        score=6.0,
        score_label="calibrated J+",
        score_delta=None,
        scores={"calibrated_jplus": 6, "decision": "ACCEPT"},
        sections=SECTIONS,
        sources=[{"id": "AAPL:revenue:FY2024", "kind": "fact", "label": "Revenue"}],
        prompt_versions={"synthesizer": {"version": 1, "hash": "a" * 64, "id": 1}},
        rubric_versions={"memo_j": {"version": 1, "hash": "b" * 64, "id": 1}},
        model_versions={"synthesizer": "fake-synthesizer"},
        data_version="d" * 64,
        changelog="first version of this brief (memo); calibrated J+ 6",
    )


def raw_row(model: type[Model], pk: int) -> str:
    """The row exactly as PostgreSQL holds it."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT to_jsonb(t)::text FROM {model._meta.db_table} t WHERE id = %s", [pk])
        found = cursor.fetchone()
    assert found is not None, f"{model.__name__} {pk} is gone"
    return str(found[0])


def assert_intact(version: ArtefactVersion, before: str) -> None:
    assert raw_row(ArtefactVersion, version.pk) == before
    stored = ArtefactVersion.objects.get(pk=version.pk)
    assert stored.content_hash == version.content_hash
    assert content_hash(stored.kind, stored.content, stored.rendered_text) == stored.content_hash


def refused(
    attempt: Callable[[], Any], error: type[Exception] | tuple[type[Exception], ...] = IntegrityError
) -> str:
    """Run a write that must fail, inside a savepoint; the database's message."""
    with pytest.raises(error) as caught, transaction.atomic():
        attempt()
    return str(caught.value)


@pytest.fixture
def run(alice: User) -> Run:
    return run_for(alice, company())


@pytest.fixture
def version(run: Run) -> ArtefactVersion:
    return frozen_version(run)


@pytest.fixture
def other_run(alice: User, run: Run) -> Run:
    brief = Brief.objects.create(company=run.brief.company, question="Another brief", owner=alice)
    return Run.objects.create(brief=brief, created_by=alice)


def changed_values(version: ArtefactVersion, other_run: Run) -> dict[str, Any]:
    """A different value for every column a frozen version may not change."""
    return {
        "brief": other_run.brief,
        "run": other_run,
        "number": 7,
        "kind": "deck",
        "title": "A better title",
        "content": {**CONTENT, "memo": {"headline_thesis": "Rewritten after the vote."}},
        "rendered_text": version.rendered_text + " (edited)",
        "content_hash": "0" * 64,
        "evaluated": False,
        "unfinished": [{"step": "News analyst: Utilities", "reason": "added after the vote"}],
        "brief_as_frozen": {"question": "Rewritten after the vote.", "owner_id": other_run.created_by_id},
        "score": 9.5,
        "score_label": "inflated",
        "score_delta": 3.5,
        "scores": {"calibrated_jplus": 10},
        "sections": {**SECTIONS, "Headline thesis": "Rewritten after the vote."},
        "sources": [],
        "prompt_versions": {},
        "rubric_versions": {},
        "model_versions": {"synthesizer": "another-model"},
        "verdict_families": [
            {"judge": "evaluator", "judge_family": "claimed-other", "work": [], "work_families": []}
        ],
        "data_version": "e" * 64,
        "changelog": "nothing to see",
        "created_at": datetime(2020, 1, 1, tzinfo=UTC),
    }


FROZEN_COLUMNS = sorted(
    f.name for f in ArtefactVersion._meta.concrete_fields if not f.primary_key and f.name not in MUTABLE
)


def test_the_list_of_changed_values_covers_every_frozen_column(
    version: ArtefactVersion, other_run: Run
) -> None:
    # A column added to the model later must be tried here too.
    assert sorted(changed_values(version, other_run)) == FROZEN_COLUMNS


# --- the ORM


@pytest.mark.parametrize("column", FROZEN_COLUMNS)
def test_saving_a_version_with_a_changed_column_is_refused_by_the_database(
    version: ArtefactVersion, other_run: Run, column: str
) -> None:
    before = raw_row(ArtefactVersion, version.pk)
    setattr(version, column, changed_values(version, other_run)[column])
    message = refused(version.save)
    assert "is frozen: only its review status may change" in message
    assert_intact(ArtefactVersion.objects.get(pk=version.pk), before)


def test_saving_only_the_changed_fields_is_refused_too(version: ArtefactVersion) -> None:
    before = raw_row(ArtefactVersion, version.pk)
    version.title, version.status = "A better title", Status.APPROVED
    refused(lambda: version.save(update_fields=["title", "status"]))
    assert_intact(version, before)


@pytest.mark.parametrize("column", FROZEN_COLUMNS)
def test_a_queryset_update_of_a_frozen_column_is_refused(
    version: ArtefactVersion, other_run: Run, column: str
) -> None:
    before = raw_row(ArtefactVersion, version.pk)
    value = changed_values(version, other_run)[column]
    refused(lambda: ArtefactVersion.objects.filter(pk=version.pk).update(**{column: value}))
    # Alongside an allowed column, the whole statement is refused.
    refused(
        lambda: ArtefactVersion.objects.filter(pk=version.pk).update(
            status=Status.APPROVED, **{column: value}
        )
    )
    assert_intact(version, before)


def test_bulk_update_is_refused(version: ArtefactVersion, run: Run) -> None:
    second = frozen_version(run, number=2)
    before = {v.pk: raw_row(ArtefactVersion, v.pk) for v in (version, second)}
    for row in (version, second):
        row.title = "Bulk-edited"
        row.sections = {"Headline thesis": "Bulk-edited."}
    refused(lambda: ArtefactVersion.objects.bulk_update([version, second], ["title", "sections"]))
    for row in (version, second):
        assert_intact(row, before[row.pk])


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memos_artefactversion SET title = 'Raw edit' WHERE id = %s",
        'UPDATE memos_artefactversion SET content = \'{"memo": "rewritten"}\'::jsonb WHERE id = %s',
        "UPDATE memos_artefactversion SET score = score + 1, status = 'approved' WHERE id = %s",
        "UPDATE memos_artefactversion SET content_hash = md5(content_hash) || md5(title) WHERE id = %s",
        "UPDATE memos_artefactversion SET id = id + 1000 WHERE id = %s",
    ],
)
def test_raw_sql_updates_are_refused(version: ArtefactVersion, sql: str) -> None:
    before = raw_row(ArtefactVersion, version.pk)

    def attempt() -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql, [version.pk])

    assert "is frozen" in refused(attempt)
    assert_intact(version, before)


def test_deleting_a_version_is_refused_by_the_database_on_every_path(version: ArtefactVersion) -> None:
    assert not version.audit.exists()  # nothing PROTECTs it: the trigger answers
    before = raw_row(ArtefactVersion, version.pk)

    def raw_delete() -> None:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memos_artefactversion WHERE id = %s", [version.pk])

    for attempt in (
        version.delete,
        ArtefactVersion.objects.filter(pk=version.pk).delete,
        ArtefactVersion.objects.all().delete,
        raw_delete,
    ):
        assert "versions are never deleted" in refused(attempt)
    assert_intact(version, before)


def test_a_version_with_a_history_and_its_brief_and_run_are_protected_too(version: ArtefactVersion) -> None:
    record(version, AuditEvent.Action.FROZEN)
    before = raw_row(ArtefactVersion, version.pk)
    refused(version.delete, ProtectedError)
    refused(version.brief.delete, ProtectedError)
    refused(version.run.delete, ProtectedError)

    def raw_delete() -> None:  # the trigger answers before the foreign key is even looked at
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memos_artefactversion WHERE id = %s", [version.pk])

    assert "versions are never deleted" in refused(raw_delete)
    assert_intact(version, before)


def test_the_review_status_and_publication_time_still_change(version: ArtefactVersion) -> None:
    published = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.APPROVED)
    version.status, version.published_at = Status.PUBLISHED, published
    version.save(update_fields=["status", "published_at"])
    stored = ArtefactVersion.objects.get(pk=version.pk)
    assert (stored.status, stored.published_at) == (Status.PUBLISHED, published)
    # A full save writes every column back as it was: only the review columns differ, so it passes.
    stored.status = Status.SUPERSEDED
    stored.save()
    stored = ArtefactVersion.objects.get(pk=version.pk)
    assert (stored.status, stored.published_at) == (Status.SUPERSEDED, published)
    assert content_hash(stored.kind, stored.content, stored.rendered_text) == version.content_hash


def test_the_publication_time_goes_with_the_status_and_once_set_never_changes(
    version: ArtefactVersion,
) -> None:
    """Executives read the versions that have a publication time (memos.services.access): a version in review
    never has one, a published one always has, and a superseded one keeps the one it had."""
    ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.APPROVED)  # publishable
    before = raw_row(ArtefactVersion, version.pk)
    now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    message = refused(lambda: ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.PUBLISHED))
    assert "a_published_version_says_when" in message
    message = refused(lambda: ArtefactVersion.objects.filter(pk=version.pk).update(published_at=now))
    assert "only_a_published_version_has_a_publication_time" in message
    assert raw_row(ArtefactVersion, version.pk) == before

    ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.PUBLISHED, published_at=now)
    ArtefactVersion.objects.filter(pk=version.pk).update(status=Status.SUPERSEDED)
    for sql in (
        "UPDATE memos_artefactversion SET published_at = NULL WHERE id = %s",
        "UPDATE memos_artefactversion SET published_at = published_at + interval '1 day' WHERE id = %s",
    ):

        def attempt(sql: str = sql) -> None:
            with connection.cursor() as cursor:
                cursor.execute(sql, [version.pk])

        assert "its publication time never changes" in refused(attempt)
    assert ArtefactVersion.objects.get(pk=version.pk).published_at == now


@pytest.mark.parametrize(
    ("path", "refused_move"),
    [
        ((), Status.PUBLISHED),  # published without an approval
        ((Status.APPROVED,), Status.READY_FOR_REVIEW),  # an approval taken back
        ((Status.CHANGES_REQUESTED,), Status.APPROVED),  # sent back, then approved anyway
        ((Status.APPROVED, Status.PUBLISHED), Status.APPROVED),  # a publication withdrawn
        ((Status.SUPERSEDED,), Status.READY_FOR_REVIEW),  # a superseded version revived
    ],
)
def test_the_database_keeps_the_status_to_the_moves_the_review_makes(
    version: ArtefactVersion, path: tuple[str, ...], refused_move: str
) -> None:
    now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    for status in path:  # each a move the review makes
        extra = {"published_at": now} if status == Status.PUBLISHED else {}
        ArtefactVersion.objects.filter(pk=version.pk).update(status=status, **extra)
    before = raw_row(ArtefactVersion, version.pk)
    message = refused(lambda: ArtefactVersion.objects.filter(pk=version.pk).update(status=refused_move))
    assert "the review never moves it to" in message or "a_published_version_says_when" in message
    assert raw_row(ArtefactVersion, version.pk) == before


# --- the audit trail: append-only


@pytest.fixture
def event(version: ArtefactVersion, alice: User) -> AuditEvent:
    record(version, AuditEvent.Action.FROZEN, detail={"run": "r"})
    record(version, AuditEvent.Action.VOTED, actor=alice, detail={"choice": "approve", "rationale": ""})
    return AuditEvent.objects.get(version=version, action=AuditEvent.Action.VOTED)


def audit_intact(event: AuditEvent, before: str, version: ArtefactVersion) -> None:
    assert raw_row(AuditEvent, event.pk) == before
    assert AuditEvent.objects.get(pk=event.pk).content_hash == version.content_hash
    assert AuditEvent.objects.filter(version=version).count() == 2


def test_every_write_to_an_audit_row_is_refused(
    event: AuditEvent, version: ArtefactVersion, charlie: User, run: Run
) -> None:
    before = raw_row(AuditEvent, event.pk)
    other = frozen_version(run, number=2)
    changes: dict[str, Any] = {
        "version": other,
        "content_hash": "0" * 64,
        "actor": charlie,
        "action": AuditEvent.Action.APPROVED,
        "detail": {"choice": "reject"},
        "created_at": datetime(2020, 1, 1, tzinfo=UTC),
    }
    columns = sorted(f.name for f in AuditEvent._meta.concrete_fields if not f.primary_key)
    assert sorted(changes) == columns
    for column, value in changes.items():
        stale = AuditEvent.objects.get(pk=event.pk)
        setattr(stale, column, value)
        assert "append-only" in refused(stale.save)
        refused(lambda: AuditEvent.objects.filter(pk=event.pk).update(**{column: value}))  # noqa: B023
        refused(lambda: AuditEvent.objects.bulk_update([stale], [column]))  # noqa: B023
    # Even writing the same values back is an UPDATE, and refused.
    unchanged = AuditEvent.objects.get(pk=event.pk)
    refused(unchanged.save)

    def raw(sql: str) -> Callable[[], None]:
        def attempt() -> None:
            with connection.cursor() as cursor:
                cursor.execute(sql, [event.pk])

        return attempt

    refused(raw("UPDATE memos_auditevent SET detail = '{}'::jsonb WHERE id = %s"))
    refused(raw("UPDATE memos_auditevent SET actor_id = NULL WHERE id = %s"))
    for attempt in (
        AuditEvent.objects.get(pk=event.pk).delete,
        AuditEvent.objects.filter(pk=event.pk).delete,
        AuditEvent.objects.all().delete,
        raw("DELETE FROM memos_auditevent WHERE id = %s"),
    ):
        assert "append-only" in refused(attempt)
    audit_intact(event, before, version)


def test_the_actor_of_an_audit_row_cannot_be_deleted_from_under_it(event: AuditEvent, alice: User) -> None:
    refused(alice.delete, ProtectedError)
    assert AuditEvent.objects.get(pk=event.pk).actor == alice


# --- the admin


def admin_form(client: Client, url: str) -> dict[str, Any]:
    """Whatever the change page offers as inputs, sent back as they are."""
    page = client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    posted = {name: form.fields[name].prepare_value(form[name].value()) for name in form.fields}
    return {name: "" if value is None else value for name, value in posted.items()}


def test_the_desks_admin_shows_versions_and_the_audit_trail_read_only(
    client: Client, admin_user: User, version: ArtefactVersion, event: AuditEvent
) -> None:
    client.force_login(admin_user)
    rows = {
        ArtefactVersion: (version.pk, raw_row(ArtefactVersion, version.pk)),
        AuditEvent: (event.pk, raw_row(AuditEvent, event.pk)),
    }
    for model, (pk, before) in rows.items():
        base = f"/admin/memos/{model._meta.model_name}/"
        listing = client.get(base)
        assert listing.status_code == 200 and b'value="delete_selected"' not in listing.content
        page = client.get(f"{base}{pk}/change/")
        assert page.status_code == 200 and not page.context["adminform"].form.fields  # nothing to edit
        assert client.post(f"{base}{pk}/change/", {"title": "Admin edit", "_save": "Save"}).status_code == 403
        assert client.get(f"{base}{pk}/delete/").status_code == 403
        assert client.post(f"{base}{pk}/delete/", {"post": "yes"}).status_code == 403
        assert client.get(f"{base}add/").status_code == 403
        bulk = client.post(base, {"action": "delete_selected", "_selected_action": [pk], "post": "yes"})
        assert bulk.status_code == 200  # the list again: there is no such action to run
        assert raw_row(model, pk) == before
    assert_intact(version, rows[ArtefactVersion][1])
    # The version's page in the admin shows its history.
    assert b"Voted" in client.get(f"/admin/memos/artefactversion/{version.pk}/change/").content


@override_settings(ROOT_URLCONF=__name__)
def test_a_careless_admin_that_offers_every_permission_is_still_refused_by_the_database(
    client: Client, admin_user: User, run: Run, event: AuditEvent
) -> None:
    client.force_login(admin_user)
    bare = frozen_version(run, number=2)  # no history: nothing PROTECTs it from the admin's delete
    before = raw_row(ArtefactVersion, bare.pk)
    edit = admin_form(client, f"{CARELESS}/artefactversion/{bare.pk}/change/")
    assert "content" in edit and "title" in edit  # this admin offers the frozen columns as inputs
    edit |= {"title": "Edited in the admin", "content": json.dumps({"memo": "rewritten"}), "_save": "Save"}
    assert "is frozen" in refused(lambda: client.post(f"{CARELESS}/artefactversion/{bare.pk}/change/", edit))
    deleted = refused(lambda: client.post(f"{CARELESS}/artefactversion/{bare.pk}/delete/", {"post": "yes"}))
    assert "never deleted" in deleted
    bulk = {"action": "delete_selected", "_selected_action": [bare.pk], "post": "yes"}
    assert "never deleted" in refused(lambda: client.post(f"{CARELESS}/artefactversion/", bulk))
    assert_intact(bare, before)

    before_event = raw_row(AuditEvent, event.pk)
    edit = admin_form(client, f"{CARELESS}/auditevent/{event.pk}/change/")
    edit |= {"detail": json.dumps({"choice": "reject"}), "_save": "Save"}
    assert "append-only" in refused(lambda: client.post(f"{CARELESS}/auditevent/{event.pk}/change/", edit))
    deleted = refused(lambda: client.post(f"{CARELESS}/auditevent/{event.pk}/delete/", {"post": "yes"}))
    assert "append-only" in deleted
    bulk = {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"}
    assert "append-only" in refused(lambda: client.post(f"{CARELESS}/auditevent/", bulk))
    assert raw_row(AuditEvent, event.pk) == before_event


def test_a_superuser_changes_the_status_only_through_the_review(
    client: Client, admin_user: User, version: ArtefactVersion
) -> None:
    """Even the one column the database lets change is not edited in the admin: it moves through
    memos.services.review, which checks the quorum and records who did it."""
    client.force_login(admin_user)
    posted = client.post(
        f"/admin/memos/artefactversion/{version.pk}/change/", {"status": Status.PUBLISHED, "_save": "Save"}
    )
    assert posted.status_code == 403
    assert ArtefactVersion.objects.get(pk=version.pk).status == Status.READY_FOR_REVIEW


def test_a_version_file_never_changes_nor_goes_and_always_is_its_own_hash(
    version: ArtefactVersion, run: Run
) -> None:
    body = b"%PDF-1.7 the memo as frozen"
    file = VersionFile.objects.create(
        version=version,
        name="render.pdf",
        content_type="application/pdf",
        sha256=hashlib.sha256(body).hexdigest(),
        size=len(body),
        body=body,
    )
    before = raw_row(VersionFile, file.pk)
    edited = b"%PDF-1.7 the memo, edited after the vote"
    changes: dict[str, Any] = {
        "version": frozen_version(run, number=2),
        "name": "deck.pptx",
        "content_type": "text/plain",
        "sha256": hashlib.sha256(edited).hexdigest(),
        "size": len(edited),
        "body": edited,
        "created_at": datetime(2020, 1, 1, tzinfo=UTC),
    }
    assert sorted(changes) == sorted(f.name for f in VersionFile._meta.concrete_fields if not f.primary_key)
    for column, value in changes.items():
        stale = VersionFile.objects.get(pk=file.pk)
        setattr(stale, column, value)
        assert "append-only" in refused(stale.save)
        refused(lambda: VersionFile.objects.filter(pk=file.pk).update(**{column: value}))  # noqa: B023
    # The body, its hash and its size together, as a forger would change them, in raw SQL too.
    with connection.cursor() as cursor:
        sql = "UPDATE memos_versionfile SET body = %s, sha256 = %s, size = %s WHERE id = %s"
        params = [edited, changes["sha256"], len(edited), file.pk]
        assert "append-only" in refused(lambda: cursor.execute(sql, params))
    for attempt in (
        VersionFile.objects.get(pk=file.pk).delete,
        VersionFile.objects.filter(pk=file.pk).delete,
        lambda: ArtefactVersion.objects.filter(pk=version.pk).delete(),
    ):
        refused(attempt, (IntegrityError, ProtectedError))
    assert raw_row(VersionFile, file.pk) == before

    # A file whose hash or size is not its bytes' own never gets in: the ETag and the export can trust both.
    other = frozen_version(run, number=3)
    for lie in ({"sha256": "0" * 64}, {"size": len(body) + 1}):
        row = {"sha256": hashlib.sha256(body).hexdigest(), "size": len(body)} | lie
        assert "a_version_file_is_its_hash" in refused(
            lambda: VersionFile.objects.create(
                version=other,
                name="render.pdf",
                content_type="application/pdf",
                body=body,
                **row,  # noqa: B023
            )
        )


def test_a_content_hash_spelled_from_the_dumped_content_is_the_hash_every_frozen_version_has() -> None:
    """The freeze hashes the content it writes the row from; the whole it hashes must be spelled as the
    JSON of {"kind", "content", "text"} always was, or a rerun would no longer find the version it froze."""
    content = {"z": [1.5, None, {"b": "市场 “quoted”", "a": True}], "a": {"nested": [0.1, 2e-05]}}
    text = "## Thesis\nRevenue rose 5.2% — ½ of it services 😀"
    whole = {"kind": "memo", "content": content, "text": text}
    before = hashlib.sha256(json.dumps(whole, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert content_hash("memo", content, text) == before
    assert content_hash("memo", content, text, canonical_content(content)) == before
    assert content_hash("deck", content, text) != before
