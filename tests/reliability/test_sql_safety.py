"""SQL cannot hurt the warehouse: `gpuplan sql` cannot write, and no code formats values into SQL."""

from __future__ import annotations

import ast
import hashlib
import tomllib
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner
from warehouse_template import migrated

from config.settings import Settings
from gpuplan.cli import app
from reliability.synthetic_crawls import write_crawl
from warehouse.engine import connect
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

ROOT = Path(__file__).resolve().parents[2]
# Writes, escapes from the warehouse file, and ways to turn the guard off (each must fail alone).
FORBIDDEN = (
    "INSERT INTO offers SELECT * FROM offers",
    "UPDATE crawl_runs SET status = 'ok'",
    "CREATE VIEW sneaky AS SELECT 1",
    "ATTACH ':memory:' AS scratch",
    "COPY offers TO 'stolen.csv'",
    "EXPORT DATABASE 'stolen'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT 1; DELETE FROM offers",
)
# How DuckDB words a refusal (read-only file, external access off, settings locked): a statement
# must fail for one of these, not for a reason that could go away (a network timeout, a typo).
REFUSALS = (
    "read-only mode",
    "disabled by configuration",
    "disabled through configuration",
    "has been locked",
)
# Methods of DuckDB connections (and of the duckdb module) that take SQL text.
SQL_TAKERS = frozenset({"execute", "executemany", "sql", "query", "from_query"})


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse" / "warehouse.duckdb")})
    with connect.writer(migrated(settings.warehouse)) as con:
        load_crawl(con, write_crawl(tmp_path / "crawl", date(2026, 11, 30), 5))
    monkeypatch.chdir(tmp_path / "warehouse")  # where COPY / EXPORT would write
    return settings


def _fingerprint(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("statement", FORBIDDEN)
def test_gpuplan_sql_cannot_write(published: Settings, statement: str) -> None:
    folder = published.warehouse.parent
    before = _fingerprint(folder)
    result = CliRunner().invoke(app, ["--warehouse", str(published.warehouse), "sql", statement])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert any(refusal in result.stderr for refusal in REFUSALS), result.stderr
    assert _fingerprint(folder) == before, "the warehouse folder changed"
    with connect.reader(published.warehouse) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(5,)]


# --- SQL takes bound parameters only --------------------------------------------------------------


def _built(node: ast.expr, assigned: dict[str, list[ast.expr]]) -> bool:
    """Whether `node` builds text at run time: an f-string with values, %, .format(), + of a
    non-literal, or a local name assigned any of those."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return isinstance(node.left, ast.Constant | ast.JoinedStr | ast.BinOp)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        sides = (node.left, node.right)
        return any(_built(side, assigned) for side in sides) or (
            any(isinstance(side, ast.Constant) and isinstance(side.value, str) for side in sides)
            and not all(isinstance(side, ast.Constant) for side in sides)
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return True
    if isinstance(node, ast.Name):
        return any(_built(value, {}) for value in assigned.get(node.id, []))
    return False


def formatted_sql(source: str) -> list[tuple[int, str]]:
    """(line, call) of every call passing built text as SQL (see `_built`), in `source`."""
    tree = ast.parse(source)
    found = []
    scopes = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    for scope in [tree, *scopes]:
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in SQL_TAKERS:
                continue
            text = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "query"), None)
            )
            if text is not None and _built(text, assigned):
                found.append((node.lineno, ast.unparse(node)[:120]))
    return sorted(set(found))


def _project_python() -> list[Path]:
    """The project's own code: its packages (pyproject.toml) and bench/; tests format the names of
    their own fixture tables and are left out."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    packages = [
        pattern.rstrip("*") for pattern in config["tool"]["setuptools"]["packages"]["find"]["include"]
    ]
    folders = [ROOT / name for name in (*packages, "bench") if (ROOT / name).is_dir()]
    return sorted(path for folder in folders for path in folder.rglob("*.py"))


def test_sql_takes_bound_parameters_only() -> None:
    caught = formatted_sql(
        "def f(con, table, day):\n"
        "    con.execute(f'DROP TABLE {table}')\n"
        "    con.execute('SELECT * FROM offers WHERE day = %s' % day)\n"
        "    con.sql('SELECT {}'.format(day))\n"
        "    con.query('SELECT * FROM ' + table)\n"
        "    text = f'DELETE FROM {table}'\n"
        "    con.execute(text)\n"
        "    con.execute('SELECT * FROM offers WHERE day = $day', {'day': day})\n"
        "    con.execute(queries.sql('plans/for_date'), {'day': day})\n"
    )
    assert [line for line, _ in caught] == [2, 3, 4, 5, 7], "the check misses a way of building SQL"
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in _project_python()
        for line, call in formatted_sql(path.read_text("utf-8"))
    ]
    assert offenders == [], "SQL built from values instead of bound parameters:\n" + "\n".join(offenders)
