"""The screen's model prose as a reader gets it: agents.text.shown's rules (a typed figure, a hole where a
figure was barred, another script: the sentence withheld), and one more the screen's embedded runs needed: a
sentence with a word that is no figure in a figure's place ("the market's alpha was ouch") is withheld too,
with code's reason (agents.text.slots)."""

from __future__ import annotations

from agents.text.scripts import Language
from agents.text.sentences import sentences
from agents.text.shown import Shown, shown
from agents.text.slots import FILLER, filler_word


def screen_shown(text: str, known: frozenset[str], *, language: Language | None = None) -> Shown:
    kept: list[str] = []
    fillers = 0
    for sentence in sentences(text):
        if filler_word(sentence):
            fillers += 1
            continue
        kept.append(sentence.strip())
    said = shown(" ".join(part for part in kept if part), known, language=language)
    if not fillers:
        return said
    count = "a sentence" if fillers == 1 else f"{fillers} sentences"
    note = f"Code withheld {count}: {FILLER}."
    return Shown(said.text, f"{said.note} {note}".strip(), said.withheld + fillers)
