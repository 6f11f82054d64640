"""The prompt files in ``prompts/``, loaded and validated once per process (at start-up, by the app config).

A malformed file, an unknown output schema or a duplicate name stops start-up with a message naming the file,
instead of failing in the middle of a run. Kept apart from the gateway so loading prompts never imports
``openai``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings

from agents.llm.prompts import PromptTemplate, load_prompt_dir


def prompt_dir() -> Path:
    return Path(settings.BASE_DIR) / "prompts"


@lru_cache(maxsize=1)
def templates() -> dict[str, PromptTemplate]:
    return load_prompt_dir(prompt_dir())


def template(name: str) -> PromptTemplate:
    return templates()[name]
