"""The share of mutations of sizing/memory.py and sizing/throughput.py that tests/sizing catches.

Run by hand, outside CI (minutes to an hour on a shared machine), from the repository root:

    python tests/sizing/mutation_share.py sizing/memory.py,sizing/throughput.py 150 /tmp/mutants

Mutation kinds: an arithmetic operator swapped (+ <-> -, * <-> /), a comparison shifted
(< <-> <=, > <-> >=, == <-> !=) or its integer right-hand side moved by one, a numeric constant
doubled, a condition negated (if / conditional expression / while), and <-> or, max <-> min. Every
site of a module is one mutant; a seeded sample of N per module is applied, one at a time, to a
copy of the tree, and `pytest tests/sizing -n 0 -x` runs against it (stopping at the first
failure). A mutant that fails to import or errors counts as caught. Prints one line per mutant
and a JSON summary per module (sites, sampled, caught, share, the survivors as kind@line).
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

SEED = 42
SWAP_BINARY = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
}
SWAP_COMPARE = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}
Site = tuple[str, int]  # (kind, index of the node in ast.walk order)


def sites(tree: ast.AST) -> list[Site]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: list[Site] = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in SWAP_BINARY:
            found.append(("binop", index))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAP_COMPARE:
            found.append(("cmpop", index))
            right = node.comparators[0]
            if isinstance(right, ast.Constant) and type(right.value) is int:
                found.append(("cmpconst", index))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value != 0:
            if id(node) not in docstrings:
                found.append(("double", index))
        elif isinstance(node, ast.If | ast.IfExp | ast.While):
            found.append(("negate", index))
        elif isinstance(node, ast.BoolOp):
            found.append(("boolop", index))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min")
        ):
            found.append(("maxmin", index))
    return found


def mutate(source: str, site: Site) -> tuple[str, str]:
    """The mutated source and the mutant's label (kind@line of the original)."""
    tree = ast.parse(source)
    kind, index = site
    node = list(ast.walk(tree))[index]
    if kind == "binop":
        node.op = SWAP_BINARY[type(node.op)]()  # type: ignore[attr-defined]
    elif kind == "cmpop":
        node.ops = [SWAP_COMPARE[type(node.ops[0])]()]  # type: ignore[attr-defined]
    elif kind == "cmpconst":
        node.comparators[0] = ast.Constant(node.comparators[0].value + 1)  # type: ignore[attr-defined]
    elif kind == "double":
        node.value = node.value * 2  # type: ignore[attr-defined]
    elif kind == "negate":
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)  # type: ignore[attr-defined]
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()  # type: ignore[attr-defined]
    else:
        node.func.id = "min" if node.func.id == "max" else "max"  # type: ignore[attr-defined]
    return ast.unparse(ast.fix_missing_locations(tree)), f"{kind}@{getattr(node, 'lineno', 0)}"


def main() -> None:
    modules, sample_size, copy = sys.argv[1].split(","), int(sys.argv[2]), Path(sys.argv[3])
    root = Path.cwd()
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.duckdb"))
    command = [sys.executable, "-m", "pytest", "tests/sizing", "-n", "0", "-x", "-q", "-p", "no:randomly"]
    for module in modules:
        path = copy / module
        original = path.read_text()
        every = sites(ast.parse(original))
        sample = random.Random(SEED).sample(every, min(sample_size, len(every)))
        caught, survived = 0, []
        for site in sample:
            mutated, label = mutate(original, site)
            path.write_text(mutated)
            try:
                run = subprocess.run(
                    command, cwd=copy, capture_output=True, env={**os.environ, "PYTHONPATH": str(copy)}
                )
            finally:
                path.write_text(original)
            if run.returncode:
                caught += 1
            else:
                survived.append(label)
            print(module, label, "caught" if run.returncode else "SURVIVED", flush=True)
        summary = {"sites": len(every), "sampled": len(sample), "caught": caught, "survived": survived}
        print(json.dumps({module: {**summary, "share": round(caught / len(sample), 3)}}), flush=True)


if __name__ == "__main__":
    main()
