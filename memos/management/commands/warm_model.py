"""``manage.py warm_model``: read every workflow's constant prompt text into the model server on this
machine before anyone asks (agents.llm.warm); scripts/run.sh starts it once the embedded model is up.

Exit status 0 when every prompt sent was read (or none needed sending), 1 when one failed. It stops early,
with 0, once a person's run is under way: that run reads what it needs itself, and a warm-up must not take
a slot of the model server from it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from agents.llm.warm import warm
from memos.models import Run
from memos.pipeline.registry import WORKFLOWS
from memos.services.governance import current_pins


class Command(BaseCommand):
    help = "Send each workflow's constant system prompts to its role's model server on this machine."

    def handle(self, *args: Any, **options: Any) -> None:
        pins = current_pins()
        # Never saved: it only pins the versions a run started now would read.
        pinned = Run(prompt_versions=pins.prompts, rubric_versions=pins.rubrics)
        prompts = [prompt for workflow in WORKFLOWS.values() for prompt in workflow.warm_prompts(pinned)]
        failed = False
        if _a_person_is_running():
            prompts = []
            self.stdout.write("a person's run is under way: it reads its own prompts; nothing warmed")
        for warmed in warm(settings.LLM_SETTINGS, prompts):
            name, role = warmed.prompt.name, warmed.prompt.role
            if warmed.endpoint is None:
                self.stdout.write(f"{name} ({role}): not warmed, its model is not on this machine")
            elif warmed.error:
                failed = True
                self.stderr.write(f"{name} ({role}): {warmed.error}")
            else:
                self.stdout.write(f"{name} ({role}): {warmed.tokens} tokens read in {warmed.seconds:.1f} s")
            if _a_person_is_running():
                self.stdout.write("a person's run has started: it reads its own prompts; stopping here")
                break
        if failed:
            raise SystemExit(1)


def _a_person_is_running() -> bool:
    return Run.objects.filter(status__in=Run.ACTIVE_STATUSES, scheduled=False).exists()
