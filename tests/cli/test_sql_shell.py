"""The SQL shell of `gpuplan sql` (no query): statements from stdin, and the prompt on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result
from warehouse_template import migrated

from config.settings import Settings
from gpuplan.cli import app
from gpuplan.sql_shell import HISTORY_FILE, statements
from warehouse.engine import connect


@pytest.fixture
def published(settings: Settings) -> Settings:
    """An empty published warehouse (migrated: its tables and views, no offers)."""
    with connect.writer(migrated(settings.warehouse)):
        pass
    return settings


def _sql(settings: Settings, stdin: str, *args: str) -> Result:
    return CliRunner(env={"COLUMNS": "80"}).invoke(
        app, ["--warehouse", str(settings.warehouse), "sql", *args], input=stdin
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT 1;", ["SELECT 1"]),
        ("SELECT 1; SELECT 2;\n", ["SELECT 1", "SELECT 2"]),
        ("SELECT\n  1\n  + 1;\nSELECT 3", ["SELECT\n  1\n  + 1", "SELECT 3"]),  # the last needs no ;
        ("SELECT 'a;b', \"c;d\";", ["SELECT 'a;b', \"c;d\""]),  # ; in a string or an identifier
        ("SELECT 1 -- a ; in a comment\n, 2;", ["SELECT 1 -- a ; in a comment\n, 2"]),
        ("/* ; */ SELECT 4;", ["/* ; */ SELECT 4"]),
        ("SELECT 1;\n-- the end\n", ["SELECT 1"]),  # a trailing comment is nothing to run
        (";;\n", []),
    ],
)
def test_statements(text: str, expected: list[str]) -> None:
    assert list(statements(text.splitlines(keepends=True))) == expected


def test_statements_on_stdin_are_answered_one_after_another(published: Settings) -> None:
    script = (
        "SELECT 41 + 1 AS answer;\n"
        "SELECT count(*) AS offers\n  FROM offers;\n"
        "CREATE TABLE t (x INTEGER);\n"  # refused: the shell is read-only like a query
        "SELECT 'still here' AS after_an_error\n"
    )
    result = _sql(published, script, "--format", "csv")
    assert result.exit_code == 1  # one statement failed
    assert result.stdout.splitlines() == ["answer", "42", "offers", "0", "after_an_error", "still here"]
    [error] = result.stderr.splitlines()
    assert error.startswith("error: ") and "read-only" in error


def test_a_query_argument_is_still_one_query(published: Settings) -> None:
    result = _sql(published, "", "SELECT 1 AS one", "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"one": 1' in result.stdout


@pytest.mark.slow  # gpuplan in a child process
def test_the_prompt_takes_multi_line_statements_and_keeps_history(published: Settings) -> None:
    """On a real terminal (a pty): a statement over two lines, a dot command, then .quit."""
    main, child = pty.openpty()
    history = published.warehouse.with_name(HISTORY_FILE)
    gpuplan = Path(sys.executable).with_name("gpuplan")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(published.warehouse.parent), "TERM": "dumb"}
    process = subprocess.Popen(
        [str(gpuplan), "--warehouse", str(published.warehouse), "sql", "--format", "csv"],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        close_fds=True,
    )
    os.close(child)
    output = b""

    def read_until(marker: bytes, timeout_s: float = 60) -> None:
        nonlocal output
        deadline = time.monotonic() + timeout_s
        while marker not in output and time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    output += os.read(main, 4096)
                except OSError:  # the child closed the terminal
                    break
        assert marker in output, output.decode(errors="replace")

    try:
        read_until(b"sql> ")
        os.write(main, b"SELECT 41\n")
        read_until(b"...> ")  # no ; yet: the statement goes on
        os.write(main, b"  + 1 AS answer;\n")
        read_until(b"42")
        os.write(main, b".format json\nSELECT 'x' AS y;\n")
        read_until(b'"y": "x"')
        os.write(main, b".quit\n")
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    # one history entry per statement (its lines joined) and per dot command
    assert history.read_text(encoding="utf-8").splitlines() == [
        "SELECT 41 + 1 AS answer;",
        ".format json",
        "SELECT 'x' AS y;",
        ".quit",
    ]
