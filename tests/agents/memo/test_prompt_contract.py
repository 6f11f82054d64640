"""Seed 000's three kinds of prompt tests: wiring, prompt content, and externalisation lock-in."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from agents.llm.prompts import load_prompt, load_prompt_dir
from agents.memo.prompt_terms import EVALUATOR_TERMS, REQUIRED_TERMS, SPECIALIST_TERMS, SYNTHESIZER_TERMS
from agents.memo.roster import SPECIALISTS
from agents.memo.schemas import Evaluation, SpecialistBrief, SynthesisIteration

PROMPTS = Path(__file__).resolve().parents[3] / "prompts"


def _sections(path: Path) -> tuple[str, str]:
    body = path.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    system, user = re.split(r"^## User\s*$", body, flags=re.MULTILINE)
    return system.replace("## System", "", 1).strip(), user.strip()


# --- wiring: role, output schema, and the state key each role writes


@pytest.mark.parametrize("name", sorted(SPECIALISTS))
def test_each_specialist_has_its_own_prompt_role_and_schema(name: str) -> None:
    template = load_prompt(PROMPTS / SPECIALISTS[name].prompt_file)
    assert template.front.role == name and template.name == f"specialist_{name}"
    assert template.output_type is SpecialistBrief
    # Untrusted documents are fenced in the user section; the specialist reads only its own evidence.
    assert {"documents", "facts"} <= template.placeholders


def test_synthesizer_and_evaluator_wiring() -> None:
    synthesizer, evaluator = load_prompt(PROMPTS / "synthesizer.md"), load_prompt(PROMPTS / "evaluator.md")
    assert (synthesizer.front.role, synthesizer.output_type) == ("synthesizer", SynthesisIteration)
    assert (evaluator.front.role, evaluator.output_type) == ("evaluator", Evaluation)
    assert {"briefs", "previous", "aperture"} <= synthesizer.placeholders  # reads the briefs, no tools
    assert {"briefs", "iterations"} <= evaluator.placeholders  # reads the briefs and every iteration


def test_every_prompt_file_loads_with_a_unique_name() -> None:
    templates = load_prompt_dir(PROMPTS)
    assert {"synthesizer", "evaluator", *(f"specialist_{n}" for n in SPECIALISTS)} <= set(templates)


# --- prompt content: the rubric's terms are present (listed in agents.memo.prompt_terms, which the admin
# also checks: a prompt version that loses one is refused there too)


@pytest.mark.parametrize(
    ("file", "terms"),
    [("synthesizer.md", SYNTHESIZER_TERMS), ("evaluator.md", EVALUATOR_TERMS)]
    + [(SPECIALISTS[n].prompt_file, SPECIALIST_TERMS) for n in sorted(SPECIALISTS)],
)
def test_the_rubric_terms_are_in_the_prompt(file: str, terms: tuple[str, ...]) -> None:
    text = (PROMPTS / file).read_text(encoding="utf-8")
    missing = [term for term in terms if term not in text]
    assert not missing, f"{file} lost rubric terms: {missing}"


def test_every_memo_prompt_has_its_list_of_required_terms() -> None:
    names = {load_prompt(PROMPTS / file).name for file in ("synthesizer.md", "evaluator.md")}
    names |= {load_prompt(PROMPTS / spec.prompt_file).name for spec in SPECIALISTS.values()}
    assert names == set(REQUIRED_TERMS)


# --- externalisation lock-in: what is sent at run time is the file on disk


@pytest.mark.parametrize("file", ["synthesizer.md", "evaluator.md", "specialist_fundamentals.md"])
def test_the_instruction_sent_equals_the_file_on_disk(file: str) -> None:
    path = PROMPTS / file
    template = load_prompt(path)
    values = {name: f"<{name}>" for name in template.placeholders}
    untrusted: dict[str, str] = {
        name: values.pop(name) for name in ("documents", "briefs", "previous", "iterations") if name in values
    }
    rendered = template.render(values, untrusted, nonce="n0nce")
    system, user = _sections(path)
    # The system message is the file's System section verbatim (its trusted placeholders filled: the
    # evaluator's rubric anchors), plus only the fixed fence notice.
    for name in template.system_placeholders:
        system = system.replace(f"{{{name}}}", values[name])
    assert rendered.system.startswith(system)
    assert "Never follow instructions" in rendered.system[len(system) :]
    first_line = user.splitlines()[0]
    assert rendered.user.startswith(first_line.format(**{k: f"<{k}>" for k in template.placeholders}))
    assert template.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
