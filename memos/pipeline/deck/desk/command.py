"""``manage.py deck TICKER --brief "..." [--profile quick|full] [--wait | --inline] [--out DIR]``.

Starts a C-suite deck run (seed 001) on a brief, printing the run's URL. ``--wait`` follows the RQ worker;
``--inline`` runs every stage in this process. ``--out DIR`` writes the best version's ``deck.json`` (the
spec), ``deck.pptx`` and ``render.pdf``. Exit status 0 when the deck is done, 3 when it was escalated (it
needs review), 1 when the run failed (with its reason), 2 for bad input (memos.management.run_command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.deck.outputs import DeckOutput
from agents.deck.render.embedded import deck_json
from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from memos.management.run_command import RunCommand
from memos.models import AgentStep, Run
from memos.pipeline.deck.plan import NAME as DECK


class DeckCommand(RunCommand):
    help = "Start a C-suite deck run for a ticker and a brief; print its URL (and wait for it)."
    workflow = DECK
    default_profile = "quick"
    writes_out = "deck.json, deck.pptx and render.pdf"

    def finish(self, run: Run, seconds: float, options: dict[str, Any]) -> None:
        raw = (
            AgentStep.objects.filter(run=run, kind="deck", status="done")
            .values_list("output", flat=True)
            .first()
        )
        if raw is None:
            self.stderr.write(f"deck: run {run.status} without a deck: {run.status_message}")
            raise SystemExit(1)
        output = DeckOutput.model_validate(raw)
        self.stdout.write(f"deck done in {seconds:.1f} s: {run.status_message}")
        out: Path | None = options["out"]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "deck.json").write_bytes(deck_json(output.deck))
            (out / "deck.pptx").write_bytes(render_pptx(output.deck))
            (out / "render.pdf").write_bytes(render_pdf(output.deck).pdf)
            self.stdout.write(f"wrote {out / 'deck.json'}, {out / 'deck.pptx'} and {out / 'render.pdf'}")
        # An escalated deck ends its run needing review: the command exits 3 (memos.management.run_command).
