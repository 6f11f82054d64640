"""``manage.py deck``: a deck run started from the command line, run inline, its best version written out
as deck.json, deck.pptx and render.pdf, and those files pass ``deck_check``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from pptx import Presentation

from memos.models import ArtefactVersion, Run
from tests.memos.deck_support import fake_deck_llm
from tests.memos.pipeline_support import analyst, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)


def test_deck_inline_writes_the_spec_the_pptx_and_the_pdf_of_the_frozen_deck(tmp_path: Path) -> None:
    load_desk_data("AAPL")
    analyst("analyst")
    out = io.StringIO()
    with fake_deck_llm():
        call_command(
            "deck", "AAPL", "--brief", "Keep the position?", "--inline", "--out", str(tmp_path), stdout=out
        )
    run = Run.objects.get(workflow="deck")
    assert run.status == Run.Status.DONE and "deck done in" in out.getvalue()
    spec = json.loads((tmp_path / "deck.json").read_text())
    version = ArtefactVersion.objects.get(run=run)
    assert spec == version.content["deck"]
    slides = len(spec["slides"])
    assert len(Presentation(str(tmp_path / "deck.pptx")).slides) == slides
    for name in ("deck.pptx", "render.pdf"):
        checked = io.StringIO()
        call_command("deck_check", str(tmp_path / name), "--json", stdout=checked)
        report = json.loads(checked.getvalue())
        assert report["ok"] and report["figures"], name


def test_bad_input_exits_2_and_starts_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    analyst("analyst")
    with pytest.raises(SystemExit) as exited:
        call_command("deck", "NOPE!", "--brief", "Keep?", "--inline")
    assert exited.value.code == 2 and "deck:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        call_command("deck", "AAPL", "--brief", "Keep?", "--profile", "huge", "--inline")
    assert exited.value.code == 2
    assert not Run.objects.exists()
