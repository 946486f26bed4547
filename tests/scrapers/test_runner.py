"""The runner: crawls in a child process, a summary whatever happens, and the status rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crawl_harness import snapshot_of
from crawl_helpers import canonical, crawl_env, expected_items, loopback_settings, read_jsonl
from loopback import Answer, failing, serving

from scrapers import registry
from scrapers.crawl import runner
from scrapers.crawl.files import summarize
from scrapers.crawl.runner import run_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import Token
from scrapers.registry import UnknownPlatform
from scrapers.spiders.vastai import VastaiSpider


def _report(finish_reason: str = "finished", **stats: Any) -> dict[str, Any]:
    return {"finish_reason": finish_reason, "stats": stats}


@pytest.mark.parametrize(
    ("report", "offers", "rejected", "status", "error"),
    [
        (_report(**{"gpuplan/offers": 5}), 5, 0, "ok", None),
        (
            _report(**{"gpuplan/offers": 5, "gpuplan/errors": ["HTTP 500 from u"]}),
            5,
            0,
            "partial",
            "HTTP 500 from u",
        ),
        (_report(**{"gpuplan/offers": 5, "gpuplan/partial": "limit hit"}), 5, 0, "partial", "limit hit"),
        (
            _report("closespider_timeout", **{"gpuplan/offers": 5}),
            5,
            0,
            "partial",
            "crawl stopped early: closespider_timeout",
        ),
        (_report(**{"gpuplan/errors": ["timed out", "HTTP 429"]}), 0, 0, "failed", "timed out; HTTP 429"),
        (_report("shutdown"), 0, 0, "failed", "crawl stopped early: shutdown"),
        (
            _report(**{"gpuplan/rejected/price_absurd": 2, "gpuplan/rejected/price_not_positive": 1}),
            0,
            3,
            "failed",
            "all 3 quotes were rejected (price_absurd ×2, price_not_positive ×1)",
        ),
        (_report(), 0, 0, "failed", "no offers: the platform returned nothing the spider could read"),
        (_report(**{"gpuplan/offers": 5}), 3, 0, "failed", "the feed holds 3 offers but the crawl yielded 5"),
        (
            _report(**{"gpuplan/skipped": "skipped: set AUTODL_TOKEN"}),
            0,
            0,
            "skipped",
            "skipped: set AUTODL_TOKEN",
        ),
    ],
)
def test_status_rules(
    report: dict[str, Any], offers: int, rejected: int, status: str, error: str | None
) -> None:
    assert summarize(report, offers, rejected)[:2] == (status, error)


def test_summary_stats_carry_the_counts() -> None:
    stats = {
        "gpuplan/offers": 4,
        "gpuplan/stock_known": 3,
        "gpuplan/stock_unknown": 1,
        "gpuplan/rejected/price_absurd": 1,
        "gpuplan/unknown_gpus": {"Z100": 3},
        "gpuplan/unverified": "read from a page no public copy confirms",
        "downloader/request_count": 2,
        "retry/count": 1,
        "gpuplan/read_sources": {"https://b.invalid/2": True, "https://a.invalid/1": True},
    }
    _, _, summary_stats = summarize(_report(**stats), 4, 1)
    assert summary_stats == {
        "offers": 4,
        "rejected": 1,
        "rejected_reasons": {"price_absurd": 1},
        "stock_known": 3,
        "stock_unknown": 1,
        "unknown_gpus": {"Z100": 3},
        "requests": 2,
        "retries": 1,
        "failures": 0,
        "errors": [],
        "partial": None,
        "unverified": "read from a page no public copy confirms",
        "clock": None,
        "finish_reason": "finished",
        "read_sources": ["https://a.invalid/1", "https://b.invalid/2"],
    }


def test_an_unknown_platform_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownPlatform, match=r"unknown platform 'nope'; known: .*vastai"):
        run_crawl("nope", tmp_path)


def test_every_declared_credential_is_a_secret_to_redact() -> None:
    """A companion key declared beside the token (compshare's private key, which only signs) is
    redacted like the token."""
    env = {"COMPSHARE_PUBLIC_KEY": "public-1", "COMPSHARE_PRIVATE_KEY": "private-2", "OTHER": "x"}
    assert set(registry.token_secrets(env)) == {"public-1", "private-2"}


def test_a_missing_required_token_skips_without_starting_a_crawl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NeedsToken(VastaiSpider):
        token = Token(env="AUTODL_TOKEN", required=True)

    monkeypatch.setattr(runner, "spider_class", lambda name: NeedsToken)
    summary = run_crawl("vastai", tmp_path, env=crawl_env())
    assert (summary.status, summary.error) == (
        "skipped",
        "skipped: vastai needs a login token; set AUTODL_TOKEN",
    )
    assert summary.feed is None and summary.items_yielded == 0
    assert CrawlSummary.read(tmp_path / "vastai.summary.json") == summary
    assert not (tmp_path / "vastai.log").exists(), "no child process was started"


def test_offline_without_a_snapshot_fails_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "FIXTURES", tmp_path / "no-fixtures")
    summary = run_crawl("vastai", tmp_path, offline=True, env=crawl_env())
    assert summary.status == "failed"
    assert summary.error.startswith("no snapshot of vastai to replay")


@pytest.mark.slow
def test_a_crawl_that_cannot_start_is_a_failed_summary_and_old_files_are_gone(tmp_path: Path) -> None:
    (tmp_path / "vastai.jsonl").write_text('{"stale": "yesterday"}\n')
    summary = run_crawl(
        "vastai",
        tmp_path,
        offline=True,
        env=crawl_env(),
        settings={"ITEM_PIPELINES": '{"no.such.Pipeline": 1}'},
    )
    assert summary.status == "failed"
    assert summary.error == "crawl ended without a report: ModuleNotFoundError: No module named 'no'"
    assert summary.feed is None and not (tmp_path / "vastai.jsonl").exists()


@pytest.mark.slow
def test_a_hanging_child_is_killed_at_the_timeout(tmp_path: Path) -> None:
    with serving(snapshot_of("vastai"), then=Answer(stall_s=10)) as server:
        summary = run_crawl(
            "vastai",
            tmp_path,
            env=crawl_env(),
            timeout_s=2.5,
            settings=loopback_settings(server.url, DOWNLOAD_TIMEOUT="30", CLOSESPIDER_TIMEOUT="0"),
        )
    assert (summary.status, summary.error) == ("failed", "crawl did not finish within 2.5 s and was killed")


@pytest.mark.faults
def test_a_429_retry_after_is_waited_for(tmp_path: Path) -> None:
    script = [failing(429, headers={"Retry-After": "1"})]
    with serving(snapshot_of("vastai"), first=script, first_path_only=True) as server:
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=loopback_settings(server.url))
        first, second = server.hits[:2]
    assert (summary.status, summary.stats["retries"]) == ("ok", 1)
    assert (first.status, second.status) == (429, 200)
    assert second.arrived_s - first.arrived_s >= 1.0


@pytest.mark.faults
def test_a_server_error_that_persists_fails_after_the_retries(tmp_path: Path) -> None:
    with serving(snapshot_of("vastai"), then=failing(503)) as server:
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=loopback_settings(server.url))
        attempts = len(server.hits)
    assert summary.status == "failed"
    # The error body's message comes along.
    assert (
        summary.error
        == "HTTP 503 from https://console.vast.ai/api/v0/bundles/ after 4 attempts: injected fault"
    )
    assert attempts == 4 and summary.stats["retries"] == 3


# Vast's rate limit answer: HTTP 429, plain text, no Retry-After (vast-ai/docs
# api-reference/rate-limits-and-errors.mdx @ 027ea895).
VAST_RATE_LIMITED = failing(429, headers={"Content-Type": "text/plain"}, body=b"API requests too frequent")


@pytest.mark.faults
def test_a_rate_limit_is_asked_again_later_in_the_run(tmp_path: Path) -> None:
    with serving(snapshot_of("vastai"), first=[VAST_RATE_LIMITED], first_path_only=True) as server:
        # The ordinary backoff is 0.05 s here.
        settings = loopback_settings(server.url, RETRY_RATE_LIMITED_BASE_S="0.6")
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=settings)
        first, second = server.hits[:2]
    assert (summary.status, summary.stats["retries"]) == ("ok", 1)
    assert (first.status, second.status) == (429, 200)
    assert second.arrived_s - first.arrived_s >= 0.6


@pytest.mark.faults
def test_a_rate_limit_that_lasts_fails_saying_rate_limited(tmp_path: Path) -> None:
    with serving(snapshot_of("vastai"), then=VAST_RATE_LIMITED) as server:
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=loopback_settings(server.url))
        attempts = len(server.hits)
    assert (summary.status, attempts) == ("failed", 4)
    assert summary.error == (
        "rate limited: HTTP 429 from https://console.vast.ai/api/v0/bundles/ after 4 attempts: "
        "API requests too frequent"
    )


@pytest.mark.faults
def test_a_retry_after_beyond_our_patience_fails_at_once(tmp_path: Path) -> None:
    fault = failing(429, headers={"Retry-After": "3600"})
    with serving(snapshot_of("vastai"), then=fault) as server:
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=loopback_settings(server.url))
        attempts = len(server.hits)
    assert summary.status == "failed"
    assert summary.error.startswith(
        "rate limited: HTTP 429 from https://console.vast.ai/api/v0/bundles/ asks to retry after 3600 s, "
        "more than the 120 s we wait"
    )
    assert attempts == 1


@pytest.mark.faults
def test_a_server_that_never_answers_fails_as_a_timeout(tmp_path: Path) -> None:
    with serving(snapshot_of("vastai"), then=Answer(stall_s=1.0)) as server:
        summary = run_crawl(
            "vastai",
            tmp_path,
            env=crawl_env(),
            settings=loopback_settings(server.url, DOWNLOAD_TIMEOUT="0.3", RETRY_TIMES="1"),
        )
    assert summary.status == "failed"
    assert summary.error == (
        "timed out (no answer in 0.3 s) from https://console.vast.ai/api/v0/bundles/ after 2 attempts"
    )


@pytest.mark.faults
def test_an_error_envelope_fails_the_real_crawl(tmp_path: Path) -> None:
    envelope = failing(200, body=b'{"success": false, "error": "invalid_request", "msg": "Invalid query"}')
    with serving(snapshot_of("vastai"), then=envelope) as server:
        summary = run_crawl("vastai", tmp_path, env=crawl_env(), settings=loopback_settings(server.url))
    assert summary.status == "failed"
    assert summary.error == (
        "the platform answered with an error: invalid_request: Invalid query "
        "(from https://console.vast.ai/api/v0/bundles/)"
    )
    assert summary.items_yielded == 0


@pytest.mark.slow
def test_a_recorded_crawl_replays_to_the_same_items(tmp_path: Path) -> None:
    record = tmp_path / "snapshot"
    with serving(snapshot_of("runpod")) as server:
        live = run_crawl(
            "runpod",
            tmp_path / "live",
            env=crawl_env(),
            settings=loopback_settings(server.url),
            record_dir=record,
        )
    meta = json.loads((record / "snapshot.json").read_text("utf-8"))
    assert meta["synthetic"] is False and meta["recorded_at"] == "2026-11-30T06:00:00Z"
    assert len(meta["exchanges"]) == 12  # the types, the cluster types, 6 secure and 4 community pod sizes
    replay = run_crawl(
        "runpod", tmp_path / "replay", offline=True, env=crawl_env(), settings={"HTTPCACHE_DIR": str(record)}
    )
    assert live.status == replay.status == "ok"
    assert canonical(read_jsonl(Path(replay.feed))) == canonical(read_jsonl(Path(live.feed)))
    assert canonical(read_jsonl(Path(live.feed))) == canonical(expected_items("runpod"))


@pytest.mark.slow
def test_the_api_key_is_never_written(tmp_path: Path) -> None:
    secret = "sk-lambda-do-not-leak-4711"
    with serving(snapshot_of("lambda")) as server:
        summary = run_crawl(
            "lambda",
            tmp_path / "out",
            env=crawl_env("lambda", secret),
            settings={**loopback_settings(server.url), "LOG_LEVEL": "DEBUG"},
            record_dir=tmp_path / "snapshot",
        )
    assert summary.status == "ok"
    assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items("lambda", with_token=True))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text("utf-8", errors="replace"), f"the key leaked into {path}"


@pytest.mark.slow
def test_a_relative_quotes_path_means_the_callers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child crawls in its output folder; the caller's relative path must still work.
    example = Path(__file__).parents[2] / "scrapers" / "data" / "quotes.example.yaml"
    (tmp_path / "mine.yaml").write_bytes(example.read_bytes())
    monkeypatch.chdir(tmp_path)
    env = {**crawl_env(), "GPUPLAN_QUOTES_FILE": "mine.yaml"}
    summary = run_crawl("quotes", tmp_path / "out", env=env)
    assert summary.status == "ok", summary.error
    assert summary.items_yielded == 3
