"""gpuplan/cli.py: a command's module is imported when it runs; `--help` lists every command from source."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner
from warehouse_template import migrated

from config.settings import Settings
from gpuplan import commands
from gpuplan.cli import app, declared_commands
from warehouse.engine import connect

# Each costs from half a second (Scrapy, pandas) to a second and a half (Dagster) to import.
HEAVY = frozenset({"scrapy", "twisted", "dagster", "pandas", "matplotlib"})


@pytest.mark.parametrize("args", [("--help",), ("sql", "select 1"), ("size", "7B"), ("sql", "--help")])
def test_light_commands_import_no_heavy_library(
    args: tuple[str, ...], settings: Settings, probe_gpuplan: Callable[..., Any]
) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass  # a published warehouse for `gpuplan sql`
    env = {"PATH": "", "GPUPLAN_WAREHOUSE": str(settings.warehouse), "PYTHONDONTWRITEBYTECODE": "1"}
    imported = probe_gpuplan(env, *args).imported
    assert "typer" in imported, "the probe did not run gpuplan"
    assert imported & HEAVY == set(), f"gpuplan {' '.join(args)} imported {sorted(imported & HEAVY)}"


def test_the_help_listing_is_what_the_modules_register() -> None:
    registered = typer.Typer()
    registered.callback()(lambda: None)
    for module in pkgutil.iter_modules(commands.__path__):
        importlib.import_module(f"{commands.__name__}.{module.name}").register(registered)
    imported = typer.main.get_command(registered).commands  # type: ignore[attr-defined]
    declared = declared_commands()
    assert sorted(declared) == sorted(imported)
    for name, command in imported.items():
        # the whole help, or (an f-string) the sentences before its first field
        assert declared[name].help.strip(), f"no help found in the source of gpuplan {name}"
        assert (command.help or "").startswith(declared[name].help), name


def test_a_command_runs_through_the_lazy_group() -> None:
    group = typer.main.get_command(app)
    assert group.get_command(None, "crawl").params  # type: ignore[attr-defined]
    assert group.get_command(None, "no-such-command") is None  # type: ignore[attr-defined]


def _help(*args: str) -> list[str]:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_the_top_level_help_lists_what_most_people_run_first() -> None:
    lines = _help()
    listed = lines[lines.index("Commands:") + 1 :]
    assert [line.split()[0] for line in listed[:3]] == ["refresh", "plans", "size"]
    rest = [line.split()[0] for line in listed[3:] if line.startswith("  ") and not line.startswith("   ")]
    assert rest == sorted(rest) and len(rest) == len(declared_commands()) - 3


def test_help_shows_no_value_after_a_flag_and_choices_on_their_own_line() -> None:
    lines = _help("size")
    assert not any("<bool>" in line for line in lines)
    assert any(line.strip() == "--json" or line.strip().startswith("--json ") for line in lines)
    method = next(index for index, line in enumerate(lines) if "--method" in line)
    assert lines[method].split()[:3] == ["-m,", "--method", "<method>"]
    framework = next(index for index, line in enumerate(lines) if "--framework" in line)
    assert lines[framework].split()[:3] == ["-f,", "--framework", "<framework>"]
    # the choices are a paragraph of the option's help, each choice whole
    choices = next(line for line in lines[framework:] if "One of:" in line)
    assert choices.split("One of:")[1].split()[:3] == ["llamafactory", "|", "hf"]
    assert max(len(line) for line in lines) <= 80
    assert len(lines) < 90
