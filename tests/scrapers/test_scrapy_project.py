"""The repository is a Scrapy project (scrapy.cfg): `scrapy list`, `scrapy crawl ... -O`, `scrapy check`
work from its root, with gpuplan's settings, and recorded answers replay through the real spiders
from outside the code (GPUPLAN_ORIGIN_OVERRIDE, GPUPLAN_REPORT_FILE as Scrapy settings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from crawl_harness import snapshot_of
from crawl_helpers import canonical, crawl_env, expected_items, read_jsonl
from loopback_server import serving

from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from scrapers.registry import platforms

pytestmark = pytest.mark.slow

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


def test_scrapy_list_from_the_repository_root_lists_every_platform() -> None:
    listed = _scrapy("list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == platforms()


def test_scrapy_check_runs() -> None:
    checked = _scrapy("check")
    assert checked.returncode == 0, checked.stderr


def test_scrapy_crawl_replays_a_recorded_answer_with_gpuplans_settings(tmp_path: Path) -> None:
    feed, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    with serving(snapshot_of("vastai")) as server:
        crawled = _scrapy(
            "crawl", "vastai", "-O", str(feed),
            "-s", f"{ORIGIN_OVERRIDE_SETTING}={server.url}",
            "-s", f"GPUPLAN_REPORT_FILE={report}",
            "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "DOWNLOAD_DELAY=0",
        )  # fmt: skip
    assert crawled.returncode == 0, crawled.stderr[-2000:]
    # -O exports every item the spider yields: the offers (rejected quotes would be there too).
    offers = [item for item in read_jsonl(feed) if "offer_id" in item and "reason" not in item]
    assert canonical(offers) == canonical(expected_items("vastai"))
    assert json.loads(report.read_text("utf-8"))["finish_reason"] == "finished"
    assert not (ROOT / "out.jsonl").exists() and os.path.exists(feed)
