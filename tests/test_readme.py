"""The README is documentation that tests keep true: settings, commands, the three Quickstart commands."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from gpuplan.cli import app
from scrapers import registry

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _settings_table_names() -> set[str]:
    table = README.split("## Settings", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.MULTILINE))


def test_every_environment_variable_read_by_settings_is_in_the_readme_table() -> None:
    source = (ROOT / "config" / "settings.py").read_text(encoding="utf-8")
    # env.get("NAME") for plain values, read.<kind>("NAME") for the checked ones (settings._Reader)
    read = set(re.findall(r'(?:env\.get|read\.\w+)\("([A-Z_]+)"', source))
    assert read, "settings.py reads no variables? the pattern is out of date"
    assert read - {"XDG_DATA_HOME"} <= _settings_table_names()


def test_every_variable_a_spider_reads_is_in_the_readme_table() -> None:
    """Platform tokens and the quotes file are declared by their spiders (one home), and documented."""
    declared = {token.env for token in registry.platform_tokens().values()}
    declared |= {env for name in registry.platforms() if (env := registry.spider_class(name).file_env)}
    assert {"AUTODL_TOKEN", "GPUPLAN_QUOTES_FILE"} <= declared, "the spiders' declarations are not read"
    assert declared <= _settings_table_names()


def test_the_quickstart_has_exactly_install_main_and_test() -> None:
    quickstart = README.split("## Quickstart", 1)[1]
    block = quickstart.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    assert commands == ['pip install -e ".[dev]"', "gpuplan refresh --offline", "python -m pytest"]


def test_ci_runs_the_readme_install_and_test_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -e ".[dev]"' in ci
    assert "python -m pytest" in ci


def test_every_command_has_help_and_is_named_in_the_readme() -> None:
    group = typer.main.get_command(app)
    assert group.commands, "no sub-commands registered"
    for name, command in group.commands.items():
        assert (command.help or "").strip(), f"gpuplan {name} has no help text"
        assert f"gpuplan {name}" in README, f"the README never shows `gpuplan {name}`"
        options = [p for p in command.params if p.param_type_name == "option" and p.name != "help"]
        for option in options:
            assert (getattr(option, "help", None) or "").strip(), f"gpuplan {name} {option.opts}: no help"
