"""The layering rules, read from the source with ``ast``: agents/ is plain Python (no memos, no ORM); openai
lives in one provider module; the run engine never imports the services (they call it, and it reaches them
only through the hooks memos.apps installs and the surface each workflow names); a workflow is one unit: no
workflow package (under memos/pipeline/ or agents/) imports another workflow's, and the code every workflow
shares imports none, but for the desk around the engine, which reaches a workflow through its one public
module (``memos.pipeline.<workflow>.desk``) and never into its stages; and ``memos/live/`` is the ground
floor: it imports no engine, service or view."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROVIDER_MODULE = ROOT / "agents" / "llm" / "providers" / "openai_compat.py"
# The one module that names every workflow: the engine's list of what it can run.
REGISTRY = ROOT / "memos" / "pipeline" / "registry.py"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, a ``from package import module`` counted as ``package.module`` too."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def python_files(*packages: str) -> list[Path]:
    return [path for package in packages for path in sorted((ROOT / package).rglob("*.py"))]


def workflows() -> list[str]:
    """The workflow packages: each folder with an ``__init__`` under memos/pipeline/."""
    return sorted(p.parent.name for p in (ROOT / "memos" / "pipeline").glob("*/__init__.py"))


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def test_agents_never_import_memos_or_the_orm() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files("agents")
        for name in imported_modules(path)
        if within(name, "memos") or within(name, "django.db")
    ]
    assert offenders == []


def test_openai_is_imported_only_by_the_provider_module() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files("agents", "memos", "agency")
        if path != PROVIDER_MODULE and any(within(name, "openai") for name in imported_modules(path))
    ]
    assert offenders == []


def is_desk(path: Path) -> bool:
    """A workflow's desk (memos/pipeline/<workflow>/desk/): its pages, services and command, which the
    engine names but never imports."""
    parts = path.relative_to(ROOT).parts
    return parts[:2] == ("memos", "pipeline") and len(parts) > 4 and parts[3] == "desk"


def test_the_run_engine_never_imports_the_services_the_views_or_a_desk() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files("memos/pipeline")
        if not is_desk(path)
        for name in imported_modules(path)
        if within(name, "memos.services")
        or within(name, "memos.views")
        or any(within(name, f"memos.pipeline.{workflow}.desk") for workflow in workflows())
    ]
    assert offenders == []


def from_imports(path: Path) -> list[str]:
    """The modules ``path`` imports from (``from X import y``: X) and imports whole (``import X``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def reaches_past_the_desk(module: str, workflow: str) -> bool:
    """Whether ``module`` is a part of ``workflow`` other than its desk's public module."""
    return within(module, f"memos.pipeline.{workflow}") and module != f"memos.pipeline.{workflow}.desk"


def test_the_desk_reaches_a_workflow_only_through_its_public_module() -> None:
    """Shared services and views read workflows through their declarations (the registry, the surfaces);
    the admin, the template tags and the commands may import a workflow's desk module, never its stages or
    the desk's inner modules."""
    names = workflows()
    shared = python_files("memos/services", "memos/views", "memos/live", "memos/admin", "memos/management")
    shared += python_files("memos/templatetags", "agency")
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in shared
        for module in from_imports(path)
        for workflow in names
        if reaches_past_the_desk(module, workflow)
    ]
    assert offenders == []
    services_and_views = python_files("memos/services", "memos/views", "memos/live")
    assert [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in services_and_views
        for module in from_imports(path)
        for workflow in names
        if within(module, f"memos.pipeline.{workflow}")
    ] == []


def test_live_is_the_ground_floor() -> None:
    """memos/live/ (events, the socket base, access checks) is imported by the engine, the services and the
    views: it imports none of them."""
    offenders = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in python_files("memos/live")
        for module in from_imports(path)
        if any(within(module, floor) for floor in ("memos.pipeline", "memos.services", "memos.views"))
    ]
    assert offenders == []


def test_no_workflow_package_imports_another_workflows() -> None:
    names = workflows()
    assert {"memo", "deck"} <= set(names)
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for mine in names
        for path in python_files(f"memos/pipeline/{mine}", f"agents/{mine}")
        for name in imported_modules(path)
        for other in names
        if other != mine and (within(name, f"memos.pipeline.{other}") or within(name, f"agents.{other}"))
    ]
    assert offenders == []


def test_what_every_workflow_shares_imports_no_workflow() -> None:
    """The engine outside the workflow packages (but its registry), and agents' shared packages."""
    names = workflows()
    shared = [p for p in python_files("memos/pipeline") if p.parent == ROOT / "memos" / "pipeline"]
    shared += [p for p in python_files("agents") if p.relative_to(ROOT / "agents").parts[0] not in names]
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in shared
        if path != REGISTRY
        for name in imported_modules(path)
        for workflow in names
        if within(name, f"memos.pipeline.{workflow}") or within(name, f"agents.{workflow}")
    ]
    assert offenders == []


def test_the_rule_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from django.db import models\nimport memos.models\nfrom memos.pipeline import deck\n")
    assert {"django.db", "memos.models", "memos.pipeline.deck"} <= imported_modules(sample)


def test_the_desk_rule_tells_the_public_module_from_the_rest(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from memos.pipeline.deck.desk import gold_scores\n"
        "from memos.pipeline.deck.desk.viewer import deck_context\n"
        "from memos.pipeline.deck.plan import LAP\n"
    )
    reached = [module for module in from_imports(sample) if reaches_past_the_desk(module, "deck")]
    assert reached == ["memos.pipeline.deck.desk.viewer", "memos.pipeline.deck.plan"]
    assert is_desk(ROOT / "memos" / "pipeline" / "deck" / "desk" / "viewer.py")
    assert not is_desk(ROOT / "memos" / "pipeline" / "deck" / "refine.py")
