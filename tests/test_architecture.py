"""The tree's import rules, checked on the source: data flows one way, and imports follow it.

    sizing/     pure: imports nothing of ours
    config/     settings, the user's files and their one reader, the schedule's day, file locks,
                the neutraliser of shown text;
                of ours only sizing (a job and a GPU name are the sizing model's); settings.py nothing
    scrapers/   web and files -> offer items; of ours only sizing and config
    warehouse/  the only package that talks to DuckDB; never gpuplan, pipelines or digest
    digest/     of ours only warehouse and config
    pipelines/  Dagster wiring; builds Settings at the edge; imported by nobody but the CLI commands
    gpuplan/    the edge: imported by nobody; only commands/ import pipelines; the one exception is
                gpuplan.plan_tables, the plans' columns and headers, which the UI's preview shows
                as the CLI prints them (it imports nothing of pipelines)

Every import statement counts, also one inside a function (a lazy import is still a dependency).

And no Dagster private name (`dagster._core...`, `dg._...`) appears anywhere in our code, tests or
benches, imported, referenced or only named in a comment: what Dagster does not export may change
in any release.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("gpuplan", "config", "scrapers", "warehouse", "sizing", "digest", "pipelines")
# A module, attribute or name of Dagster's (or one of its packages', dagster_*) that starts with
# "_": `dagster._core.errors`, `dg._check`, `from dagster._utils import ...`.
PRIVATE_DAGSTER = re.compile(r"\b(?:dagster\w*|dg)\._\w")

# What the UI shows as the terminal does: the plans' table (columns, headers, legend, cells).
SHARED_EDGE = frozenset({"gpuplan.plan_tables"})

# package -> the packages of ours it may import (itself always)
ALLOWED: dict[str, frozenset[str]] = {
    "sizing": frozenset(),
    "config": frozenset({"sizing"}),
    "scrapers": frozenset({"config", "sizing"}),
    "warehouse": frozenset({"config", "scrapers", "sizing"}),
    "digest": frozenset({"config", "warehouse"}),
    "pipelines": frozenset({"config", "scrapers", "warehouse", "sizing", "digest"}),
    "gpuplan": frozenset({"config", "scrapers", "warehouse", "sizing", "digest", "pipelines"}),
}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones resolved to our package names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: within the same package
                found.append((node.lineno, path.relative_to(ROOT).parts[0]))
            elif node.module:
                found.append((node.lineno, node.module))
    return found


def _ours(module: str) -> str | None:
    top = module.split(".", 1)[0]
    return top if top in OURS else None


def _violations(package: str, allowed: frozenset[str], exempt: frozenset[str] = frozenset()) -> list[str]:
    problems = []
    for path in _modules(package):
        relative = path.relative_to(ROOT).as_posix()
        for line, module in _imports(path):
            top = _ours(module)
            if top is None or top == package or module in exempt:
                continue
            if top not in allowed:
                problems.append(f"{relative}:{line} imports {module}")
    return problems


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_package_imports_only_what_it_may(package: str) -> None:
    assert (
        _violations(package, ALLOWED[package], SHARED_EDGE if package == "pipelines" else frozenset()) == []
    )


def test_settings_import_nothing_of_ours() -> None:
    settings = ROOT / "config" / "settings.py"
    assert [module for _, module in _imports(settings) if _ours(module)] == []


def _importers(package: str, exempt: frozenset[str] = frozenset()) -> list[str]:
    """Files of our other packages that import `package` (other than its modules `exempt`)."""
    return [
        path.relative_to(ROOT).as_posix()
        for other in OURS
        if other != package
        for path in _modules(other)
        if any(_ours(module) == package and module not in exempt for _, module in _imports(path))
    ]


def test_nothing_imports_the_edge() -> None:
    """gpuplan/ is the edge: what the CLI and the Dagster code share lives below it (config/), but
    for the plans' table (SHARED_EDGE), which imports nothing of pipelines."""
    assert _importers("gpuplan", SHARED_EDGE) == []
    shared = [module for name in SHARED_EDGE for _, module in _imports(ROOT / f"{name.replace('.', '/')}.py")]
    assert not [module for module in shared if _ours(module) == "pipelines"]


def test_one_reader_reads_the_users_yaml() -> None:
    """Every YAML file a person writes (jobs, watches, quotes) goes through config/user_files.py,
    where the guards against hostile files live; nothing else imports a YAML library."""
    readers = [
        path.relative_to(ROOT).as_posix()
        for package in OURS
        for path in _modules(package)
        if any(module.split(".")[0] in ("yaml", "ruamel") for _, module in _imports(path))
    ]
    assert readers == ["config/user_files.py"]


def test_only_the_cli_commands_import_pipelines() -> None:
    importers = _importers("pipelines")
    assert importers, "the CLI runs the pipeline: some command must import it"
    assert all(path.startswith("gpuplan/commands/") for path in importers), importers


def test_settings_are_built_only_at_the_edges() -> None:
    """`Settings.from_env()` runs once per process: in the CLI's callback or the Dagster definitions."""
    callers = sorted(
        path.relative_to(ROOT).as_posix()
        for package in OURS
        for path in _modules(package)
        if "Settings.from_env(" in path.read_text(encoding="utf-8") and path.name != "settings.py"
    )
    assert callers == ["gpuplan/cli.py", "pipelines/definitions.py"]


def test_the_rule_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The check itself can fail: a scrapers module importing the warehouse is reported."""
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from warehouse import connect\n    return connect\n", encoding="utf-8")
    assert [m for _, m in _imports(module)] == ["warehouse"]
    assert _ours("warehouse.engine.connect") not in ALLOWED["scrapers"]


def _private_dagster_names(path: Path, root: Path = ROOT) -> list[str]:
    """ "file:line: match" for each private Dagster name in `path`."""
    text = path.read_text(encoding="utf-8")
    return [
        f"{path.relative_to(root).as_posix()}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()}"
        for match in PRIVATE_DAGSTER.finditer(text)
    ]


def test_no_dagster_private_name_appears_in_our_code() -> None:
    this_file = Path(__file__).resolve()
    files = [path for folder in (*OURS, "tests", "bench") for path in sorted((ROOT / folder).rglob("*.py"))]
    assert [hit for path in files if path != this_file for hit in _private_dagster_names(path)] == []


def test_the_private_name_rule_sees_one(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "if TYPE_CHECKING:\n    from dagster._utils.error import SerializableErrorInfo\n"
        "x = dg._check\nimport dagster_shared._x\nfrom dagster import asset\n",
        encoding="utf-8",
    )
    hits = [hit.split(": ", 1)[1] for hit in _private_dagster_names(module, tmp_path)]
    assert hits == ["dagster._u", "dg._c", "dagster_shared._x"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_imports(path: Path, known: frozenset[str]) -> set[str]:
    """The modules of ours that `path` imports: `from a import b` is a.b when b is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
    return {module for module in found if module in known}


def test_no_module_imports_itself_round_a_cycle() -> None:
    """Every import counts (one under TYPE_CHECKING or in a function too): a cycle means neither
    module can be read, tested or moved without the other."""
    paths = {_module_name(path): path for package in OURS for path in _modules(package)}
    known = frozenset(paths)
    graph = {name: _module_imports(path, known) - {name} for name, path in paths.items()}
    cycles = []
    for start in sorted(graph):
        # depth-first from `start`, reporting each cycle once (at its smallest module)
        stack = [(start, (start,))]
        while stack:
            module, trail = stack.pop()
            for nxt in sorted(graph[module]):
                if nxt == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif nxt > start and nxt not in trail and len(trail) < 6:
                    stack.append((nxt, (*trail, nxt)))
    assert cycles == []


# "issue 27", "Issue 29:": our own tracker's numbers. An upstream issue cited as a source keeps its
# "#" ("skypilot issue #5438"), and applied migrations are never edited.
CHANGE_LOG_REFERENCE = re.compile(r"\b[Ii]ssues? \d")


def test_change_log_prose_lives_in_commits() -> None:
    """What a change was for is in its commit message; the code says what it does and why."""
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{number}"
        for folder in (*OURS, "bench", "tests")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".sql") and "migrations" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if CHANGE_LOG_REFERENCE.search(line) and path.name != "test_architecture.py"
    ]
    assert found == []
