"""sizing/ is pure Python and imports nothing else of gpuplan (STYLE.md: the tree's direction)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import sizing

PACKAGE = Path(sizing.__file__).parent


def test_sizing_imports_only_the_standard_library_and_itself():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top == "sizing" or top in sys.stdlib_module_names or top == "__future__", (
                    path.name,
                    name,
                )


def test_package_docstring_is_one_line():
    assert sizing.__doc__ and "\n" not in sizing.__doc__.strip()
