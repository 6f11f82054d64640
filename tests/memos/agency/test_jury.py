"""The jury (seed 003's kill-argument) on the recommended moves, on by default: the strongest rejection in one
call, then a fresh thread that sees only the move and that rejection and rules on each of its objections with
a quote code checks; code computes each verdict and shows the objections left standing, beside the ranking,
which stays the board's."""

from __future__ import annotations

import html
import io
import re
from typing import Any

import pytest
from django.test import Client
from pypdf import PdfReader

from agents.agency.config import AgencyConfig
from agents.agency.fakes import REJECTION_LINE
from agents.agency.outputs import JuryOutput, MovesOutput, RankingOutput
from agents.llm.fakes.reading import message_text
from memos.models import AgentStep, ArtefactVersion, LLMCall, Run
from memos.pipeline import driver
from memos.services import printing
from memos.services.runs import create_brief, start_run
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)


def _run(**changes: Any) -> Run:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question="Which moves should the company make next?")
    with changed("memos.pipeline.agency", **changes):
        return start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="agency")


def _jury(run: Run) -> JuryOutput:
    return JuryOutput.model_validate(AgentStep.objects.get(run=run, key="jury").output)


def _messages(entry: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = entry["body"]["messages"]
    return messages


def _rejection_of(messages: Any) -> str:
    """The rejection as the second thread was shown it (inside the prompt's fence)."""
    after = message_text(messages, "user").split(REJECTION_LINE, 1)[1]
    return next(line for line in after.splitlines() if line and line[:2] != "<<")


def test_the_jury_runs_by_default_in_two_threads_the_second_seeing_only_the_move_and_the_rejection() -> None:
    run = _run()
    assert AgencyConfig.model_validate(run.config).jury
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        attacks = [entry for entry in server.requests if entry["prompt_name"] == "agency_jury_rejection"]
        rulings = [entry for entry in server.requests if entry["prompt_name"] == "agency_jury_rulings"]
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert "every recommended move survives the jury" in run.status_message
    jury = _jury(run)
    ranking = RankingOutput.model_validate(AgentStep.objects.get(run=run, key="ranking").output)
    assert [v.move_id for v in jury.verdicts] == [row.move_id for row in ranking.ranked if row.recommended]
    assert len(attacks) == len(rulings) == 3
    for entry in rulings:
        messages = _messages(entry)
        # A fresh conversation: a system and a user message, no earlier answer, no debate.
        assert [m["role"] for m in messages] == ["system", "user"]
        user = message_text(messages, "user")
        assert "The move:" in user and REJECTION_LINE in user and "Thread i1" not in user
    # Each rejection the first thread wrote is what the second thread ruled on.
    memos = {v.rejection.split(".")[0] for v in jury.verdicts}
    assert {_rejection_of(_messages(entry)).split(".")[0] for entry in rulings} == memos
    assert all((v.standing, v.answered, v.unsupported, v.survives) == (0, 2, 1, True) for v in jury.verdicts)
    # The fake's jury shares the analysts' model: seed 003's warning says so.
    assert jury.same_model_warning.startswith("Same family as the work it judges: the jury")
    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    assert "survives the jury" in version.sections["Jury"]


def test_the_run_plans_the_calls_it_makes_jury_included() -> None:
    run = _run()
    config = AgencyConfig.model_validate(run.config)
    with fake_llm():
        driver.run_inline(str(run.pk))
    moves = MovesOutput.model_validate(AgentStep.objects.get(run=run, key="moves").output)
    made = LLMCall.objects.filter(run=run).exclude(outcome=LLMCall.Outcome.CACHED).count()
    # 2 inference calls, 1 persona, 3 debates, 2 jury calls for each of the 3 recommended moves.
    assert config.jury_calls() == 6
    assert made == moves.planned_calls == moves.bound_calls == config.calls()
    assert config.calls() == 2 + 1 + 3 * config.calls_per_move() + 6


def test_a_run_without_the_jury_makes_no_jury_call() -> None:
    run = _run(jury=False)
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        names = {entry["prompt_name"] for entry in server.requests}
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert not names & {"agency_jury_rejection", "agency_jury_rulings"}
    assert not AgentStep.objects.filter(run=run, key="jury").exists()


def _standing(schema: dict[str, Any], messages: Any) -> dict[str, Any]:
    """Rulings whose first objection stands on the rejection's own words (a quote code finds)."""
    attack = " ".join(_rejection_of(messages).split()[:8])
    move = next(
        line.removeprefix("The move:").strip()
        for line in message_text(messages, "user").splitlines()
        if line.startswith("The move:")
    )
    return {
        "objections": [
            {"objection": "Nothing shows the demand holds.", "ruling": "stands", "quote": attack},
            {"objection": "It costs too much.", "ruling": "answered", "quote": " ".join(move.split()[:8])},
            {"objection": "Rivals will answer.", "ruling": "unsupported", "quote": attack},
        ]
    }


def test_an_objection_standing_on_a_checked_quote_means_the_move_does_not_survive_and_the_page_shows_it() -> (
    None
):
    run = _run()
    with fake_llm({"agency_jury_rulings": [_standing]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.NEEDS_REVIEW
    jury = _jury(run)
    failed = [v for v in jury.verdicts if not v.survives]
    assert len(failed) == 1 and (failed[0].standing, failed[0].checked, failed[0].answered) == (1, 1, 1)
    assert "the jury disagrees" in run.status_message and failed[0].move_id in run.status_message
    assert "Nothing shows the demand holds." in run.status_message
    # The jury's page lists the objection left standing; the version's ranking shows it under the move.
    step = AgentStep.objects.get(run=run, key="jury")
    client = Client()
    client.force_login(run.brief.owner)
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert "Objections left standing" in page and "Nothing shows the demand holds." in page
    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    assert "does not survive the jury" in version.sections["Recommended next moves"]
    assert "Nothing shows the demand holds." in version.sections["Recommended next moves"]
    shown = client.get(f"/versions/{version.pk}/").content.decode()
    assert 'data-survives="no"' in shown and "Nothing shows the demand holds." in shown


def test_an_answer_without_the_move_s_words_is_not_taken_and_an_unchecked_objection_does_not_decide() -> None:
    run = _run()
    quoteless: dict[str, Any] = {
        "objections": [
            {"objection": "It costs too much.", "ruling": "answered", "quote": "words the move never wrote"},
            {"objection": "The timing is wrong.", "ruling": "stands", "quote": "words nobody anywhere wrote"},
            {"objection": "Rivals will answer.", "ruling": "unsupported", "quote": "nor these words either"},
        ]
    }
    with fake_llm({"agency_jury_rulings": [quoteless]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    jury = _jury(run)
    unchecked = [v for v in jury.verdicts if v.standing == 3]
    assert len(unchecked) == 1
    verdict = unchecked[0]
    # Each ruling code could not check stands, shown as unchecked; none decides the verdict.
    assert (verdict.answered, verdict.unsupported, verdict.checked, verdict.survives) == (0, 0, 0, True)
    assert [item.asked for item in verdict.objections] == ["answered", None, "unsupported"]
    assert run.status == Run.Status.DONE, run.status_message


def test_a_resumed_jury_pays_for_no_call_twice() -> None:
    run = _run()
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        asked = len(server.requests)
        before = LLMCall.objects.filter(run=run).exclude(outcome=LLMCall.Outcome.CACHED).count()
        # The jury's step is lost (a worker killed after its calls were recorded): the stage runs again.
        AgentStep.objects.filter(run=run, key="jury").update(status=AgentStep.Status.PENDING, output=None)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
        driver.run_inline(str(run.pk))
        assert len(server.requests) == asked  # every jury call answered from the ledger
    assert LLMCall.objects.filter(run=run).exclude(outcome=LLMCall.Outcome.CACHED).count() == before
    assert LLMCall.objects.filter(run=run, outcome=LLMCall.Outcome.CACHED, role="jury").count() == 6
    assert len(_jury(run).verdicts) == 3


def test_a_jury_that_could_check_none_of_its_objections_says_so_instead_of_letting_every_move_survive() -> (
    None
):
    # The embedded 1.5B's rulings: objections that restate the instructions, quotes that are nowhere.
    unchecked = {
        "objections": [
            {
                "objection": "The rejection asserts it with nothing in the move behind it.",
                "ruling": "stands",
                "quote": "The rejection does not provide any information from the move.",
            }
        ]
        * 3
    }
    run = _run()
    with fake_llm({"agency_jury_rulings": [unchecked] * 6}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    assert _jury(run).checked_nothing
    assert "the jury could not check any of its objections" in run.status_message
    assert "survives the jury" not in run.status_message


def _verdict_blocks(page: str) -> dict[str, str]:
    """Each jury verdict a page shows (templates/memos/agency/_verdict.html), by move id, as its text."""
    return {
        found.group(1): " ".join(re.sub(r"<[^>]+>", " ", found.group(0)).split())
        for found in re.finditer(r'<div class="jury-verdict[^"]*" data-move="([^"]+)".*?</div>', page, re.S)
    }


def test_a_move_the_jury_could_check_nothing_on_is_never_said_to_survive_on_any_page() -> None:
    # The first ruling thread answers as the embedded 1.5B did: one objection written three times, its quote
    # nowhere. The other moves' rulings quote the move and the rejection, as the canned answers do.
    unchecked = {
        "objections": [
            {
                "objection": "The rejection asserts it with nothing in the move behind it.",
                "ruling": "stands",
                "quote": "The rejection does not provide any information from the move.",
            },
            {
                "objection": "The rejection asserts it, with nothing in the move behind it",
                "ruling": "stands",
                "quote": "The rejection does not provide any information from the move.",
            },
            {
                "objection": "the rejection asserts this with nothing in the move behind it.",
                "ruling": "answered",
                "quote": "The move answers it with its own words entirely.",
            },
        ]
    }
    run = _run()
    with fake_llm({"agency_jury_rulings": [unchecked]}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    jury = _jury(run)
    [blind] = [v for v in jury.verdicts if v.outcome == "unchecked"]
    others = [v for v in jury.verdicts if v is not blind]
    assert all(v.outcome == "survives" for v in others) and not jury.checked_nothing
    # The three copies are one objection, ruled out by code (its quote is nowhere).
    assert [(item.repeats, item.quote_found) for item in blind.objections] == [(3, False)]
    assert run.status == Run.Status.DONE
    assert f"could not check any objection on {blind.move_id}" in run.status_message
    assert "every recommended move survives" not in run.status_message
    step = AgentStep.objects.get(run=run, key="jury")
    assert step.summary.startswith("2 of 3 recommended moves survive · 1 unchecked")
    client = Client()
    client.force_login(run.brief.owner)
    sentence = "the jury could not check any of its 1 objection: no ruling quoted words code found"
    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    for url in (f"/runs/{run.pk}/steps/{step.pk}/", f"/versions/{version.pk}/"):
        page = html.unescape(client.get(url).content.decode())
        blocks = _verdict_blocks(page)
        assert set(blocks) >= {v.move_id for v in jury.verdicts}, url
        shown = blocks[blind.move_id]
        assert sentence in shown and "says nothing either way" in shown
        assert "surviv" not in shown, shown
        # What code ruled out, with the quote it could not find.
        assert "Ruled out by code" in shown and "(written 3 times)" in shown
        assert "The rejection does not provide any information from the move." in shown
        assert all(" survives. " in blocks[v.move_id] for v in others)
    # The version's frozen content carries the verdicts the page reads, and its frozen text says the same.
    frozen = JuryOutput.model_validate(version.content["jury"])
    assert [v.outcome for v in frozen.verdicts] == [v.outcome for v in jury.verdicts]
    assert f"{blind.move_id} (rank {blind.rank}): the jury could not check" in version.sections["Jury"]
    # The printed version (its PDF) says it too.
    printed = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(printing.print_page(version))).pages)
    assert "says nothing either way" in " ".join(printed.split())
