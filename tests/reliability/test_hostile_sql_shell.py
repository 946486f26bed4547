"""`gpuplan sql`'s shell and sandbox under hostile input: the history file, dot commands
on stdin, and files written into the spill folder. The warehouse holds SYNTHETIC offers
(reliability.synthetic_crawls).

Before the fix: with `sql_history` a symbolic link to another file of 5,000 lines, leaving the
prompt cut that file to its last 1,000 (readline wrote through the link), and a new history file
was 0644; piped `.tables` was sent to DuckDB together with the statement after it, so both failed;
`COPY ... TO '<spill folder>/x.csv'` wrote 32 MB past a 10 MiB spill cap (DuckDB exempts its temp
folder from the external-access switch, and its cap counts only its own spill).
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from config.settings import Settings
from gpuplan.cli import app
from gpuplan.sql_shell import HISTORY_FILE
from reliability.synthetic_crawls import write_crawl
from warehouse.engine import connect, sandbox
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A published warehouse of 5 SYNTHETIC offers; the sandbox's spill goes under tmp_path/tmp."""
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse" / "warehouse.duckdb")})
    with connect.writer(settings.warehouse) as con:
        load_crawl(con, write_crawl(tmp_path / "crawl", date(2026, 11, 30), 5))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return settings


def _prompt_session(settings: Settings, typed: bytes) -> bytes:
    """`gpuplan sql` at a prompt on a real terminal (a pty): wait for the prompt, type, read to exit."""
    main, child = pty.openpty()
    gpuplan = Path(sys.executable).with_name("gpuplan")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(settings.warehouse.parent), "TERM": "dumb"}
    process = subprocess.Popen(
        [str(gpuplan), "--warehouse", str(settings.warehouse), "sql", "--format", "csv"],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        close_fds=True,
    )
    os.close(child)
    output, deadline = b"", time.monotonic() + 60
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if select.select([main], [], [], 0.2)[0]:
                try:
                    output += os.read(main, 4096)
                except OSError:  # the child closed the terminal
                    break
            if typed and b"sql> " in output:
                os.write(main, typed)
                typed = b""
        assert process.wait(timeout=10) == 0, output.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    return output


def test_sql_history_is_never_written_through_a_link(published: Settings, tmp_path: Path) -> None:
    theirs = tmp_path / "notes.txt"  # another file of the user's, 5,000 lines
    theirs.write_text("".join(f"line {n}\n" for n in range(5000)), "utf-8")
    kept = theirs.read_bytes()
    history = published.warehouse.with_name(HISTORY_FILE)
    history.symlink_to(theirs)

    output = _prompt_session(published, b"SELECT 41 + 1 AS answer;\n.quit\n")

    assert b"42" in output
    assert theirs.read_bytes() == kept, "the history was written through the link"
    assert history.is_symlink()
    assert f"history not saved: {history} is a symbolic link".encode() in output
    history.unlink()
    _prompt_session(published, b"SELECT 2 AS two;\n.quit\n")
    assert history.read_text("utf-8").splitlines() == ["SELECT 2 AS two;", ".quit"]
    assert history.stat().st_mode & 0o777 == 0o600
    assert not history.is_symlink()


def test_piped_dot_commands_do_not_swallow_the_next_statement(published: Settings) -> None:
    script = ".tables\nSELECT 42 AS answer;\n.format json\nSELECT 'x' AS y;\n.nonsense\nSELECT 3 AS z\n"
    result = CliRunner().invoke(
        app, ["--warehouse", str(published.warehouse), "sql", "--format", "csv"], input=script
    )
    assert result.exit_code == 1  # .nonsense failed; everything else ran
    lines = result.stdout.splitlines()
    assert "offers,table" in lines and "latest_offers,view" in lines  # .tables answered
    assert lines[lines.index("answer") + 1] == "42"
    assert '{"y": "x"}' in result.stdout and '{"z": 3}' in result.stdout
    assert result.stderr.splitlines() == ["error: unknown command '.nonsense'; .help lists them"]


def test_sql_copy_into_the_spill_folder_is_refused(published: Settings) -> None:
    with sandbox.sandbox(published.warehouse, memory_limit="40MB") as box:
        ((spill,),) = next(box.rows("SELECT current_setting('temp_directory')", timeout_s=10).batches)
        assert Path(spill).parent == Path(tempfile.gettempdir())
        for statement in (
            f"COPY (SELECT repeat('x', 100) AS x FROM range(300000)) TO '{spill}/big.csv'",
            f"EXPORT DATABASE '{spill}/export'",
        ):
            refused = r"gpuplan sql is read-only: (COPY|EXPORT) writes files"
            with pytest.raises(sandbox.SqlRefused, match=refused):
                box.rows(statement, timeout_s=60)
        assert list(Path(spill).iterdir()) == [], "a statement wrote into the spill folder"
        answer = box.rows("SELECT count(*) FROM offers", timeout_s=10)
        assert next(answer.batches) == [(5,)]  # the sandbox still answers


# Every way DuckDB 2.0 lets one statement run another, aimed at the spill folder. `{spill}` is the
# sandbox's temp folder, the one place its external-access switch lets a COPY write.
BIG = "(SELECT repeat('x', 100) AS x FROM range(300000))"
RUNS_A_WRITE = {
    "prepare then execute": f"PREPARE p AS COPY {BIG} TO '{{spill}}/big.csv'; EXECUTE p",
    "prepare, quoted and commented": f"PREPARE /* AS */ \"p AS\" AS COPY {BIG} TO '{{spill}}/big.csv'",
    "explain analyze": f"EXPLAIN ANALYZE COPY {BIG} TO '{{spill}}/big.csv'",
    "explain analyze with options": f"EXPLAIN (ANALYZE, FORMAT json) COPY {BIG} TO '{{spill}}/big.csv'",
}
# Ways that take no COPY at all: DuckDB refuses them itself, or they only read.
CANNOT_WRITE = {
    "query()": f"SELECT * FROM query('COPY {BIG.replace(chr(39), chr(39) * 2)} TO ''{{spill}}/big.csv''')",
    "table macro": f"CREATE TEMP MACRO m() AS TABLE COPY {BIG} TO '{{spill}}/big.csv'",
    "logging to a file": "CALL enable_logging(storage = 'file', storage_path = '{spill}/logs')",
    "profiling to a file": "PRAGMA profiling_output = '{spill}/profile.json'",
    "checkpoint": "CALL force_checkpoint()",
    "copy from database": "COPY FROM DATABASE warehouse TO temp",
}


@pytest.mark.parametrize("statement", RUNS_A_WRITE.values(), ids=RUNS_A_WRITE.keys())
def test_sql_refuses_a_statement_that_runs_a_copy(published: Settings, statement: str) -> None:
    with sandbox.sandbox(published.warehouse, memory_limit="40MB") as box:
        ((spill,),) = next(box.rows("SELECT current_setting('temp_directory')", timeout_s=10).batches)
        with pytest.raises(sandbox.SqlRefused, match=r"gpuplan sql is read-only: COPY writes files"):
            box.rows(statement.format(spill=spill), timeout_s=60)
        assert list(Path(spill).iterdir()) == [], "a statement wrote into the spill folder"
        assert next(box.rows("SELECT count(*) FROM offers", timeout_s=10).batches) == [(5,)]


@pytest.mark.parametrize("statement", CANNOT_WRITE.values(), ids=CANNOT_WRITE.keys())
def test_sql_ways_that_take_no_copy_write_nothing(published: Settings, statement: str) -> None:
    with sandbox.sandbox(published.warehouse, memory_limit="40MB") as box:
        ((spill,),) = next(box.rows("SELECT current_setting('temp_directory')", timeout_s=10).batches)
        with contextlib.suppress(sandbox.SqlError):  # DuckDB refuses most; a checkpoint is a no-op
            list(box.rows(statement.format(spill=spill), timeout_s=60).batches)
        assert list(Path(spill).iterdir()) == [], "a statement wrote into the spill folder"


def test_sql_judges_a_prepared_statement_by_what_it_runs_at_execute(published: Settings) -> None:
    with sandbox.sandbox(published.warehouse, memory_limit="40MB") as box:
        ((spill,),) = next(box.rows("SELECT current_setting('temp_directory')", timeout_s=10).batches)
        # prepared behind the sandbox's back: EXECUTE must not trust that PREPARE was judged
        box.con.execute(f"PREPARE w AS COPY {BIG} TO '{spill}/big.csv'")
        for execute in ("EXECUTE w", 'EXECUTE "W"', "EXPLAIN ANALYZE EXECUTE w"):
            with pytest.raises(sandbox.SqlRefused, match=r"COPY writes files \(in EXECUTE\)"):
                box.rows(execute, timeout_s=60)
        assert list(Path(spill).iterdir()) == []
        # a prepared SELECT still runs, in one query with its PREPARE, and EXPLAIN ANALYZE of one too
        answer = box.rows("PREPARE n AS SELECT count(*) FROM offers; EXECUTE n", timeout_s=10)
        assert next(answer.batches) == [(5,)]
        assert list(box.rows("EXPLAIN ANALYZE EXECUTE n", timeout_s=10).batches)


def test_gpuplan_sql_refuses_prepare_copy_in_one_line(published: Settings) -> None:
    statement = "PREPARE p AS COPY (SELECT 1) TO 'stolen.csv'; EXECUTE p"
    result = CliRunner().invoke(app, ["--warehouse", str(published.warehouse), "sql", statement])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: gpuplan sql is read-only: COPY writes files (in PREPARE), refused in read-only mode "
        "(into the spill folder too); to keep an answer, use --format csv > FILE\n"
    )
