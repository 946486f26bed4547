"""The repository is a Scrapy project (scrapy.cfg): `scrapy list` and `scrapy check` work from its root,
with gpuplan's settings. That `scrapy crawl SLUG` replays every platform's fixture from a loopback
origin (GPUPLAN_ORIGIN_OVERRIDE, GPUPLAN_REPORT_FILE as Scrapy settings) is a case of the contract
test (test_contract.py)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from crawl_helpers import crawl_env

from scrapers.registry import platforms

ROOT = Path(__file__).parents[2]


def _scrapy(*args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in crawl_env().items() if key != "SCRAPY_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


@pytest.mark.slow
def test_scrapy_list_from_the_repository_root_lists_every_platform() -> None:
    listed = _scrapy("list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == platforms()


@pytest.mark.slow
def test_scrapy_check_runs() -> None:
    checked = _scrapy("check")
    assert checked.returncode == 0, checked.stderr


def test_the_scrapy_project_never_imports_the_crawl_engine() -> None:
    """What `scrapy crawl SLUG` loads (the top of scrapers/, spiders/, quotes/) stands without
    scrapers/crawl/, which runs it; the engine may import the kit, not the other way round."""
    project = [
        path
        for path in (ROOT / "scrapers").rglob("*.py")
        if path.relative_to(ROOT / "scrapers").parts[0] not in ("crawl", "history")
    ]
    offenders = []
    for path in project:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if any(name == "scrapers.crawl" or name.startswith("scrapers.crawl.") for name in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert project and offenders == []
