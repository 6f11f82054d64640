"""The admin's prompt and rubric pages, used as the demo admin uses them: saving an edited version makes the
next version and never changes the one shown; a save that breaks it is refused with the problem named; an
action activates a version; nothing is added from scratch or deleted; only superusers get in."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Permission, User
from django.test import Client

from agents.memo.rubric import MEMO_RUBRIC
from memos.models import PromptVersion, RubricVersion
from memos.services.accounts import ensure_demo_users
from memos.services.governance import seed_from_files

pytestmark = pytest.mark.django_db

PROMPTS = "/admin/memos/promptversion/"
RUBRICS = "/admin/memos/rubricversion/"
MARKER = "Governance marker: edited in the admin."


@pytest.fixture
def desk_admin(client: Client) -> User:
    """The demo admin (a superuser, as scripts/run.sh creates it), signed in, with the files seeded."""
    ensure_demo_users(allowed_hosts=["127.0.0.1"])
    seed_from_files()
    user = User.objects.get(username="admin")
    client.force_login(user)
    return user


def _active(model: type[PromptVersion | RubricVersion], name: str) -> Any:
    return model._default_manager.get(name=name, is_active=True)


def _edited(text: str) -> str:
    return text.replace("\n## User\n", f"\n{MARKER}\n\n## User\n", 1)


def _save(client: Client, url: str, content: str, **extra: str) -> Any:
    return client.post(url, {"content": content, "note": "", "_save": "Save", **extra})


def _errors(page: Any) -> list[str]:
    errors: list[str] = page.context["adminform"].form.errors.get("content", [])
    return errors


def test_the_demo_admin_lists_the_prompt_and_rubric_versions(client: Client, desk_admin: User) -> None:
    prompts, rubrics = client.get(PROMPTS), client.get(RUBRICS)
    assert prompts.status_code == rubrics.status_code == 200
    assert b"synthesizer" in prompts.content and b"specialist_macro" in prompts.content
    assert b"deck_r2" in rubrics.content and b'value="activate_versions"' in rubrics.content
    assert b'value="delete_selected"' not in prompts.content


def test_a_version_page_shows_what_the_code_reads_from_it(client: Client, desk_admin: User) -> None:
    memo = _active(RubricVersion, MEMO_RUBRIC)
    page = client.get(f"{RUBRICS}{memo.pk}/change/").content.decode()
    assert "Causal mechanism</td><td>0.2</td>" in page and "accept_min_jplus 5" in page
    assert "This version (never changes)" in page and memo.content_hash in page
    synthesizer = _active(PromptVersion, "synthesizer")
    page = client.get(f"{PROMPTS}{synthesizer.pk}/change/").content.decode()
    assert "{aperture}" in page and "agents.memo.schemas:SynthesisIteration" in page


def test_a_rubric_version_page_shows_every_level_with_its_quoted_example(
    client: Client, desk_admin: User
) -> None:
    page = client.get(f"{RUBRICS}{_active(RubricVersion, 'deck_r1').pk}/change/").content.decode()
    row = page[page.index("Thesis clarity</td>") : page.index("</tr>", page.index("Thesis clarity</td>"))]
    assert row.count('class="anchor-example"') == 6  # levels 0 to 5, each quoted
    assert "<strong>0</strong> No thesis at all: the deck is a sequence of facts" in row
    assert "Slide one: Company overview. Slide two: Revenue history." in row


def test_saving_an_edit_makes_the_next_version_and_leaves_the_shown_one_as_it_was(
    client: Client, desk_admin: User
) -> None:
    first = _active(PromptVersion, "synthesizer")
    before = PromptVersion.objects.filter(pk=first.pk).values().get()
    url = f"{PROMPTS}{first.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    assert b"Saving stores this as a new version" in page.content
    assert page.context["adminform"].form["content"].value() == first.content

    # A browser sends a textarea's lines with CRLF: stored as the file's LF.
    saved = _save(client, url, _edited(first.content).replace("\n", "\r\n"), note="clearer rubric wording")

    second = PromptVersion.objects.get(name="synthesizer", version=2)
    assert saved.status_code == 302 and saved["Location"] == f"{PROMPTS}{second.pk}/change/"
    assert (second.based_on, second.created_by, second.source) == (first, desk_admin, "admin")
    assert second.content == _edited(first.content) and MARKER in second.content
    assert second.content_hash == hashlib.sha256(second.content.encode()).hexdigest()
    assert (second.note, second.is_active) == ("clearer rubric wording", False)
    assert PromptVersion.objects.filter(pk=first.pk).values().get() == before  # still active, unchanged
    shown = client.get(saved["Location"])
    assert "Saved synthesizer as version 2 (not active yet" in shown.content.decode()
    logged = LogEntry.objects.get(object_id=str(second.pk))
    assert logged.action_flag == ADDITION and "edited from version 1" in logged.get_change_message()


def test_saving_with_activate_ticked_makes_the_new_version_the_one_new_runs_use(
    client: Client, desk_admin: User
) -> None:
    first = _active(RubricVersion, "deck_r1")
    content = first.content.replace("entry_bar: 3.2", "entry_bar: 3.4")
    saved = _save(client, f"{RUBRICS}{first.pk}/change/", content, activate="on")
    assert saved.status_code == 302
    second = _active(RubricVersion, "deck_r1")
    assert (second.version, second.data["thresholds"]["entry_bar"], second.activated_by) == (
        2,
        3.4,
        desk_admin,
    )


REFUSED = [
    (PromptVersion, "synthesizer", "temperature: 0.3", "temperature: warm", "temperature"),
    (PromptVersion, "synthesizer", "{aperture}", "", "placeholder(s) {aperture} dropped"),
    (PromptVersion, "evaluator", "{ticker}", "{ticker} {mood}", "placeholder(s) {mood} added"),
    (PromptVersion, "synthesizer", "at least 1.5", "a little", "rubric term(s) the prompt-content tests"),
    (RubricVersion, MEMO_RUBRIC, "weight: 0.2", "weight: 0.25", "sum to 1.05, not 1"),
    (RubricVersion, "deck_r2", "weight: 0.15", "weight: 0.05", "sum to 0.9, not 1"),
    # A level left with an adjective and no quoted example (seed 000: "each level has a quoted example").
    (
        RubricVersion,
        MEMO_RUBRIC,
        "          1: 'Services growth should support margins over time.'\n",
        "",
        "dimension 'causal_mechanism' has no quoted example at level 1",
    ),
]


@pytest.mark.parametrize(("model", "name", "old", "new", "problem"), REFUSED)
def test_a_save_that_breaks_the_version_is_refused_naming_the_problem(
    client: Client,
    desk_admin: User,
    model: type[PromptVersion | RubricVersion],
    name: str,
    old: str,
    new: str,
    problem: str,
) -> None:
    base = _active(model, name)
    assert old in base.content
    url = f"{PROMPTS if model is PromptVersion else RUBRICS}{base.pk}/change/"

    refused = _save(client, url, base.content.replace(old, new, 1))

    assert refused.status_code == 200
    assert any(problem in error for error in _errors(refused)), _errors(refused)
    assert b"errornote" in refused.content
    assert model._default_manager.filter(name=name).count() == 1


@pytest.mark.parametrize(
    ("name", "placeholder"),
    [("specialist_news", "documents"), ("deck_scorer", "deck"), ("evaluator", "brief")],
)
def test_an_edit_that_moves_a_fenced_placeholder_into_the_system_part_is_refused_naming_it(
    client: Client, desk_admin: User, name: str, placeholder: str
) -> None:
    # The code fills these with untrusted text (documents, model output, the analyst's words): in the user
    # part each is fenced; in the system part it would be read as the desk's own instructions.
    base = _active(PromptVersion, name)
    system, user = base.content.split("\n## User\n")
    lines = [line for line in user.splitlines() if line.strip() != f"{{{placeholder}}}"]
    assert len(lines) == len(user.splitlines()) - 1  # the placeholder stood alone on its line
    moved = f"{system}\nThe material: {{{placeholder}}}\n\n## User\n" + "\n".join(lines) + "\n"

    refused = _save(client, f"{PROMPTS}{base.pk}/change/", moved)

    assert refused.status_code == 200
    assert any(
        f"placeholder(s) {{{placeholder}}} moved into the system section" in error
        for error in _errors(refused)
    ), _errors(refused)
    assert PromptVersion.objects.filter(name=name).count() == 1


def test_saving_the_same_content_again_is_refused_as_no_change(client: Client, desk_admin: User) -> None:
    first = _active(PromptVersion, "evaluator")
    refused = _save(client, f"{PROMPTS}{first.pk}/change/", first.content)
    assert refused.status_code == 200
    assert any("nothing changed" in error for error in _errors(refused))
    assert PromptVersion.objects.filter(name="evaluator").count() == 1


def test_the_activate_action_switches_the_active_version(client: Client, desk_admin: User) -> None:
    first = _active(PromptVersion, "synthesizer")
    _save(client, f"{PROMPTS}{first.pk}/change/", _edited(first.content))
    second = PromptVersion.objects.get(name="synthesizer", version=2)

    done = client.post(PROMPTS, {"action": "activate_versions", "_selected_action": [second.pk]}, follow=True)

    shown = [str(m) for m in done.context["messages"]]
    assert "synthesizer v2 is now active." in shown, shown
    assert list(PromptVersion.objects.filter(name="synthesizer", is_active=True)) == [second]
    second.refresh_from_db()
    assert second.activated_by == desk_admin
    # Back to version 1: also one action, and version 2 stays stored.
    client.post(PROMPTS, {"action": "activate_versions", "_selected_action": [first.pk]})
    assert _active(PromptVersion, "synthesizer").pk == first.pk


def test_two_versions_of_one_name_are_not_activated_at_once(client: Client, desk_admin: User) -> None:
    first = _active(PromptVersion, "synthesizer")
    _save(client, f"{PROMPTS}{first.pk}/change/", _edited(first.content))
    second = PromptVersion.objects.get(name="synthesizer", version=2)
    done = client.post(
        PROMPTS, {"action": "activate_versions", "_selected_action": [first.pk, second.pk]}, follow=True
    )
    assert "at most one version of each name" in done.content.decode()
    assert _active(PromptVersion, "synthesizer").pk == first.pk


def test_no_version_is_added_from_scratch_or_deleted(client: Client, desk_admin: User) -> None:
    version = _active(RubricVersion, MEMO_RUBRIC)
    for base in (PROMPTS, RUBRICS):
        assert client.get(f"{base}add/").status_code == 403
        assert client.post(f"{base}add/", {"content": "x"}).status_code == 403
    assert client.get(f"{RUBRICS}{version.pk}/delete/").status_code == 403
    assert client.post(f"{RUBRICS}{version.pk}/delete/", {"post": "yes"}).status_code == 403
    listing = client.post(
        RUBRICS, {"action": "delete_selected", "_selected_action": [version.pk], "post": "yes"}
    )
    assert listing.status_code == 302  # back to the list: there is no such action to run
    assert RubricVersion.objects.filter(pk=version.pk).exists()


def test_a_staff_member_given_every_permission_still_cannot_edit_prompts(client: Client) -> None:
    seed_from_files()
    dora = User.objects.create_user(username="dora", password="dora-secret-pass", is_staff=True)
    dora.user_permissions.set(Permission.objects.filter(content_type__app_label="memos"))
    client.force_login(dora)
    version = _active(PromptVersion, "evaluator")
    assert client.get(PROMPTS).status_code == 403
    assert client.get(f"{PROMPTS}{version.pk}/change/").status_code == 403
    posted = _save(client, f"{PROMPTS}{version.pk}/change/", _edited(version.content))
    assert posted.status_code == 403
    assert b"promptversion" not in client.get("/admin/").content
    assert PromptVersion.objects.filter(name="evaluator").count() == 1
