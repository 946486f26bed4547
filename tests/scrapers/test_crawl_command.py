"""`gpuplan crawl`: one platform or all, a summary table, and an exit status that means something."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crawl_helpers import crawl_env, loopback_settings, read_jsonl
from loopback import serving
from typer.testing import CliRunner

from gpuplan.cli import app
from gpuplan.commands import crawl as crawl_command
from scrapers.crawl.runner import CrawlJob, run_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.registry import fixture_dir, platforms
from scrapers.replay import Snapshot


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["crawl", *args], env=env)


@pytest.mark.slow
def test_one_platform_offline_writes_feed_and_summary(tmp_path: Path) -> None:
    result = _invoke("vastai", "--offline", "--out-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "vastai: ok, 46 offers" in result.output
    assert (tmp_path / "vastai.jsonl").is_file()
    assert CrawlSummary.read(tmp_path / "vastai.summary.json").status == "ok"


@pytest.mark.slow
def test_output_file_puts_the_feed_where_asked(tmp_path: Path) -> None:
    target = tmp_path / "feeds" / "vast-today.jsonl"
    result = _invoke("vastai", "--offline", "-o", str(target))
    assert result.exit_code == 0, result.output
    summary = CrawlSummary.read(tmp_path / "feeds" / "vastai.summary.json")
    assert summary.feed == target.resolve() and target.is_file()


@pytest.mark.slow
def test_offline_crawls_default_to_their_own_folder(tmp_path: Path) -> None:
    result = _invoke("datacrunch", "--offline", env={"GPUPLAN_CRAWL_DIR": str(tmp_path)})
    assert result.exit_code == 0, result.output
    (summary,) = tmp_path.glob("offline/*/datacrunch.summary.json")
    assert CrawlSummary.read(summary).offline


@pytest.mark.slow
def test_a_folder_recorded_with_record_replays_with_replay(tmp_path: Path) -> None:
    # Record the day before of Vast as a live crawl would (through a loopback server), then replay
    # the recorded folder as a user or a bug report would hand it over.
    recording = tmp_path / "bug-report"
    with serving(Snapshot.load(fixture_dir("vastai") / "previous")) as server:
        recorded = run_crawl(
            "vastai",
            tmp_path / "live",
            env=crawl_env(),
            settings=loopback_settings(server.url),
            record_dir=recording,
        )
    assert recorded.status == "ok" and (recording / "snapshot.json").is_file()
    result = _invoke("vastai", "--replay", str(recording), "--out-dir", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    recorded_offers = len(
        (fixture_dir("vastai") / "previous" / "expected.jsonl").read_text("utf-8").splitlines()
    )
    assert f"vastai: ok, {recorded_offers} offers" in result.output
    summary = CrawlSummary.read(tmp_path / "out" / "vastai.summary.json")
    assert summary.offline and summary.status == "ok"
    feed = read_jsonl(tmp_path / "out" / "vastai.jsonl")
    prices = {o["offer_id"]: o["price_amount"] for o in feed if o["pricing_type"] == "on_demand"}
    assert prices["28941031"] == 1.9344  # that day's price, not the latest day's


def test_a_replay_folder_without_a_snapshot_fails_clearly(tmp_path: Path) -> None:
    result = _invoke("vastai", "--replay", str(tmp_path / "empty"), "--out-dir", str(tmp_path / "out"))
    summary = CrawlSummary.read(tmp_path / "out" / "vastai.summary.json")
    assert summary.status == "failed" and "no snapshot of vastai to replay" in (summary.error or "")
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give one PLATFORM or --all"),
        (("vastai", "--all"), "give one PLATFORM or --all"),
        (("--all", "-o", "x.jsonl"), "--output, --record and --replay take one platform"),
        (("--all", "--replay", "x"), "--output, --record and --replay take one platform"),
        (("nope", "--offline"), "unknown platform 'nope'"),
    ],
)
def test_usage_errors_say_what_is_wrong(args: tuple[str, ...], message: str) -> None:
    result = _invoke(*args)
    assert result.exit_code == 2
    assert message in result.output


def _summary(platform: str, status: str) -> CrawlSummary:
    offers = 3 if status in ("ok", "partial") else 0
    return CrawlSummary(
        platform=platform,
        status=status,
        error=None if status == "ok" else f"{platform} went {status}",
        started_at="2026-11-30T06:00:00Z",
        finished_at="2026-11-30T06:00:02Z",
        items_yielded=offers,
        offline=True,
        stats={"rejected": 1, "stock_known": 2, "stock_unknown": 1, "duration_s": 2.0},
    )


@pytest.mark.parametrize(
    ("statuses", "exit_code"),
    [
        (["failed", "ok"], 0),
        (["failed", "partial"], 0),
        (["failed", "skipped"], 1),
        (["failed", "failed"], 1),
    ],
)
def _fake_crawl(statuses: dict[str, str], calls: list[list[str]]) -> Any:
    """Stands in for `scrapers.crawl.runner.crawl`: reports each platform done, in order."""

    def fake(jobs: list[CrawlJob], out_dir: Path, *, on_progress: Any = None, **_: Any) -> list[CrawlSummary]:
        calls.append([job.platform for job in jobs])
        summaries = [_summary(job.platform, statuses.get(job.platform, "ok")) for job in jobs]
        for summary in summaries:
            on_progress(summary.platform, "crawling", None)
            on_progress(summary.platform, "done", summary)
        return summaries

    return fake


@pytest.mark.slow
@pytest.mark.parametrize(
    ("statuses", "exit_code"),
    [
        (["failed", "ok"], 0),
        (["failed", "partial"], 0),
        (["failed", "skipped"], 1),
        (["failed", "failed"], 1),
    ],
)
def test_all_continues_past_failures_and_exits_1_only_when_nothing_was_crawled(
    statuses: list[str], exit_code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(crawl_command, "platforms", lambda: ["alpha", "beta"])
    fake = _fake_crawl(dict(zip(["alpha", "beta"], statuses, strict=True)), calls)
    monkeypatch.setattr(crawl_command, "crawl", fake)
    result = _invoke("--all", "--offline", "--out-dir", str(tmp_path))
    assert calls == [["alpha", "beta"]], "every platform in one crawl run"
    assert result.exit_code == exit_code, result.output
    # one line per platform as it ends, the reason on it; then the table
    assert "alpha: failed, 0 offers in 2.0 s: alpha went failed" in result.output
    after_table = result.output[result.output.index("crawl summary") :]
    assert "alpha" in after_table and "beta" in after_table


@pytest.mark.slow
def test_all_runs_every_platform_of_the_spider_loader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(crawl_command, "crawl", _fake_crawl({}, calls))
    assert _invoke("--all", "--out-dir", str(tmp_path)).exit_code == 0
    assert calls == [platforms()]
