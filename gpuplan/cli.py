"""The `gpuplan` command: a thin layer over the functions the Dagster assets call.

Commands live one module each in `gpuplan/commands/`; every module there exposes
`register(app)`, and this file finds them, so adding a command touches no list.

A command's module is imported only when that command runs: Scrapy, Dagster, pandas and
matplotlib cost a second or more to import, and `gpuplan --help` or `gpuplan sql` need none of
them. The list `--help` prints is read from the modules' source instead (`declared_commands`:
the name and help of each `app.command(...)` / `app.add_typer(...)` in `register`), which a test
keeps equal to what the imported modules register.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import signal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
import typer.core
import typer.main

from config.settings import Settings
from config.shown_text import one_line
from gpuplan import __version__, commands


@dataclass(frozen=True)
class Declared:
    """A command as its module's source declares it: where it lives and its help text."""

    module: str
    help: str


def _text(node: ast.expr | None) -> str | None:
    """A help text written as a literal, else None; of an f-string, the sentences before its first field."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        fixed = []
        for part in node.values:
            if not isinstance(part, ast.Constant):
                break
            fixed.append(str(part.value))
        head = "".join(fixed)
        return head[: head.rfind(". ") + 1] or head
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _declared_in(module: str, source: str) -> dict[str, Declared]:
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    values = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    register = functions.get("register")
    found: dict[str, Declared] = {}
    for node in ast.walk(register) if register is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "command" and node.args and isinstance(node.args[0], ast.Constant):
            help_text = _text(_keyword(node, "help"))
            found[str(node.args[0].value)] = Declared(module, help_text or "")
        elif isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Attribute):
            continue
        elif node.func.attr == "add_typer" and node.args and isinstance(node.args[0], ast.Name):
            name, app = _text(_keyword(node, "name")), values.get(node.args[0].id)
            help_text = _text(_keyword(app, "help")) if isinstance(app, ast.Call) else None
            if name:
                found[name] = Declared(module, help_text or "")
    # `app.command("name")(function)`: the help is the function's docstring
    for node in ast.walk(register) if register is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and node.args:
            inner, target = node.func, node.args[0]
            if isinstance(inner.func, ast.Attribute) and inner.func.attr == "command" and inner.args:
                name = str(getattr(inner.args[0], "value", ""))
                function = functions.get(target.id) if isinstance(target, ast.Name) else None
                if name in found and not found[name].help and function is not None:
                    found[name] = Declared(module, ast.get_docstring(function) or "")
    return found


@cache
def declared_commands() -> dict[str, Declared]:
    """Every command and its help, read from the source of `gpuplan/commands/` (nothing imported)."""
    found: dict[str, Declared] = {}
    for info in pkgutil.iter_modules(commands.__path__):
        path = Path(commands.__path__[0]) / f"{info.name}.py"
        found |= _declared_in(f"{commands.__name__}.{info.name}", path.read_text(encoding="utf-8"))
    return found


# What most people run, listed first by `gpuplan --help`; the others follow by name.
FIRST_COMMANDS = ("refresh", "plans", "size")


def _choices_on_their_own_line(command: Any) -> None:
    """Append an option's choices to its help, as a paragraph of its own, and name its value
    `<option>`: Typer shows a choice as `<a|b|c>` beside the option, which a long list breaks mid-word."""
    for param in getattr(command, "params", ()):
        if not isinstance(param, typer.core.TyperOption) or param.is_flag:
            continue
        choices = param.type_descriptor.choices if param.type_descriptor.is_choice else None
        if choices:
            listed = " | ".join(str(getattr(choice, "value", choice)) for choice in choices)
            if listed not in (param.help or ""):
                param.help = f"{param.help or ''}\n\nOne of: {listed}".strip()
                param.metavar = f"<{param.name}>"


class _LoadedCommands(Mapping[str, Any]):
    """The commands by name; a command's module is imported when that command is looked up."""

    def __init__(self, group: LazyGroup) -> None:
        self.group = group

    def __getitem__(self, name: str) -> typer.core.TyperCommand | typer.core.TyperGroup:
        return self.group.load(name)

    def __iter__(self) -> Iterator[str]:
        return iter(declared_commands())

    def __len__(self) -> int:
        return len(declared_commands())


class LazyGroup(typer.core.TyperGroup):
    """Typer's group, with each command imported only when it runs (see the module docstring)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LoadedCommands(self)  # type: ignore[assignment]
        self._listing = False
        self._loaded: dict[str, Any] = {}

    def load(self, name: str) -> typer.core.TyperCommand | typer.core.TyperGroup:
        if name not in self._loaded:
            declared = declared_commands()[name]
            holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
            holder.callback()(lambda: None)  # a callback makes it a group, even with one command
            importlib.import_module(declared.module).register(holder)
            group = typer.main.get_command(holder)
            assert isinstance(group, typer.core.TyperGroup)
            for command in group.commands.values():
                _choices_on_their_own_line(command)
            self._loaded.update(group.commands)
        return self._loaded[name]

    def list_commands(self, ctx: Any) -> list[str]:
        first = [name for name in FIRST_COMMANDS if name in declared_commands()]
        return first + sorted(set(declared_commands()) - set(first))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        declared = declared_commands().get(cmd_name)
        if declared is None:
            return None
        if self._listing:  # --help lists names and help: nothing to import
            return typer.core.TyperCommand(cmd_name, help=declared.help)
        return self.load(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="gpuplan",
    cls=LazyGroup,
    # click's plain help: two columns, the help text as wide as the terminal allows (Typer's
    # panels give it a third of 80 columns beside the option names and types)
    rich_markup_mode=None,
    help="The cheapest way to train a model of size X with method Y, from live GPU rental quotes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplan {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    warehouse: Annotated[
        Path | None,
        typer.Option("--warehouse", help="DuckDB warehouse file (default: $GPUPLAN_WAREHOUSE)."),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """gpuplan: GPU rental prices, training sizing and daily cheapest plans."""
    settings = Settings.from_env()
    if warehouse is not None:
        settings = settings.with_warehouse(warehouse.expanduser())
    ctx.obj = settings


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that every `finally` runs: crawl processes are killed,
    runs are ended, locks are released (the default action would end this process at once).
    Not an Exception, so no `except Exception` swallows it; not a KeyboardInterrupt, which Typer
    turns into a silent exit 130."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def run() -> None:
    """Console entry point: user errors print one line, never a traceback or a box.

    Usage errors (a bad option or argument) say where help is; other errors are the exception's
    message, which names what to do (`warehouse.engine.connect.NoWarehouseError`: the command that makes
    a warehouse; a refused platform token: the variable to set). The message is one line whatever
    the terminal width (cron mail and CI logs must not wrap paths), and made safe: it may quote a
    platform's answer or a file.
    """
    signal.signal(signal.SIGTERM, _terminate)
    try:
        # standalone_mode=False: click's usage errors come here instead of typer's boxed panel
        code = app(standalone_mode=False)
    except typer.TyperException as exc:  # typer's click: usage errors (exit 2) and their kin
        context = getattr(exc, "ctx", None)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        where = ""
        if context is not None and "`gpuplan" not in message:  # unless it names a command already
            where = f" (`{context.command_path} --help` says more)"
        typer.echo(f"error: {one_line(message)}{where}", err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except Terminated:
        typer.echo("terminated", err=True)
        sys.exit(128 + signal.SIGTERM)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("GPUPLAN_DEBUG"):
            raise
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
