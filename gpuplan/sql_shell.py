"""The SQL shell of `gpuplan sql` with no query: a prompt on a terminal, a script reader otherwise.

Every statement runs through `gpuplan.sql_answers.run_query` in the same `warehouse.engine.sandbox`
as a one-off query (read-only, bounded in time and memory, output neutralized): the shell adds
a loop, not a second way to run SQL.

- On a terminal: a prompt with line editing and history (the stdlib's `readline`; kept in
  `sql_history` beside the warehouse), statements over several lines until a `;` ends them
  (`...>` prompts for more), Ctrl-C drops the statement being typed, Ctrl-D or `.quit` leaves.
  Dot commands at the start of a statement, as DuckDB's shell has them: `.help`, `.tables` (views
  marked, the warehouse's bookkeeping apart), `.schema [table]`, `.mode table|line|columns|csv|json`
  (`.format` too), `.columns` and `.rows` (the box on its side, and back), `.quit`.
  The history file is never written through a symbolic link (a link there is left alone, said in
  one line), and is made anew with mode 0600 each time: it holds what you asked.
- Not on a terminal (`gpuplan sql < queries.sql`, a pipe): the same statements and dot commands
  read from stdin, each answer printed in turn; a failing statement prints its one-line error and
  the rest still run; the exit status is 1 when any failed. A dot command is a line of its own
  between statements, as at the prompt (never sent to DuckDB with
  the statement after it, where both would fail).

Statements end at a `;` outside quotes and comments, as the stdlib's `sqlite3.complete_statement`
reads SQL text (the same quoting rules as DuckDB's for strings, identifiers and comments).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rich.console import Console

from config.shown_text import one_line, visible
from gpuplan.sql_answers import FOR_PEOPLE, OutputFormat, run_query
from warehouse.engine.sandbox import Sandbox, SqlError

PROMPT, CONTINUATION = "sql> ", "...> "
HISTORY_FILE = "sql_history"  # beside the warehouse: the shell's statements, one a line
HISTORY_LINES = 1000  # statements kept in the history file
HELP = """\
End each statement with ; (it may span lines). Ctrl-C drops what is being typed.
.tables           the tables, the views, and the warehouse's bookkeeping apart
.schema [TABLE]   how every table and view (or TABLE) is made
.mode MODE        how answers are printed (now: {format}):
                  table   DuckDB's box, floats to 4 figures
                  line    one column a line: wide rows whole
                  columns the box on its side
                  csv, json  exact, for programs (.format MODE is the same)
.columns, .rows   the box on its side, and back (.mode columns, .mode table)
.quit             leave (or Ctrl-D)"""
# Internal: the warehouse's own bookkeeping (which migrations and definitions ran, which writer wrote
# the file) and the runs the day's views are made from. Listed apart by `.tables`, still there to query.
TABLES_QUERY = """
SELECT table_name AS name,
       CASE WHEN table_name IN ('schema_definitions', 'schema_migrations', 'warehouse_stamp', 'day_runs',
                                'usable_runs')
            THEN 'internal ' ELSE '' END || CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END AS kind
FROM information_schema.tables
ORDER BY kind LIKE 'internal%', name
"""
SCHEMA_QUERY = """
SELECT table_name AS name, sql FROM duckdb_tables() WHERE NOT internal AND NOT temporary
UNION ALL
SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary
ORDER BY name
"""


@dataclass
class Session:
    """What every statement of a shell runs with; `output` changes with `.format`."""

    box: Sandbox
    output: OutputFormat
    max_rows: int | None
    timeout_s: float
    out: IO[str]
    err: IO[str]


def statements(lines: Iterable[str]) -> Iterator[str]:
    """The statements in `lines`, each without its trailing `;`; text after the last `;` (a
    statement never ended) is one too, so a script's last statement need not end with one. A line
    starting with `.` where no statement is under way is a dot command, yielded as it stands."""
    buffer = ""
    for line in lines:
        if line.strip().startswith(".") and not _has_sql(buffer):
            buffer = ""
            yield line.strip()
            continue
        complete, buffer = split(buffer + (line if line.endswith("\n") else line + "\n"))
        yield from complete
    if _has_sql(buffer):
        yield buffer.strip()


def split(text: str) -> tuple[list[str], str]:
    """The complete statements at the start of `text` (without their `;`), and the rest."""
    complete = []
    while (end := _statement_end(text)) is not None:
        statement, text = text[:end].strip(), text[end + 1 :]
        if _has_sql(statement):
            complete.append(statement)
    return complete, text


def _statement_end(text: str) -> int | None:
    """Index of the `;` that ends the first complete statement in `text`, or None."""
    position = text.find(";")
    while position != -1:
        if sqlite3.complete_statement(text[: position + 1]):
            return position
        position = text.find(";", position + 1)
    return None


def _has_sql(text: str) -> bool:
    """False for text that is only blank lines and `--` comments (nothing to run)."""
    return any(line.strip() and not line.strip().startswith("--") for line in text.splitlines())


def run_script(session: Session, text: str) -> bool:
    """Run every statement of `text` (stdin, read whole); True when all of them ran."""
    ok = True
    for statement in statements(text.splitlines(keepends=True)):
        ran = _dot_command(session, statement) if statement.startswith(".") else _run(session, statement)
        if ran is None:  # .quit
            break
        ok = ran and ok
    return ok


def interactive(session: Session, history: Path) -> None:
    """The prompt (module doc), until Ctrl-D or `.quit`."""
    import readline  # imported here: it changes how input() reads lines, for the shell only

    with contextlib.suppress(OSError):  # no history yet, or an unreadable one: start without
        readline.read_history_file(history)
    readline.set_history_length(HISTORY_LINES)
    session.out.write("gpuplan sql: read-only; end statements with ; and .help for more\n")
    buffer: list[str] = []
    try:
        while True:
            try:
                line = input(CONTINUATION if buffer else PROMPT)
            except EOFError:
                session.out.write("\n")
                break
            except KeyboardInterrupt:  # drop what was typed, keep the shell
                session.out.write("\n")
                _forget(readline, len(buffer))
                buffer = []
                continue
            if not buffer and line.strip().startswith("."):
                if _dot_command(session, line.strip()) is None:
                    break
                continue
            buffer.append(line)
            complete, rest = split("\n".join(buffer) + "\n")
            if not complete and _statement_end("\n".join(buffer) + "\n") is None:
                continue
            # one history entry per statement, not one per line typed
            _forget(readline, len(buffer))
            readline.add_history(" ".join(part.strip() for part in buffer))
            buffer = [rest.strip()] if _has_sql(rest) else []
            for statement in complete:
                try:
                    _run(session, statement)
                except KeyboardInterrupt:
                    session.err.write("interrupted\n")
    finally:
        problem = _save_history(readline, history)
        if problem is not None:
            session.err.write(f"history not saved: {problem}\n")


def _save_history(readline: object, history: Path) -> str | None:
    """Write the history to a new 0600 file renamed over `history`; why not, or None.

    Never through a link: readline's own writer opens the path it is given, so a link there
    (to a file of 5,000 lines) had that file cut to the last HISTORY_LINES. A read-only home
    must not lose the session's answers: an error is said, not raised.
    """
    if history.is_symlink():
        return f"{history} is a symbolic link; gpuplan never writes through one (remove it to keep history)"
    try:
        history.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{history.name}.", dir=history.parent)  # 0600, O_EXCL
    except OSError as error:
        return f"cannot write {history.parent} ({error.strerror or error})"
    os.close(fd)
    try:
        readline.write_history_file(name)  # type: ignore[attr-defined]
        os.replace(name, history)
    except OSError as error:
        return f"cannot write {history} ({error.strerror or error})"
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
    return None


def _forget(readline: object, lines: int) -> None:
    """Remove the last `lines` history entries (the lines of one statement, typed one by one)."""
    length = readline.get_current_history_length()  # type: ignore[attr-defined]
    for position in range(length - 1, max(length - lines, 0) - 1, -1):
        readline.remove_history_item(position)  # type: ignore[attr-defined]


def _dot_command(session: Session, line: str) -> bool | None:
    """Run a dot command: True when it ran, False when it failed, None to leave the shell."""
    word, _, argument = line.rstrip(";").partition(" ")
    argument = argument.strip()
    if word in (".quit", ".exit", ".q"):
        return None
    if word == ".help":
        session.out.write(HELP.format(format=session.output.value) + "\n")
    elif word == ".tables":
        return _tables(session)
    elif word == ".schema":
        return _schema(session, argument)
    elif word in (".mode", ".format") and argument in OutputFormat.__members__:
        session.output = OutputFormat(argument)
    elif word in (".columns", ".rows") and not argument:
        session.output = OutputFormat.columns if word == ".columns" else OutputFormat.table
    else:
        session.err.write(f"error: unknown command {visible(line)!r}; .help lists them\n")
        return False
    return True


def _tables(session: Session) -> bool:
    """The tables and views: for people a few lines (tables, views, the internal ones apart), for
    programs rows (name, kind)."""
    if session.output not in FOR_PEOPLE:
        return _run(session, TABLES_QUERY)
    rows = _fetched(session, TABLES_QUERY)
    if rows is None:
        return False
    width = Console(file=session.out).width
    groups = {
        "tables:   ": [name for name, kind in rows if kind == "table"],
        "views:    ": [name for name, kind in rows if kind == "view"],
        "internal: ": [name for name, kind in rows if kind.startswith("internal")],
    }
    for heading, names in groups.items():
        if names:
            text = "  ".join(visible(name) for name in names)
            session.out.write(
                textwrap.fill(text, width, initial_indent=heading, subsequent_indent=" " * 10) + "\n"
            )
    if groups["internal: "]:
        session.out.write(f"{'':10}(the warehouse's own bookkeeping; still there to query)\n")
    return True


def _schema(session: Session, table: str) -> bool:
    """The CREATE statements of every table and view, or of `table`."""
    rows = _fetched(session, SCHEMA_QUERY)
    if rows is None:
        return False
    chosen = [sql for name, sql in rows if not table or name.lower() == table.lower()]
    if not chosen:
        session.err.write(f"error: no table or view {visible(table)!r}; .tables lists them\n")
        return False
    session.out.write("".join(visible(sql).rstrip() + "\n" for sql in chosen))
    return True


def _fetched(session: Session, query: str) -> list[tuple[Any, ...]] | None:
    try:
        answer = session.box.rows(query, timeout_s=session.timeout_s)
        return [row for batch in answer.batches for row in batch]
    except SqlError as error:
        session.err.write(f"error: {one_line(str(error))}\n")
        return None


def _run(session: Session, statement: str) -> bool:
    try:
        run_query(session.box, statement, session.output, session.max_rows, session.timeout_s, session.out)
    except SqlError as error:
        session.err.write(f"error: {one_line(str(error))}\n")  # DuckDB may quote the data
        return False
    session.out.flush()
    return True
