"""Seed 003, by default: every verdict role goes to the judge model in one setting, families are compared (not
model names), a verdict of the work's own family is badged on its step, its run, its frozen version and the
e-mails about it, and ``REQUIRE_SEPARATE_JUDGE`` refuses such runs before they start."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils.html import strip_tags

from agents.llm.config import load_llm_settings
from agents.llm.families import family_of_model
from agents.llm.roles import VERDICT_ROLES, Role
from memos.models import AgentStep, Notice, Run
from memos.pipeline import driver
from memos.pipeline.judge_families import SAME_FAMILY, stored
from memos.pipeline.registry import WORKFLOWS
from memos.services.errors import ServiceError
from memos.services.runs import ask_watchlist, create_brief, start_run
from memos.services.version_export import index_row
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data, person, script_for
from tests.memos.workflow_settings import changed

QUESTION = "Should the committee add to the position ahead of the next product cycle?"
# The embedded default: every role on the local model (Qwen2.5-Coder).
EMBEDDED = load_llm_settings({})
# A hosted judge of another family for every verdict, in one setting.
OTHER_JUDGE = load_llm_settings({"LLM_JUDGE_MODEL": "claude-3-5-sonnet"})


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(strip_tags(html)))


# --- the settings


def test_one_setting_puts_every_verdict_role_on_the_judge_and_a_role_s_own_settings_still_win() -> None:
    llm = load_llm_settings({"LLM_JUDGE_MODEL": "gpt-4o", "LLM_MODEL_JURY": "gemini-1.5-pro"})
    for role in VERDICT_ROLES - {Role.JURY}:
        assert llm.endpoint_for(role).model == "gpt-4o", role
    assert llm.endpoint_for(Role.JURY).model == "gemini-1.5-pro"
    for role in (Role.SYNTHESIZER, Role.ANALYST, Role.DRAFTER, Role.NEWS_ANALYST):
        assert llm.endpoint_for(role).model == "local", role
    assert (llm.family_for(Role.SCORER), llm.family_for(Role.JURY), llm.family_for(Role.ANALYST)) == (
        "openai",
        "google",
        "qwen",
    )


def test_families_are_compared_not_model_names() -> None:
    # A bigger model of the writers' family is still the writers' family.
    llm = load_llm_settings(
        {
            "LLM_BASE_URL": "https://api.example.com/v1",
            "LLM_API_KEY": "k",
            "LLM_MODEL": "gpt-4o-mini",
            "LLM_JUDGE_MODEL": "gpt-4o",
        }
    )
    assert llm.endpoint_for(Role.EVALUATOR).model != llm.endpoint_for(Role.SYNTHESIZER).model
    assert llm.family_for(Role.EVALUATOR) == llm.family_for(Role.SYNTHESIZER) == "openai"
    # A declared family wins over the name's.
    declared = load_llm_settings({"LLM_JUDGE_MODEL": "house-judge", "LLM_JUDGE_FAMILY": "anthropic"})
    assert declared.family_for(Role.SCORING) == "anthropic"
    assert [family_of_model(m) for m in ("Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B", "o3-mini")] == [
        "qwen",
        "meta",
        "openai",
    ]
    assert family_of_model("house-model") == "house-model"  # unknown: a family of its own


# --- every workflow's runs, as they start


@pytest.mark.django_db
def test_on_the_embedded_default_every_declared_verdict_of_every_workflow_is_badged() -> None:
    load_desk_data("AAPL")
    user = analyst("ana")
    workflows = [w for w in WORKFLOWS.values() if w.subject == "company"]
    assert {w.name for w in workflows} >= {"memo", "deck", "agency"}
    for workflow in workflows:
        assert workflow.verdicts, f"{workflow.name} declares no verdict"
        brief = create_brief(owner=user, ticker="AAPL", question=f"{QUESTION} ({workflow.name})")
        profile = next(iter(workflow.profiles()))
        with override_settings(LLM_SETTINGS=EMBEDDED):
            run = start_run(brief=brief, user=user, workflow=workflow.name, profile=profile, enqueue=False)
        checks = stored(run.verdict_families)
        assert [c.judge for c in checks] == [v.judge for v in workflow.verdicts]
        for check in checks:
            assert check.same_family and check.judge in VERDICT_ROLES
            assert check.badge.startswith(SAME_FAMILY) and "(family qwen)" in check.badge


@pytest.mark.django_db
def test_a_judge_of_another_family_is_not_badged_and_the_desk_setting_refuses_only_a_shared_family() -> None:
    load_desk_data("AAPL")
    user = analyst("ana")
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    with override_settings(LLM_SETTINGS=OTHER_JUDGE, REQUIRE_SEPARATE_JUDGE=True):
        run = start_run(brief=brief, user=user, workflow="memo", profile="quick", enqueue=False)
    (check,) = stored(run.verdict_families)
    assert (check.judge_family, check.same_family, check.badge) == ("anthropic", False, "")
    run.status = Run.Status.DONE
    run.save(update_fields=["status"])

    other = create_brief(owner=user, ticker="AAPL", question=f"{QUESTION} Again.")
    with (
        override_settings(LLM_SETTINGS=EMBEDDED, REQUIRE_SEPARATE_JUDGE=True),
        pytest.raises(ServiceError) as refused,
    ):
        start_run(brief=other, user=user, workflow="memo", profile="quick", enqueue=False)
    message = str(refused.value)
    assert "the evaluator's grades (family qwen)" in message and "REQUIRE_SEPARATE_JUDGE" in message
    assert "LLM_JUDGE_MODEL" in message
    assert not Run.objects.filter(brief=other).exists()  # refused: nothing was started


@contextmanager
def _both_switches_on() -> Iterator[None]:
    """The agency's and the screen's older settings, on."""
    with (
        changed("memos.pipeline.agency", require_separate_judge=True),
        changed("memos.pipeline.screen", require_separate_reviewer=True),
    ):
        yield


@pytest.mark.django_db
def test_the_agency_s_and_the_screen_s_own_settings_refuse_their_runs_alone_through_the_one_check() -> None:
    load_desk_data("AAPL")
    user = analyst("ana")
    with override_settings(LLM_SETTINGS=EMBEDDED), _both_switches_on():
        brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
        with pytest.raises(ServiceError) as agency:
            start_run(brief=brief, user=user, workflow="agency", profile="quick", enqueue=False)
        with pytest.raises(ServiceError) as screen:
            ask_watchlist(
                owner=user,
                symbols=["XOM", "CVX"],
                question=QUESTION,
                workflow="screen",
                profile="weekly",
                enqueue=False,
            )
        assert not Run.objects.exists()
        # The agency's switch is the agency's alone: a memo run on the same models starts.
        memo = start_run(brief=brief, user=user, workflow="memo", profile="quick", enqueue=False)
    # One message, the desk's, naming each verdict of the work's own family and the setting that refused it.
    said = str(agency.value)
    assert "the board's scores (family qwen)" in said and "the jury's verdicts (family qwen)" in said
    assert "(AGENCY_REQUIRE_SEPARATE_JUDGE)" in said and "LLM_JUDGE_MODEL" in said
    said = str(screen.value)
    assert "the managing director's review (family qwen)" in said
    assert "(SCREEN_REQUIRE_SEPARATE_REVIEWER)" in said and "LLM_JUDGE_MODEL" in said
    memo.status = Run.Status.DONE
    memo.save(update_fields=["status"])
    # Every verdict on a judge of another family: both workflows' runs start under their switches.
    with override_settings(LLM_SETTINGS=OTHER_JUDGE), _both_switches_on():
        run = start_run(brief=brief, user=user, workflow="agency", profile="quick", enqueue=False)
        screened = ask_watchlist(
            owner=user,
            symbols=["XOM", "CVX"],
            question=QUESTION,
            workflow="screen",
            profile="weekly",
            enqueue=False,
        )
    assert run.status == screened.status == Run.Status.QUEUED


# --- where the badge is shown


@pytest.mark.django_db(transaction=True)
def test_the_badge_is_on_the_verdict_s_step_the_run_the_frozen_version_its_export_and_its_e_mail(
    client: Client,
) -> None:
    load_desk_data("AAPL")
    ana = analyst("ana")
    person("cora", "committee")
    brief = create_brief(owner=ana, ticker="AAPL", question=QUESTION)
    with override_settings(LLM_SETTINGS=EMBEDDED):
        run = start_run(brief=brief, user=ana, profile="quick", enqueue=False, workflow="memo")
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    version = run.versions.get()
    badge = stored(version.verdict_families)[0].badge
    assert "the evaluator's grades (family qwen)" in badge and "synthesizer" in badge

    client.force_login(ana)
    assert badge in text_of(client.get(f"/runs/{run.pk}/").content.decode())
    evaluation = AgentStep.objects.get(run=run, kind="evaluation")
    assert badge in text_of(client.get(f"/runs/{run.pk}/steps/{evaluation.pk}/").content.decode())
    drawer = client.get(f"/runs/{run.pk}/steps/{evaluation.pk}/", headers={"X-Desk-Fragment": "1"})
    assert badge in text_of(drawer.content.decode())
    # A generator's step is no verdict: no badge above it.
    specialist = AgentStep.objects.filter(run=run, kind="specialist").first()
    assert specialist is not None
    assert SAME_FAMILY not in client.get(f"/runs/{run.pk}/steps/{specialist.pk}/").content.decode()

    page = text_of(client.get(f"/versions/{version.pk}/").content.decode())
    assert badge in page and "judge qwen · work qwen (same family)" in page
    assert index_row(version)["verdict_families"] == version.verdict_families  # the export's index
    notice = Notice.objects.filter(version=version).first()
    assert notice is not None and badge in notice.body

    # The version is frozen: a judge configured later changes neither it nor what its page says.
    with override_settings(LLM_SETTINGS=OTHER_JUDGE):
        assert badge in text_of(client.get(f"/versions/{version.pk}/").content.decode())
    version.refresh_from_db()
    assert stored(version.verdict_families)[0].judge_family == "qwen"


@pytest.mark.django_db(transaction=True)
def test_a_run_judged_by_another_family_shows_no_badge_anywhere(client: Client, alice: User) -> None:
    load_desk_data("AAPL")
    brief = create_brief(owner=alice, ticker="AAPL", question=QUESTION)
    with override_settings(LLM_SETTINGS=OTHER_JUDGE):
        run = start_run(brief=brief, user=alice, profile="quick", enqueue=False, workflow="memo")
    with fake_llm(script_for(run)):
        driver.run_inline(str(run.pk))
    version = run.versions.get()
    client.force_login(alice)
    for url in (f"/runs/{run.pk}/", f"/versions/{version.pk}/"):
        assert SAME_FAMILY not in client.get(url).content.decode(), url
    assert "judge anthropic · work qwen" in text_of(client.get(f"/versions/{version.pk}/").content.decode())
