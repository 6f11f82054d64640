"""The layering rule: agents/ is plain Python (no memos, no ORM); openai lives in one provider module."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROVIDER_MODULE = ROOT / "agents" / "llm" / "providers" / "openai_compat.py"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def python_files(*packages: str) -> list[Path]:
    return [path for package in packages for path in sorted((ROOT / package).rglob("*.py"))]


def test_agents_never_import_memos_or_the_orm() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files("agents")
        for name in imported_modules(path)
        if name == "memos" or name.startswith(("memos.", "django.db")) or name == "django.db"
    ]
    assert offenders == []


def test_openai_is_imported_only_by_the_provider_module() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files("agents", "memos", "agency")
        if path != PROVIDER_MODULE
        and any(name == "openai" or name.startswith("openai.") for name in imported_modules(path))
    ]
    assert offenders == []


def test_the_rule_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from django.db import models\nimport memos.models\n")
    assert {"django.db", "memos.models"} <= imported_modules(sample)
