"""The screen's model prose as a reader gets it (agents.text.shown): a sentence that types a figure, or leaves
a figure's place empty or repeats a word over and over (agents.text.blanks: what the embedded model did when
barred from typing digits), is withheld whole, with code's one line on why."""

from __future__ import annotations

from agents.text.blanks import blank_problem
from agents.text.figures import Ids
from agents.text.shown import Shown, shown


def said(text: str, known_ids: Ids) -> Shown:
    return shown(text, known_ids, unusable=blank_problem)
