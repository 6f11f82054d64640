"""What the desk around the run engine knows of a workflow, declared once, in the workflow's own package.

The engine reads a workflow's ``Workflow`` declaration (memos.pipeline.workflows): its stages, steps, profiles
and what it freezes. Everything else the desk does with the workflow is its ``Surface``, in the module that
``Workflow.surface`` names (``memos.pipeline.<workflow>.desk``): the pages of its steps, its part of a
version's page, the files frozen with a version, the export's changelog, its own URLs, what the scheduler's
tick starts and its command line. Shared code (the run and version pages, freezing, downloads, the export,
the scheduler, ``manage.py run``) reads these declarations and names no workflow; a workflow that declares
nothing still gets every page and file: each field's default is what any workflow may show.

The engine never imports a surface (it names it by a string, as Django names an app), and a surface module
is never imported by another workflow's package (tests/test_dependency_rule.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from memos.models import AgentStep, ArtefactVersion, Company, Run
from memos.pipeline.composition import WeekPart
from memos.services.home_rows import HomeAction, Schedules
from memos.services.refs import Refs

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.management.base import BaseCommand
    from django.urls import URLPattern

    from memos.pipeline.workflows import Workflow

RENDER_PDF = "render.pdf"
PDF = "application/pdf"
Place = Literal["top", "above", "below"]


# A step's document: the kind's output, the step, the ids it cites resolved, -> what its template reads.
DocumentBuilder = Callable[[Any, AgentStep, Refs], dict[str, Any]]
# A document that grows while its step runs (a debate's threads, turn by turn): the ids it cites so far, and
# the context built once those are resolved.
GrowingDocument = Callable[[AgentStep], tuple[set[str], Callable[[Refs], dict[str, Any]]]]


def output_alone(output: Any, step: AgentStep, refs: Refs) -> dict[str, Any]:
    """A step document whose template needs its typed output and nothing else."""
    return {"output": output}


def no_evidence(run: Run) -> set[str]:
    return set()


@dataclass(frozen=True)
class StepPages:
    """A finished step's page: its kind's template (``Workflow.kinds``) given the typed output, and whatever a
    builder adds; a kind with no builder gets its output alone, so no finished step is ever "not written"."""

    builders: Mapping[str, DocumentBuilder] = field(default_factory=dict)
    growing: Mapping[str, GrowingDocument] = field(default_factory=dict)
    # The ids a run was shown as evidence: the only ones its documents resolve to linked figures (an id a
    # model picked from elsewhere in the fact store shows as unresolved, never as vouched for).
    evidence: Callable[[Run], set[str]] = no_evidence
    # Why a reader may not see the evaluator's scores in the documents of the workflow's ``sealed_kinds``
    # yet ("" when they may): a deck's judge, hidden from a committee member who has not scored its deck.
    sealed: Callable[[User, Run], str] | None = None

    def builder(self, kind: str) -> DocumentBuilder:
        return self.builders.get(kind, output_alone)


@dataclass(frozen=True)
class Panel:
    """A part of a version's page that depends on who reads it (a schedule's form, a scoring form, drift
    against the version before that reader may see). Never printed: a version's PDF is the same for all."""

    template: str
    # (reader, version, the version before it that the reader may see) -> the template's context, or None
    # when the panel is not for this reader or this version.
    context: Callable[[User, ArtefactVersion, ArtefactVersion | None], dict[str, Any] | None]
    # Where it goes: "top" above the review panel, "above" between the review and the artefact, "below"
    # under the sources.
    place: Place = "above"


def nothing_more(version: ArtefactVersion) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class VersionPage:
    """A frozen version of this workflow on its page and in its printed PDF."""

    # The artefact as frozen; it gets ``version``, ``sections`` (the text, section by section, with its
    # references resolved), ``sources`` and what ``context`` adds.
    template: str = "memos/versions/_sections.html"
    # What the template (and ``banner``) read of the frozen version: the same for every reader, so it is
    # printed too. It reads the version's frozen content only, never the run's rows.
    context: Callable[[ArtefactVersion], dict[str, Any]] = nothing_more
    banner: str = ""  # a template shown under the version's header, printed too (a deck's escalation)
    downloads: str = "memos/versions/_downloads.html"  # its download links in the header
    panels: Sequence[Panel] = ()
    script: str = ""  # a static script the page needs beyond the live updates (the deck's viewer)
    # What the page adds from its query string, given what it built so far (the screen's selected symbol).
    query: Callable[[Mapping[str, str], dict[str, Any]], dict[str, Any]] = lambda query, context: {}
    # Why a reader may not see the evaluator's scores of a version yet ("" when they may): a deck's judge is
    # hidden from a committee member until they have scored the deck. None: every reader sees them.
    sealed: Callable[[User, ArtefactVersion], str] | None = None
    # What an e-mail about a version says beyond its header, one paragraph each (the week's digest, section
    # by section); nothing by default.
    mail: Callable[[ArtefactVersion], list[str]] = lambda version: []


@dataclass(frozen=True)
class Rendered:
    name: str
    content_type: str
    body: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()


@dataclass(frozen=True)
class ToPrint:
    """A PDF to print from HTML made now, at the freeze, from the version alone: its HTML is kept with the
    version and printed off the run's path, right after the freeze commits (memos.services.version_files),
    so the print shows what was frozen however late it comes."""

    name: str
    html: str
    base_url: str | None  # the app's own origin its /static/ links resolve against; None: inline styles
    static: bool = True  # whether the app's static files may be read for it (never anything else)

    content_type = PDF


@dataclass(frozen=True)
class FrozenFile:
    """One file frozen with every version of the workflow: rendered once, when it is frozen, and served as
    those bytes for good (memos.services.version_files)."""

    name: str  # its name in the version (the export's folder, the download URL)
    label: str  # the download link's words
    # The file name a download suggests, from the version's stem ("AAPL-v2").
    filename: Callable[[ArtefactVersion, str], str]


def dated_pdf(version: ArtefactVersion, stem: str) -> str:
    return f"{stem}-{version.content_hash[:8]}.pdf"


PRINTED_PAGE = FrozenFile(RENDER_PDF, "Download PDF", dated_pdf)


@dataclass(frozen=True)
class Files:
    files: Sequence[FrozenFile] = (PRINTED_PAGE,)
    # Every file of ``files``, rendered now from the version alone (it may be one freezing has prepared and
    # not stored yet): no database read but the version's brief and company, which the caller has loaded.
    # A PDF may come as the HTML to print it from (``ToPrint``): printed off the run's path. None: the
    # printed page alone (memos.services.printing), which is ``files``' default.
    render: Callable[[ArtefactVersion], list[Rendered | ToPrint]] | None = None
    # Whether they are all made after the freeze commits, from the frozen version, on this process's printer
    # thread (memos.services.version_files) rather than on the run's path before it: for files that take
    # long to render and are large to store (a screen's report, a megabyte rendered in 90 ms and stored
    # twice, as itself and as the HTML its PDF is printed from). A reader who asks first has them made then.
    after_freeze: bool = False


@dataclass(frozen=True)
class Export:
    """What ``manage.py export_versions`` writes beyond what every version has
    (memos.services.version_export)."""

    # The loop that made the version, one object per lap or iteration: ``changelog.jsonl``.
    changelog: Callable[[ArtefactVersion], list[dict[str, Any]]] = lambda version: []


# What the scheduler's tick does for a workflow at ``now``: a line per run it started or refused.
Tick = Callable[[datetime], list[str]]


@dataclass(frozen=True)
class Surface:
    steps: StepPages = field(default_factory=StepPages)
    version: VersionPage = field(default_factory=VersionPage)
    files: Files = field(default_factory=Files)
    export: Export = field(default_factory=Export)
    # Its own pages and actions (a deck's slides, a schedule's form), added to the site's URLs.
    urls: Callable[[], Sequence[URLPattern]] = lambda: ()
    ticks: Sequence[Tick] = ()
    # ``manage.py run <workflow>``: the command that starts one of its runs (memos.management.run_command).
    command: Callable[[], type[BaseCommand]] | None = None
    # Whether this code reads a version's frozen content as the workflow's own (its page part, its files); a
    # version it cannot read (frozen by an older release) is shown and printed as plain sections.
    readable: Callable[[ArtefactVersion], bool] = lambda version: True
    # Newer figures of these companies were loaded: what the workflow does about it once the load commits (a
    # memo's falsifiers are checked against them). Called inside the loading transaction.
    on_new_facts: Sequence[Callable[[Sequence[int]], None]] = ()
    # The parts it plays in the desk's week (memos.pipeline.composition): the screen screens, the memo looks
    # closer, the deck follows up.
    week: Sequence[WeekPart] = ()
    # The schedules of it an analyst keeps, on their home page (every one for an admin).
    schedules: Schedules | None = None
    # Buttons it adds to the home page's action bar ("Run this week now").
    home_actions: Sequence[HomeAction] = ()


PLAIN = Surface()
PartT = TypeVar("PartT", bound=WeekPart)


def version_page_of(version: ArtefactVersion) -> VersionPage:
    """The version's part of its page: its workflow's, or the plain sections for content this code cannot
    read."""
    surface = surface_for(version.kind)
    return surface.version if surface.readable(version) else PLAIN.version


def mail_page_of(version: ArtefactVersion) -> VersionPage:
    """The version's page as an e-mail about it reads it (whether its scores are sealed, what it adds): its
    workflow's, checked readable only where the workflow declares either. A screen declares neither, and
    its check builds its whole dashboard (40 ms), which the notices of its freeze paid on the run's path."""
    page = surface_for(version.kind).version
    if page.sealed is None and page.mail is VersionPage.mail:
        return page  # says what the plain page says: nothing sealed, nothing more
    return version_page_of(version)


def files_of(version: ArtefactVersion) -> Files:
    """The files frozen with the version: its workflow's, or the printed page for content this code cannot
    read."""
    surface = surface_for(version.kind)
    return surface.files if surface.readable(version) else PLAIN.files


def surface_of(workflow: Workflow) -> Surface:
    """The workflow's surface; a workflow that declares none gets the plain one."""
    return _loaded(workflow.surface) if workflow.surface else PLAIN


@cache
def _loaded(module: str) -> Surface:
    found = import_module(module).SURFACE
    if not isinstance(found, Surface):
        raise TypeError(f"{module}.SURFACE is not a Surface")
    return found


def surface_for(name: str) -> Surface:
    """The surface of the workflow stored as ``name`` (a run's workflow, a version's kind)."""
    # Imported here: the registry imports every workflow, which import the models this module's callers load.
    from memos.pipeline.registry import workflow_for

    return surface_of(workflow_for(name))


def surfaces() -> dict[str, Surface]:
    from memos.pipeline.registry import WORKFLOWS

    return {name: surface_of(workflow) for name, workflow in WORKFLOWS.items()}


def week_part(kind: type[PartT]) -> tuple[str, PartT] | None:
    """The workflow that plays ``kind`` in the desk's week, and how; None when none does."""
    for name, surface in surfaces().items():
        for part in surface.week:
            if isinstance(part, kind):
                return name, part
    return None


def new_facts(company_ids: Iterable[int]) -> None:
    """Newer figures of these companies are being loaded (a snapshot, an EDGAR refresh, ``facts --save``):
    every workflow's reaction, each once the loading transaction commits."""
    ids = sorted(set(company_ids))
    for surface in surfaces().values():
        for react in surface.on_new_facts:
            react(ids)


def new_facts_of(ticker: str) -> None:
    """``new_facts`` for the company a ticker names."""
    new_facts(Company.objects.filter(ticker=ticker.strip().upper()).values_list("pk", flat=True))


def workflow_urls() -> list[URLPattern]:
    """Every workflow's own URLs, for the site's URLconf (agency.urls)."""
    return [pattern for surface in surfaces().values() for pattern in surface.urls()]
