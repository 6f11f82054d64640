"""``manage.py seed_governance``: store the prompt and rubric files as versions, idempotently.

``scripts/run.sh`` calls it on every start, after the migrations. An unchanged file changes nothing (its
content hash is already stored); a changed one becomes the next version of its name, activated unless an
admin's choice is active and still fits the code (memos.services.governance says exactly when). A malformed
file stops it with the file's name and exit code 2.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from agents.llm.errors import PromptError
from agents.rubrics import RubricError
from memos.services.governance import seed_from_files


class Command(BaseCommand):
    help = "Store the files in prompts/ and prompts/rubrics/ as prompt and rubric versions (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = seed_from_files()
        except (PromptError, RubricError) as exc:
            self.stderr.write(f"seed_governance: {exc}")
            raise SystemExit(2) from exc
        self.stdout.write(report.summary())
