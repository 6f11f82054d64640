"""Prompts and rubrics governed as versions: seeding from files, checked edits, activation, a run's pins.

- ``seed_from_files`` (``manage.py seed_governance``, run by ``scripts/run.sh`` at every start) stores each
  file of ``prompts/`` and ``prompts/rubrics/`` as a version, idempotently: an unchanged file is found by its
  content hash and nothing is written; version 1's hash is the file's. A changed file becomes the next version
  of its name. It is activated when the files still rule that name (the active version was chosen by the
  seeder, not by a person) or when the active version no longer fits the code (a placeholder, the output
  schema, a rubric key the code reads changed with the file); otherwise an admin's choice stays active, the
  file's version is stored inactive, and the command says so, for the admin to review and activate.
- ``propose_prompt`` / ``propose_rubric`` (the admin's "save") make the next version from an edited one, or
  refuse with every problem named: broken front matter, a placeholder dropped or added, a placeholder moved
  into the system section, a rubric term the prompt-content tests require gone, rubric weights that do not
  sum to 1, a rubric key the code reads gone.
  The parsers are the ones the pipeline uses (agents.llm.prompts, agents.rubrics): one parser decides.
- ``activate`` switches a name's active version in one transaction (the partial unique constraint
  ``one_active_*_version_per_name`` refuses a second active one).
- ``current_pins`` is what memos.services.runs.start_run stores on a new run; ``pinned_versions`` names them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from agents.llm.errors import PromptError
from agents.llm.hashing import sha256_hex
from agents.llm.prompts import PromptTemplate, parse_prompt
from agents.memo.prompt_terms import missing_terms
from agents.rubrics import Rubric, RubricError, parse_rubric, shape
from memos.models import PromptVersion, RubricVersion, Run
from memos.models.governance import GovernedVersion
from memos.pipeline.prompts import prompt_dir, rubric_dir, rubric_files, templates
from memos.pipeline.registry import rubric_contracts
from memos.services.errors import ServiceError

V = TypeVar("V", bound=GovernedVersion)
Source = GovernedVersion.Source

PROMPT, RUBRIC = "prompt", "rubric"


# --- checks: what makes a version unusable, each problem in words


def normalised(content: str) -> str:
    """Text from a browser's textarea as a file would hold it: LF line ends, one final newline."""
    return content.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n") + "\n"


def prompt_problems(name: str, content: str) -> list[str]:
    """Why ``content`` cannot be a version of prompt ``name`` (empty when it can). The reference for what
    the code fills and reads is the prompt file the running code shipped with."""
    try:
        parsed = parse_prompt(content.encode("utf-8"), origin=Path(f"prompt {name}"))
    except PromptError as exc:
        return [str(exc)]
    problems: list[str] = []
    if parsed.name != name:
        problems.append(f"the front matter's name is {parsed.name!r}; a version of {name!r} keeps that name")
    reference = templates().get(name)
    if reference is not None:
        dropped = sorted(reference.placeholders - parsed.placeholders)
        added = sorted(parsed.placeholders - reference.placeholders)
        if dropped:
            problems.append(
                f"placeholder(s) {_braced(dropped)} dropped: the code fills them, and the model would "
                "not see what they carry"
            )
        if added:
            problems.append(
                f"placeholder(s) {_braced(added)} added: the code does not fill them, so every call "
                "would fail"
            )
        moved = sorted(into_system(reference, parsed))
        if moved:
            problems.append(
                f"placeholder(s) {_braced(moved)} moved into the system section: the prompt file keeps them "
                "in the user section, where the code may fill them with untrusted text (documents, model "
                "output, the analyst's words) inside a fence; the system section is read as the desk's own "
                "instructions and takes only the placeholders the file puts there"
            )
        if parsed.front.output_schema != reference.front.output_schema:
            problems.append(
                f"output_schema changed from {reference.front.output_schema!r}: the code reads that type"
            )
    missing = missing_terms(name, content)
    if missing:
        problems.append(
            "rubric term(s) the prompt-content tests require are gone: " + ", ".join(repr(t) for t in missing)
        )
    return problems


def into_system(reference: PromptTemplate, edited: PromptTemplate) -> frozenset[str]:
    """Placeholders ``edited`` puts in its system section that the shipped file does not. Which of a
    prompt's values are untrusted is decided where the code renders it (the ``untrusted`` mapping of
    PromptTemplate.render), and render refuses one in the system section only when a run is already under
    way; every untrusted one sits in the file's user section (the file's own render would fail otherwise),
    so keeping the system section to the file's placeholders refuses the edit when it is saved, before a
    run can pin it."""
    return edited.system_placeholders - reference.system_placeholders


def rubric_problems(name: str, content: str) -> list[str]:
    """Why ``content`` cannot be a version of rubric ``name``: YAML or schema errors, weights not summing to
    1, anchors off the scale, and keys the code reads (its workflow's contract, or else the seed file's keys)
    gone."""
    contract = rubric_contracts().get(name)
    try:
        parsed = parse_rubric(content.encode("utf-8"), origin=f"rubric {name}", contract=contract)
    except RubricError as exc:
        return [str(exc)]
    problems: list[str] = []
    if parsed.name != name:
        problems.append(f"the rubric's name is {parsed.name!r}; a version of {name!r} keeps that name")
    on_disk = rubric_files().get(name)
    if contract is None and on_disk is not None and shape(on_disk[1]) != shape(parsed):
        problems.append(
            "its objectives, dimensions, gates or threshold names differ from the rubric file's; "
            "retune weights, anchors and values, but keep the keys"
        )
    return problems


def _braced(names: Iterable[str]) -> str:
    return ", ".join(f"{{{n}}}" for n in names)


# --- edits and activation


def propose_prompt(*, base: PromptVersion, content: str, user: User, note: str = "") -> PromptVersion:
    """The next version of ``base``'s prompt with ``content`` (inactive), or ServiceError naming every
    problem. ``base`` itself never changes."""
    return _propose(PromptVersion, base, normalised(content), user=user, note=note)


def propose_rubric(
    *,
    base: RubricVersion,
    content: str,
    user: User,
    note: str = "",
    model_written_anchors: Iterable[str] = (),
) -> RubricVersion:
    """The next version of ``base``'s rubric, like propose_prompt. ``model_written_anchors`` names the
    dimensions whose anchor at 5 a model wrote (memos.pipeline.deck.desk.rubric_proposals adopting a run's
    proposal); an admin's save names none, and from then on every word of the version is the admin's."""
    text = normalised(content)

    def derived() -> dict[str, Any]:
        rubric = parse_rubric(text.encode("utf-8"), origin=f"rubric {base.name}")
        keys = {d.key for objective in rubric.objectives for d in objective.dimensions}
        return {
            "data": rubric_data(rubric),
            "model_written_anchors": sorted(set(model_written_anchors) & keys),
        }

    return _propose(RubricVersion, base, text, user=user, note=note, extra=derived)


def edit_problems(base: GovernedVersion, content: str) -> list[str]:
    """What the admin's form shows before saving: the checks, plus an edit that changes nothing."""
    text = normalised(content)
    check = prompt_problems if isinstance(base, PromptVersion) else rubric_problems
    problems = check(base.name, text)
    same = type(base)._default_manager.filter(name=base.name, content_hash=_hash(text)).first()
    if same is not None:
        problems.append(
            f"nothing changed: this is the content of version {same.version}"
            + ("" if same.pk == base.pk else "; activate that version instead of saving a copy")
        )
    return problems


def _propose(
    model: type[V],
    base: V,
    content: str,
    *,
    user: User,
    note: str,
    extra: Callable[[], dict[str, Any]] | None = None,
) -> V:
    problems = edit_problems(base, content)
    if problems:
        raise ServiceError(f"{base.name}: " + "; ".join(problems))
    with transaction.atomic():
        _lock_name(model, base.name)
        return model._default_manager.create(
            name=base.name,
            version=_next_number(model, base.name),
            content=content,
            content_hash=_hash(content),
            source=Source.ADMIN,
            note=note.strip()[:300],
            based_on=base,
            created_by=user,
            **(extra() if extra else {}),
        )


def activate(*, version: GovernedVersion, user: User | None) -> bool:
    """Make ``version`` the one active version of its name (False when it already was). Refused with the
    problems when it no longer fits the code (a version from before a code change)."""
    check = prompt_problems if isinstance(version, PromptVersion) else rubric_problems
    problems = check(version.name, version.content)
    if problems:
        raise ServiceError(f"{version}: cannot be activated: " + "; ".join(problems))
    model = type(version)
    with transaction.atomic():
        _lock_name(model, version.name)
        return _switch(model, version, user=user)


def _switch(model: type[GovernedVersion], version: GovernedVersion, *, user: User | None) -> bool:
    rows = model._default_manager.filter(name=version.name)
    if rows.filter(pk=version.pk, is_active=True).exists():
        return False
    # The old one first: the partial unique index allows one active row per name at every moment.
    rows.filter(is_active=True).update(is_active=False)
    rows.filter(pk=version.pk).update(is_active=True, activated_at=timezone.now(), activated_by=user)
    version.is_active = True
    return True


def _lock_name(model: type[GovernedVersion], name: str) -> None:
    """Serialise everything that numbers or activates versions of one name (seeding, edits, activation)
    until the transaction ends: two at once would pick the same number or both activate."""
    key = int.from_bytes(
        hashlib.sha256(f"{model._meta.label}:{name}".encode()).digest()[:8], "big", signed=True
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _next_number(model: type[GovernedVersion], name: str) -> int:
    latest = model._default_manager.filter(name=name).order_by("-version").values_list("version", flat=True)
    return (latest.first() or 0) + 1


def _hash(content: str) -> str:
    return sha256_hex(content.encode("utf-8"))


def rubric_data(rubric: Rubric) -> dict[str, Any]:
    data: dict[str, Any] = rubric.model_dump(mode="json")
    return data


# --- seeding from the files


@dataclass(frozen=True)
class SeedLine:
    kind: str
    name: str
    version: int
    outcome: str  # unchanged | created | activated | kept
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: v{self.version} {self.outcome}" + (
            f" ({self.detail})" if self.detail else ""
        )


@dataclass
class SeedReport:
    lines: list[SeedLine] = field(default_factory=list)

    @property
    def changed(self) -> list[SeedLine]:
        return [line for line in self.lines if line.outcome != "unchanged"]

    def summary(self) -> str:
        unchanged = len(self.lines) - len(self.changed)
        head = f"prompts and rubrics: {len(self.lines)} files, {unchanged} unchanged"
        return "\n".join([head, *(f"  {line}" for line in self.changed)])


def seed_from_files() -> SeedReport:
    """Store every prompt and rubric file as a version (see the module's docstring for what a changed file
    does). Reads the files now, not the copies parsed at start-up: the command runs after a deploy."""
    report = SeedReport()
    for path in sorted(prompt_dir().glob("*.md")):
        raw = path.read_bytes()
        parsed = parse_prompt(raw, origin=path)  # a malformed file stops the seeding, naming the file
        report.lines.append(
            _seed_one(
                PromptVersion, kind=PROMPT, name=parsed.name, raw=raw, path=path, fits=_prompt_fits(parsed)
            )
        )
    for path in sorted(rubric_dir().glob("*.yaml")):
        raw = path.read_bytes()
        rubric = parse_rubric(raw, origin=str(path))
        report.lines.append(
            _seed_one(
                RubricVersion,
                kind=RUBRIC,
                name=rubric.name,
                raw=raw,
                path=path,
                fits=_rubric_fits(rubric),
                extra={"data": rubric_data(rubric)},
            )
        )
    return report


def _prompt_fits(on_disk: PromptTemplate) -> Callable[[str], list[str]]:
    def problems(content: str) -> list[str]:
        try:
            active = parse_prompt(content.encode("utf-8"), origin=Path(f"prompt {on_disk.name}"))
        except PromptError as exc:
            return [str(exc)]
        found = []
        if active.placeholders != on_disk.placeholders:
            found.append("its placeholders differ from the file's")
        if into_system(on_disk, active):
            found.append("it moved a placeholder into the system section")
        if active.front.output_schema != on_disk.front.output_schema:
            found.append("its output_schema differs from the file's")
        return found

    return problems


def _rubric_fits(on_disk: Rubric) -> Callable[[str], list[str]]:
    def problems(content: str) -> list[str]:
        try:
            active = parse_rubric(content.encode("utf-8"), origin=f"rubric {on_disk.name}")
        except RubricError as exc:
            return [str(exc)]
        return [] if shape(active) == shape(on_disk) else ["its keys differ from the file's"]

    return problems


def _seed_one(
    model: type[GovernedVersion],
    *,
    kind: str,
    name: str,
    raw: bytes,
    path: Path,
    fits: Callable[[str], list[str]],
    extra: dict[str, Any] | None = None,
) -> SeedLine:
    digest = sha256_hex(raw)
    with transaction.atomic():
        _lock_name(model, name)
        rows = model._default_manager.filter(name=name)
        target = rows.filter(content_hash=digest).first()
        outcome = "unchanged"
        if target is None:
            target = model._default_manager.create(
                name=name,
                version=_next_number(model, name),
                content=raw.decode("utf-8"),
                content_hash=digest,
                source=Source.FILE,
                source_path=_relative(path),
                **(extra or {}),
            )
            outcome = "created"
        active = rows.filter(is_active=True).first()
        if active is not None and active.pk == target.pk:
            return SeedLine(kind, name, target.version, outcome)
        if active is None or active.activated_by_id is None:
            _switch(model, target, user=None)
            return SeedLine(kind, name, target.version, "activated", "the file's version")
        misfits = fits(active.content)
        if misfits:
            _switch(model, target, user=None)
            return SeedLine(
                kind,
                name,
                target.version,
                "activated",
                f"replaces v{active.version}, chosen in the admin, which no longer fits the code: "
                + "; ".join(misfits),
            )
        if outcome == "unchanged":
            return SeedLine(kind, name, target.version, outcome)
        return SeedLine(
            kind,
            name,
            target.version,
            "kept",
            f"stored inactive: v{active.version}, chosen in the admin, stays active; review the file's "
            "version and activate it in the admin",
        )


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path)


# --- a run's pins


@dataclass(frozen=True)
class Pins:
    prompts: dict[str, dict[str, Any]]
    rubrics: dict[str, dict[str, Any]]


def current_pins() -> Pins:
    """The active version of every prompt and rubric, as a run stores them: {name: {version, hash, id}}.
    Seeds from the files first when a file's name has no version yet (a fresh database, a new file)."""
    pins = _active_pins()
    if set(templates()) - pins.prompts.keys() or set(rubric_files()) - pins.rubrics.keys():
        with transaction.atomic():
            seed_from_files()
        pins = _active_pins()
    return pins


def _active_pins() -> Pins:
    def of(model: type[GovernedVersion]) -> dict[str, dict[str, Any]]:
        rows = model._default_manager.filter(is_active=True).values_list(
            "name", "version", "content_hash", "pk"
        )
        return {name: {"version": n, "hash": digest, "id": pk} for name, n, digest, pk in rows}

    return Pins(prompts=of(PromptVersion), rubrics=of(RubricVersion))


@dataclass(frozen=True)
class PinnedVersion:
    kind: str  # "prompt" or "rubric"
    name: str
    version: int
    content_hash: str

    @property
    def short_hash(self) -> str:
        return self.content_hash[:12]


def pinned_versions(run: Run) -> list[PinnedVersion]:
    """The prompt and rubric versions ``run`` started with (what a version page names), rubrics first; no
    query. A run from before versions were pinned has none."""
    found: list[PinnedVersion] = []
    for kind, pins in ((RUBRIC, run.rubric_versions), (PROMPT, run.prompt_versions)):
        for name, pin in sorted((pins or {}).items()):
            if isinstance(pin, dict) and isinstance(pin.get("hash"), str):
                found.append(PinnedVersion(kind, name, int(pin.get("version") or 0), pin["hash"]))
    return found
