"""docs/reliability.md is the table of this suite: a row per test, a test per row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from reliability.faults import FAULTS

pytestmark = pytest.mark.faults

SUITE = Path(__file__).parent
DOC = SUITE.parents[1] / "docs" / "reliability.md"
CASE_ROW = re.compile(r"^\| `([a-z0-9_]+)` \|", re.MULTILINE)


def _modules() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text("utf-8")) for path in sorted(SUITE.glob("test_*.py"))}


def _cases(module: ast.Module) -> list[str]:
    return [
        node.name.removeprefix("test_")
        for node in module.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


def _marked_faults(module: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets)
        and ast.unparse(node.value) == "pytest.mark.faults"
        for node in module.body
    )


def test_the_table_matches_the_suite() -> None:
    modules = _modules()
    tests = [case for module in modules.values() for case in _cases(module)]
    rows = CASE_ROW.findall(DOC.read_text("utf-8"))
    assert len(rows) == len(set(rows)), "a case is listed twice"
    assert sorted(rows) == sorted(tests), (
        f"in the table only: {sorted(set(rows) - set(tests))}; tested only: {sorted(set(tests) - set(rows))}"
    )
    untested = sorted({fault.name for fault in FAULTS} - set(tests))
    assert untested == [], f"crawl faults without a case of their name: {untested}"
    unmarked = [name for name, module in modules.items() if not _marked_faults(module)]
    assert unmarked == [], f"test modules not marked faults: {unmarked}"
