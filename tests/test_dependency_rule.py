"""The layering rules, read from the source with ``ast``: agents/ is plain Python (no memos, no ORM); openai
lives in one provider module; the run engine never imports the services (they call it, and it reaches them
only through the hooks memos.apps installs); and a workflow is one unit: no workflow package (under
memos/pipeline/ or agents/) imports another workflow's, and the code every workflow shares imports none."""

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


def test_the_run_engine_never_imports_the_services_or_the_views() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files("memos/pipeline")
        for name in imported_modules(path)
        if within(name, "memos.services") or within(name, "memos.views")
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
