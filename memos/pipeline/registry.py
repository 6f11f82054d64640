"""The workflows this version of the desk can run, by the name stored in ``Run.workflow``, and what is
gathered from all of them: the brief form's choices, the fake LLM server's answers, the rubrics' contracts.

Adding a workflow is its package (``memos/pipeline/<workflow>/``, whose ``workflow`` module's ``WORKFLOW``
declares it and names its surface) and one line in ``memos.pipeline.packages.PACKAGES``; nothing else of
the desk is edited.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from agents.rubrics import Contract, RubricError, contract_problems
from memos.models import Run
from memos.pipeline.packages import PACKAGES
from memos.pipeline.prompts import rubric_files
from memos.pipeline.workflows import Workflow


def load(package: str) -> Workflow:
    """The workflow ``package`` declares (``<package>.workflow.WORKFLOW``)."""
    found = import_module(f"{package}.workflow").WORKFLOW
    if not isinstance(found, Workflow):
        raise TypeError(f"{package}.workflow.WORKFLOW is not a Workflow")
    return found


WORKFLOWS: dict[str, Workflow] = {workflow.name: workflow for workflow in map(load, PACKAGES)}


class UnknownWorkflow(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def workflow_for(name: str) -> Workflow:
    try:
        return WORKFLOWS[name]
    except KeyError:
        raise UnknownWorkflow(f"this version of the desk cannot run {name!r} workflows yet") from None


def form_choices() -> list[tuple[str, str]]:
    """(name, how the form offers it) of the workflows the brief form offers, in the order listed above."""
    return [(workflow.name, workflow.choice) for workflow in WORKFLOWS.values() if workflow.offered]


def rehearsal(run: Run) -> dict[str, list[Any]]:
    """The fake server's script for ``run``: its workflow's rehearsal, or nothing beyond canned answers."""
    found = workflow_for(run.workflow).rehearsal
    return found(run) if found is not None else {}


def fake_answers() -> tuple[str, ...]:
    """The modules of canned answers for every workflow's roles: what a fake LLM server is given to answer
    a whole run of any workflow (agents.llm.fakes.server)."""
    return tuple(workflow.fakes for workflow in WORKFLOWS.values() if workflow.fakes)


def rubric_contracts() -> dict[str, Contract]:
    """Every rubric a workflow scores with, by name, with the keys its code reads."""
    found: dict[str, Contract] = {}
    for workflow in WORKFLOWS.values():
        for name, contract in workflow.rubrics.items():
            if name in found:
                raise ValueError(f"two workflows claim the rubric {name!r}")
            found[name] = contract
    return found


def check_rubric_files() -> None:
    """At start-up: each workflow's rubric has its seed file, and the file keeps what the code reads; a
    problem stops the process naming the file (memos.apps)."""
    files = rubric_files()
    for name, contract in rubric_contracts().items():
        if name not in files:
            raise RubricError(
                f"no rubric file in prompts/rubrics/ is named {name!r}; a workflow scores with it"
            )
        path, rubric, _ = files[name]
        problems = contract_problems(rubric, contract)
        if problems:
            raise RubricError(f"{path}: " + "; ".join(problems))
