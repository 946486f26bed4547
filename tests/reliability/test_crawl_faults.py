"""Crawl faults end to end: a real crawl (child process) against the fault server, then the real
loader, plans and digest of the day (fault_days.py). One test per fault, one id per platform it
runs on (faults.platforms_for); every case also asserts, through fault_checks.assert_case, that the
failure is visible, that the day went on for the other platforms, and that nothing stored was lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.fault_checks import assert_case, clean_offers, recorded, warehouse_rows
from reliability.fault_days import CrawlRun, FaultMatrix
from reliability.faults import (
    BY_NAME,
    RETRY_AFTER_TOO_LONG_S,
    SHORT_TIMEOUT_S,
    empty_list_error,
    platforms_for,
    web_platforms,
)
from reliability.rewrites import ENVELOPE_MESSAGE, UNKNOWN_WORD

pytestmark = pytest.mark.faults

# scrapers.settings.RETRY_TIMES = 3: the first attempt and three retries.
ATTEMPTS = 4


def on(fault: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("platform", platforms_for(BY_NAME[fault]))


def _cites_the_platform(matrix: FaultMatrix, run: CrawlRun) -> None:
    """The recorded error names the platform's URL, not the loopback server that stood in for it."""
    error = recorded(matrix, run).error
    assert "from https://" in error and "127.0.0.1" not in error, error


@pytest.mark.parametrize("platform", web_platforms())
def test_clean_crawls_make_the_history(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("clean", platform)
    assert run.summary.status == "ok" and run.summary.items_yielded > 0
    assert_case(fault_matrix, run, "ok")


@on("error_envelope_200")
def test_error_envelope_200(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("error_envelope_200", platform)
    assert_case(fault_matrix, run, "failed", ENVELOPE_MESSAGE)


@on("empty_list")
def test_empty_list(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("empty_list", platform)
    assert_case(fault_matrix, run, "failed", empty_list_error(platform))


@on("price_fields_renamed")
def test_price_fields_renamed(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("price_fields_renamed", platform)
    assert run.summary.items_yielded == 0
    assert_case(fault_matrix, run, "failed", run.summary.error.split(" (from ")[0][:60])


@on("absurd_prices")
def test_absurd_prices(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("absurd_prices", platform)
    # passed on by the crawl as the platform said them; the warehouse's one rule set (migration 041)
    # refuses them on load: kept in rejected_offers with the reason, not loaded, not lost
    assert_case(fault_matrix, run, "failed", "absurd price")
    [(rejected,)] = warehouse_rows(
        fault_matrix,
        "SELECT count(*) FROM rejected_offers WHERE crawl_id = $id AND reason LIKE 'absurd price%'",
        id=run.load.crawl_id,
    )
    assert rejected > 0


@on("unknown_gpu_names")
def test_unknown_gpu_names(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("unknown_gpu_names", platform)
    assert any(name.endswith(UNKNOWN_WORD) for name in run.summary.stats["unknown_gpus"]), (
        "the summary does not list the unknown names"
    )
    assert_case(fault_matrix, run, "ok")
    assert run.load.offers_loaded == clean_offers(fault_matrix, platform)  # kept, with their raw names
    # Offers whose card comes from a type code, not a name (Tencent's GN7 -> T4, from SkyPilot's
    # family table), keep it: the rename reaches only the names an answer spells.
    [(renamed, known)] = warehouse_rows(
        fault_matrix,
        "SELECT count(*), count(gpu_model) FROM offers WHERE crawl_id = $id AND gpu_name_raw LIKE $word",
        id=run.load.crawl_id,
        word=f"%{UNKNOWN_WORD}%",
    )
    assert renamed > 0 and known == 0, "an unknown name was mapped to a known GPU"
    if renamed == run.load.offers_loaded:
        assert platform not in fault_matrix.states[run.day].candidate_platforms


@on("wrong_content_type")
def test_wrong_content_type(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("wrong_content_type", platform)
    assert_case(fault_matrix, run, "failed", "expected JSON, got an HTML page (text/html")


@on("fields_renamed")
def test_fields_renamed(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("fields_renamed", platform)
    assert_case(fault_matrix, run, "failed", "has the fields the spider reads")


@on("bytes_not_utf8")
def test_bytes_not_utf8(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("bytes_not_utf8", platform)
    assert_case(fault_matrix, run, "ok")
    assert run.load.offers_loaded == clean_offers(fault_matrix, platform)
    Path(run.summary.feed).read_bytes().decode("utf-8")  # the feed is UTF-8 (strict), whatever came in
    names = warehouse_rows(
        fault_matrix, "SELECT DISTINCT gpu_name_raw FROM offers WHERE crawl_id = $id", id=run.load.crawl_id
    )
    assert any("\ufffd" in name for (name,) in names), "the undecodable byte vanished instead of showing"


@on("duplicated_offers")
def test_duplicated_offers(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("duplicated_offers", platform)
    once = clean_offers(fault_matrix, platform)
    assert run.summary.items_yielded == 2 * once
    assert_case(fault_matrix, run, "partial", f"{once} item(s) rejected")
    assert run.load.offers_loaded == once
    [(rejected,)] = warehouse_rows(
        fault_matrix,
        "SELECT count(*) FROM rejected_offers WHERE crawl_id = $id AND reason LIKE 'duplicate offer_id%'",
        id=run.load.crawl_id,
    )
    assert rejected == once
    [(offers, distinct)] = warehouse_rows(
        fault_matrix,
        "SELECT count(*), count(DISTINCT (offer_id, pricing_type)) FROM offers WHERE crawl_id = $id",
        id=run.load.crawl_id,
    )
    assert offers == distinct == once


@on("server_error_then_recovery")
def test_server_error_then_recovery(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("server_error_then_recovery", platform)
    assert [hit.status for hit in run.hits[:3]] == [503, 503, run.hits[2].status]
    assert run.hits[2].status not in (503, None)
    assert run.summary.stats["retries"] == 2
    assert_case(fault_matrix, run, "ok")
    assert run.load.offers_loaded == clean_offers(fault_matrix, platform)


@on("server_error_persisting")
def test_server_error_persisting(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("server_error_persisting", platform)
    assert [hit.status for hit in run.hits] == [503] * ATTEMPTS
    assert_case(fault_matrix, run, "failed", f"after {ATTEMPTS} attempts")
    assert "HTTP 503" in recorded(fault_matrix, run).error
    _cites_the_platform(fault_matrix, run)


@on("rate_limited_retry_after")
def test_rate_limited_retry_after(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("rate_limited_retry_after", platform)
    assert run.hits[0].status == 429
    assert run.hits[1].arrived_s - run.hits[0].arrived_s >= 1.0, "Retry-After: 1 was not honoured"
    assert_case(fault_matrix, run, "ok")
    assert run.load.offers_loaded == clean_offers(fault_matrix, platform)


@on("rate_limited_too_long")
def test_rate_limited_too_long(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("rate_limited_too_long", platform)
    assert len(run.hits) == 1, "a server asking for a day's pause was asked again"
    assert_case(fault_matrix, run, "failed", f"asks to retry after {RETRY_AFTER_TOO_LONG_S} s")


@on("connection_reset")
def test_connection_reset(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("connection_reset", platform)
    assert [hit.status for hit in run.hits] == [None] * ATTEMPTS
    assert_case(fault_matrix, run, "failed", f"after {ATTEMPTS} attempts")
    _cites_the_platform(fault_matrix, run)


@on("slower_than_timeout")
def test_slower_than_timeout(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("slower_than_timeout", platform)
    assert len(run.hits) == ATTEMPTS
    assert_case(fault_matrix, run, "failed", f"timed out (no answer in {SHORT_TIMEOUT_S:g} s)")


@on("truncated_body")
def test_truncated_body(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("truncated_body", platform)
    assert len(run.hits) == ATTEMPTS
    assert_case(fault_matrix, run, "failed", "DataLoss")


@on("fan_out_request_fails")
def test_fan_out_request_fails(fault_matrix: FaultMatrix, platform: str) -> None:
    run = fault_matrix.run("fan_out_request_fails", platform)
    assert_case(fault_matrix, run, "partial", "HTTP 503 from https://")
    _cites_the_platform(fault_matrix, run)
    # what the answered requests carried is loaded (the failed one may have carried offers or lookups)
    assert 0 < run.load.offers_loaded <= clean_offers(fault_matrix, platform)
