"""The consulting agency end to end against the fake OpenAI-compatible server, through the real openai client:
the protocol as rows, code's ranking, a rerun that costs nothing, and what ``manage.py agency`` writes."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db.models import Count
from django.test import override_settings

from agents.agency.config import AgencyConfig
from agents.agency.outputs import MovesOutput, RankingOutput, SourcesOutput
from memos.models import AgentStep, ArtefactVersion, DebateTurn, LLMCall, Motion, Move, MoveScore, Run
from memos.pipeline import driver
from memos.services.errors import ServiceError
from memos.services.runs import create_brief, start_run
from tests.memos.agency.support import start_agency
from tests.memos.pipeline_support import analyst, fake_llm, load_desk_data
from tests.memos.workflow_settings import changed

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Which strategic moves should the company make next?"


def _run(
    profile: str = "quick", ticker: str = "AAPL", personas: tuple[str, ...] = ("capital", "competition")
) -> Run:
    """A run of two personas (the quick profile has one): their high-risk moves are the same acquisition."""
    load_desk_data(ticker)
    user = analyst()
    brief = create_brief(owner=user, ticker=ticker, question=QUESTION)
    return start_agency(brief, user, profile, personas=personas)


def _output(run: Run, key: str) -> object:
    return AgentStep.objects.get(run=run, key=key).output


def test_a_quick_run_debates_every_move_by_the_protocol_and_ranks_them_by_code() -> None:
    run = _run("quick")
    config = AgencyConfig.model_validate(run.config)
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        requests = server.request_count
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.status_message
    moves = Move.objects.filter(run=run)
    assert moves.count() == config.generated == 6
    debated = moves.filter(merged_into="")
    # Row counts prove the protocol: per move 1 + 3 + 6 x (R - 1) turns, 3 final and 3 blind score sets.
    per_move = dict(debated.annotate(n=Count("turns")).values_list("move_id", "n"))
    assert set(per_move.values()) == {1 + 3 + 6 * (config.rounds - 1)}
    for move in debated:
        phases = list(MoveScore.objects.filter(move=move).values_list("phase", flat=True))
        assert sorted(phases) == ["blind"] * 3 + ["final"] * 3
    # The two personas' high-risk acquisitions are one move: 6 generated, 5 debated, both personas credited.
    merged = moves.exclude(merged_into="")
    assert merged.count() == 1
    kept = moves.get(move_id=merged.get().merged_into)
    assert set(kept.credited) == {"capital", "competition"}
    assert AgentStep.objects.get(run=run, key=f"debate-{merged.get().move_id}").status == "skipped"
    # Calls: F1, F2, two personas, per debated move 1 + 3 + 6 x (R - 1) turns and 6 scores, and the jury's
    # two threads on each of the three recommended moves: what the run planned once the moves were merged.
    turns_and_scores = debated.count() * (1 + 3 + 6 * (config.rounds - 1) + 6)
    assert requests == 2 + 2 + turns_and_scores + 3 * 2
    assert requests == MovesOutput.model_validate(_output(run, "moves")).planned_calls
    # Every turn row names its prompt version and the ledger call that paid for it.
    for turn in DebateTurn.objects.filter(move__run=run):
        assert turn.prompt_version >= 1 and turn.prompt_hash
        assert LLMCall.objects.filter(run=run, request_hash=turn.request_hash, outcome="ok").exists()
    # Code's ranking: totals are the sums of the rows, ranks follow totals, the top three are recommended.
    ranking = RankingOutput.model_validate(_output(run, "ranking"))
    for row in ranking.ranked:
        assert row.total == sum(
            s.total for s in MoveScore.objects.filter(move__run=run, move__move_id=row.move_id, phase="final")
        )
    assert [row.total for row in ranking.ranked] == sorted(
        (row.total for row in ranking.ranked), reverse=True
    )
    assert [row.recommended for row in ranking.ranked] == [True] * 3 + [False] * (len(ranking.ranked) - 3)
    # Round 1's critique opens every thread; board turns answer the critic's words, checked by code.
    board = DebateTurn.objects.filter(move__run=run).exclude(speaker="critic")
    assert board.exists() and all(turn.answers_found for turn in board)
    # Position changes name what moved them.
    changes = board.filter(changed=True)
    assert changes.exists() and all(turn.change_supported for turn in changes)
    # The whole result freezes as an agency version, with its own line.
    version = ArtefactVersion.objects.get(brief=run.brief, kind="agency")
    assert version.number == 1 and "Recommended next moves" in version.sections


def test_layer_zero_gathers_social_posts_and_competitors_and_marks_old_items_stale() -> None:
    run = _run("quick")
    with fake_llm():
        driver.run_inline(str(run.pk))
    gathered = SourcesOutput.model_validate(_output(run, "sources"))
    assert gathered.peers[:3] == ["DELL", "HPE", "HPQ"]  # the GICS sub-industry of AAPL in the S&P 500 list
    posts = [d for d in gathered.documents if d.kind == "social"]
    assert posts and all(d.source.startswith("stocknet") and d.published for d in posts)
    # The posts are from 2015; the figures from 2026: shown, and marked stale.
    assert all(d.stale for d in posts)
    assert any("older than the latest figure" in gap for gap in gathered.gaps)


def test_a_rerun_with_unchanged_inputs_makes_no_llm_calls_and_ranks_the_same() -> None:
    run = _run("quick")
    with fake_llm() as server:
        driver.run_inline(str(run.pk))
        first = server.request_count
        again = start_run(
            brief=run.brief, user=run.created_by, profile="quick", enqueue=False, workflow="agency"
        )
        Run.objects.filter(pk=again.pk).update(config=run.config)
        driver.run_inline(str(again.pk))
        assert server.request_count == first
    again.refresh_from_db()
    assert again.status == Run.Status.DONE
    assert _output(again, "ranking") == _output(run, "ranking")


def test_agency_writes_the_documents_the_threads_and_the_scores(tmp_path: Path) -> None:
    load_desk_data("AAPL")
    analyst("analyst")
    out = tmp_path / "out"
    stdout = StringIO()
    with fake_llm():
        call_command("agency", "AAPL", "--inline", "--out", str(out), stdout=stdout)
    printed = stdout.getvalue()
    assert "3 moves generated, 3 debated" in printed  # the quick profile: one persona's three moves
    assert (out / "F1.md").is_file() and (out / "F2.md").is_file() and (out / "ranking.md").is_file()
    assert sorted(p.name for p in out.glob("m*.md")) == ["m1.md", "m2.md", "m3.md"]
    scores = json.loads((out / "scores.json").read_text())["moves"]
    assert [m["rank"] for m in scores] == [1, 2, 3]
    first = scores[0]
    assert set(first) == {"id", "persona", "risk", "scores", "total", "rank"}
    assert set(first["scores"]) == {"d1", "d2", "d3"}
    assert first["total"] == sum(sum(metrics.values()) for metrics in first["scores"].values())
    thread = json.loads((out / "threads" / first["id"] / "i2.json").read_text())
    assert [(turn["round"], turn["speaker"]) for turn in thread] == [
        (1, "critic"),
        (1, "d2"),
        (2, "critic"),
        (2, "d2"),
    ]
    assert all(turn["text"] for turn in thread)


def test_agency_refuses_bad_input_with_exit_2() -> None:
    analyst("analyst")
    stderr = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("agency", "NOPE", "--inline", stderr=stderr)
    assert exit_.value.code == 2
    assert stderr.getvalue().startswith("agency: ") and len(stderr.getvalue().strip().splitlines()) == 1
    assert not Run.objects.exists()


def test_an_agency_run_sizes_its_token_budget_from_its_calls() -> None:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    budgeted = settings.LLM_SETTINGS.model_copy(update={"run_budget_tokens": 250_000})
    with override_settings(LLM_SETTINGS=budgeted):
        run = start_run(brief=brief, user=user, profile="full", enqueue=False, workflow="agency")
    config = AgencyConfig.model_validate(run.config)
    # A full run makes about 900 calls: the desk's default budget (250,000 tokens) would stop it half-way.
    assert config.calls() > 900 and run.budget_tokens == config.budget_tokens() > 2_000_000


def test_a_run_whose_board_scores_on_the_analysts_family_is_refused_when_the_setting_asks() -> None:
    load_desk_data("AAPL")
    user = analyst()
    brief = create_brief(owner=user, ticker="AAPL", question=QUESTION)
    llm = settings.LLM_SETTINGS
    judge = llm.default.model_copy(update={"model": "fake-judge"})
    with fake_llm(), changed("memos.pipeline.agency", require_separate_judge=True):
        with pytest.raises(ServiceError, match="AGENCY_REQUIRE_SEPARATE_JUDGE") as refused:
            start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="agency")
        assert "Same family as the work it judges: the board's scores" in str(refused.value)
        assert not Run.objects.exists()
        # The board's scores on a model of another family, the jury still on the analysts': still refused.
        scoring = llm.model_copy(update={"roles": {**llm.roles, "scoring": judge}})
        with override_settings(LLM_SETTINGS=scoring), pytest.raises(ServiceError) as refused:
            start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="agency")
        assert "the jury's verdicts" in str(refused.value) and "board's scores" not in str(refused.value)
        # Both verdicts on a model of another family: the run starts.
        both = llm.model_copy(update={"roles": {**llm.roles, "scoring": judge, "jury": judge}})
        with override_settings(LLM_SETTINGS=both):
            run = start_run(brief=brief, user=user, profile="quick", enqueue=False, workflow="agency")
    assert run.status == Run.Status.QUEUED


class BreakOneDebate:
    """The critic's opening for the first move asked about comes back broken (it fits no schema), its re-ask
    too; every other move's debate gets the canned answers."""

    def __init__(self) -> None:
        self.target = ""

    def __call__(self, schema: dict[str, object], messages: list[dict[str, object]]) -> object:
        asked = str(messages[1].get("content", "")) if len(messages) > 1 else ""
        self.target = self.target or asked
        return {"broken": True} if asked == self.target else None


def test_a_move_whose_debate_failed_is_listed_as_not_debated_and_the_run_needs_review(
    tmp_path: Path,
) -> None:
    load_desk_data("AAPL")
    analyst("analyst")
    out = tmp_path / "out"
    stdout = StringIO()
    with (
        fake_llm({"agency_critic_opening": [BreakOneDebate()] * 20}),
        pytest.raises(SystemExit) as ended,
    ):
        call_command("agency", "AAPL", "--inline", "--out", str(out), stdout=stdout, stderr=StringIO())
    assert ended.value.code == 3  # needs review: a person looks before anyone relies on it
    run = Run.objects.get()
    assert run.status == Run.Status.NEEDS_REVIEW
    whole = json.loads((out / "scores.json").read_text())
    assert whole["status"] == "needs_review"
    [missing] = whole["not_debated"]
    assert missing["id"] in {"m1", "m2", "m3"} and "schema" in missing["reason"]
    assert sorted(m["id"] for m in whole["moves"]) == sorted({"m1", "m2", "m3"} - {missing["id"]})
    [part] = whole["unfinished"]
    assert part["step"].startswith(f"{missing['id']} · ") and "schema" in part["reason"]
    assert f"- {missing['id']}: " in (out / "ranking.md").read_text()
    version = ArtefactVersion.objects.get(run=run)
    assert version.partial and not Motion.objects.filter(version=version).exists()
    assert "Moves not debated" in version.sections and missing["id"] in version.sections["Moves not debated"]
    assert version.content["not_debated"] == whole["not_debated"]


def _long_card(schema: dict[str, object], messages: list[dict[str, object]]) -> object:
    """A board member's card whose every reason runs to the length its schema's pattern admits (a decoder
    that drops ``maxLength`` beside a pattern writes such answers), well past the 200 characters of a
    reason's bound."""
    reason = ("The move answers a real need of the business. " * 9).strip()
    metric = {"score": 7, "quote": "the move", "reason": reason}
    names = ("impact", "feasibility", "risk_adjusted_return", "strategic_alignment")
    return {name: dict(metric) for name in names}


def test_score_reasons_at_their_patterns_length_never_lose_a_finished_debate() -> None:
    run = _run("quick", personas=("capital",))
    with fake_llm({f"agency_board_score_{member}": [_long_card] * 20 for member in ("d1", "d2", "d3")}):
        driver.run_inline(str(run.pk))
    run.refresh_from_db()
    # The debate summed up from the stored cards: before, a stricter read failed the stage three times.
    assert run.status == Run.Status.DONE, run.status_message
    cards = list(MoveScore.objects.filter(move__run=run).values_list("card", flat=True))
    assert cards
    for card in cards:
        for name in ("impact", "feasibility", "risk_adjusted_return", "strategic_alignment"):
            reason = card[name]["reason"]
            assert len(reason) <= 200 and reason.endswith("business.")
    assert RankingOutput.model_validate(_output(run, "ranking")).ranked
