"""Faults every spider must survive, asserted per spider.

Parse-level faults (a cut-off JSON body, an HTML page where JSON belongs) run
in-process over the spider's snapshot. Transport faults (500, 429 with
Retry-After, a timeout) run a real crawl in a child process against a loopback
server answering from the snapshot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crawl_harness import drive, snapshot_of, with_exchange
from crawl_helpers import canonical, crawl_env, default_token, expected_items, loopback_settings, read_jsonl
from loopback_server import Fault, serving

from scrapers.crawl.runner import run_crawl
from scrapers.registry import platforms, spider_class

HTML_PAGE = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>checking</body></html>"


def _first_json_exchange(platform: str) -> tuple[int, bool]:
    """The snapshot exchange of the first JSON answer the spider reads; is it the spider's first request?"""
    snapshot = snapshot_of(platform)
    requests = drive(platform, snapshot).requests
    for position, request in enumerate(requests):
        exchange = snapshot.find(request.method, request.meta["source_url"], request.body)
        if exchange is not None and "json" in exchange.headers.get("Content-Type", ""):
            return snapshot.exchanges.index(exchange), position == 0
    pytest.skip(f"{platform}'s default path reads no JSON answer")


def _with_token(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    token = default_token(platform)
    if token is not None:
        monkeypatch.setenv(spider_class(platform).token.env, token)


@pytest.mark.parametrize("platform", platforms())
def test_a_cut_off_json_body_fails_the_crawl(platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_token(monkeypatch, platform)
    index, first = _first_json_exchange(platform)
    body = snapshot_of(platform).exchanges[index].body
    outcome = drive(platform, with_exchange(snapshot_of(platform), index, body=body[: len(body) // 2]))
    assert "invalid JSON (the body looks cut off)" in outcome.error
    assert outcome.status == ("failed" if first else "partial")


@pytest.mark.parametrize("platform", platforms())
def test_an_html_page_where_json_belongs_fails_the_crawl(
    platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_token(monkeypatch, platform)
    index, first = _first_json_exchange(platform)
    snapshot = with_exchange(
        snapshot_of(platform), index, body=HTML_PAGE, headers={"Content-Type": "text/html; charset=utf-8"}
    )
    outcome = drive(platform, snapshot)
    assert "expected JSON, got an HTML page (text/html; charset=utf-8): '<!DOCTYPE html>" in outcome.error
    assert outcome.status == ("failed" if first else "partial")


@pytest.mark.faults
@pytest.mark.parametrize("platform", platforms())
def test_500_429_and_a_timeout_are_retried_until_the_answer_comes(platform: str, tmp_path: Path) -> None:
    if not any(e.url.startswith(("http://", "https://")) for e in snapshot_of(platform).exchanges):
        pytest.skip(f"{platform} reads a local file: no transport to fail")
    # Retry-After: 0 keeps this quick; that a longer one is waited for is tested once, in test_runner.py.
    script = [Fault(status=500), Fault(status=429, headers={"Retry-After": "0"}), Fault(stall_s=0.8)]
    with serving(snapshot_of(platform), script) as server:
        summary = run_crawl(
            platform,
            tmp_path,
            env=crawl_env(platform, default_token(platform)),
            # Spare retries: on a busy machine a healthy answer may also miss the short timeout.
            settings=loopback_settings(server.url, DOWNLOAD_TIMEOUT="0.5", RETRY_TIMES="6"),
        )
        statuses = [hit.status for hit in server.hits if hit.path == server.hits[0].path]
    assert (summary.status, summary.error) == ("ok", None)
    assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items(platform))
    assert statuses[:3] == [500, 429, 200]  # the third answer came too late: a timeout
    assert len(statuses) >= 4 and summary.stats["retries"] >= 3
