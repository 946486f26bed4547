"""The contract every spider passes, on its own fixture (as gpuhunt's `OffersIntegrityTests`).

Each case changes the platform's recorded answer the way a platform goes wrong, derived from what
the spider declares (tests/scrapers/row_mutations.py): no table of per-platform mutations. A
spider on the kit's declarative path (`rows_at`) gets every case; one whose answer is a page or a
file gets the cases that apply to it (its offers' integrity, the transport faults). A platform's
own peculiarities are in tests/scrapers/test_spider_<slug>.py, where it has any.

The fixture paths: each platform's default one (a required token stood in), and its token path
where the fixture holds one (`expected.token.jsonl`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from crawl_harness import Outcome, RowTrace, drive, rejections, snapshot_of, with_exchange
from crawl_helpers import (
    ANY_DAY_S,
    canonical,
    crawl_env,
    default_token,
    every_token_env,
    expected_items,
    loopback_settings,
    read_jsonl,
)
from loopback import Answer, failing, serving
from row_mutations import (
    INJECTED,
    MYSTERY_GPU,
    drop,
    emptied,
    envelopes,
    moved,
    prices_of,
    rename_gpu,
    reprice,
    with_every_row,
    with_row,
    with_rows,
)

from scrapers.crawl.runner import CrawlJob, crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.extensions import REPORT_FILE_SETTING
from scrapers.items import CURRENCIES
from scrapers.platform import CLOCK_TOLERANCE_SETTING, ORIGIN_OVERRIDE_SETTING, PlatformSpider
from scrapers.registry import fixture_dir, platforms, spider_class, spider_tokens
from scrapers.replay import Snapshot
from sizing.gpu_names import canonical_models

ROOT = Path(__file__).parents[2]
HTML_PAGE = b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>checking</body></html>"
PATHS = [(p, False) for p in platforms()] + [
    (p, True) for p in platforms() if (fixture_dir(p) / "expected.token.jsonl").is_file()
]
IDS = [f"{p}-token" if token else p for p, token in PATHS]


@dataclasses.dataclass
class Subject:
    """A platform's spider on one path of its fixture, and what that fixture yields untouched."""

    platform: str
    token_path: bool
    spider: type[PlatformSpider]
    snapshot: Snapshot
    baseline: Outcome

    def drive(self, snapshot: Snapshot) -> Outcome:
        return drive(self.platform, snapshot)

    def rows_answers(self) -> list[int]:
        if not self.baseline.row_answers:
            pytest.skip(f"{self.platform}'s spider reads no rows on this path (rows_at)")
        return self.baseline.row_answers

    def target(self) -> RowTrace:
        """The first row that yields an offer: the row the single-row cases change."""
        self.rows_answers()
        for trace in self.baseline.rows:
            if self.baseline.offers_from(trace.exchange, trace.row):
                return trace
        raise AssertionError(f"{self.platform}: no row of the fixture yields an offer")


# The untouched fixture's outcome, once per path and worker: a replay is deterministic (the same
# recording, the same tokens), and ~15 cases per path each drove it again (a third of the file's time).
# The cases only read it.
_BASELINES: dict[tuple[str, bool], Outcome] = {}


@pytest.fixture(params=PATHS, ids=IDS)
def subject(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Subject:
    platform, token_path = request.param
    token = "contract-test-token" if token_path else default_token(platform)
    for spec in spider_tokens(platform) if token else ():
        monkeypatch.setenv(spec.env, token)
    baseline = _BASELINES.get((platform, token_path))
    if baseline is None:
        baseline = _BASELINES[(platform, token_path)] = drive(platform)
    return Subject(platform, token_path, spider_class(platform), snapshot_of(platform), baseline)


# --- what every offer must hold -------------------------------------------------


def test_the_fixture_yields_its_expected_items(subject: Subject) -> None:
    assert (subject.baseline.status, subject.baseline.error) == ("ok", None)
    written = [dataclasses.asdict(offer) for offer in subject.baseline.offers]
    assert canonical(written) == canonical(expected_items(subject.platform, with_token=subject.token_path))


def test_offers_hold_what_every_offer_must(subject: Subject) -> None:
    models = canonical_models()
    for offer in subject.baseline.offers:
        assert offer.platform == subject.platform and offer.offer_id and offer.gpu_name_raw
        assert offer.price_amount is not None and offer.price_amount > 0
        assert offer.price_currency in CURRENCIES and offer.gpu_count >= 1 and offer.min_term_periods >= 1
        assert offer.gpu_model is None or offer.gpu_model in models, offer.gpu_model
        assert offer.gpu_memory_gb is None or offer.gpu_memory_gb > 0
        assert offer.available_gpus is None or offer.available_gpus >= 0
        assert dt.datetime.strptime(offer.observed_at, "%Y-%m-%dT%H:%M:%SZ")
        assert offer.source_url.startswith(("https://", "file:"))


def test_unknown_gpus_are_kept_and_counted_by_their_raw_names(subject: Subject) -> None:
    unknown = Counter(o.gpu_name_raw for o in subject.baseline.offers if o.gpu_model is None)
    assert subject.baseline.stats.get("gpuplan/unknown_gpus", {}) == dict(unknown)


# --- answers that are no market: the crawl fails, never "zero offers" ---------------


def test_without_a_required_token_the_crawl_is_skipped_and_nothing_is_asked(
    subject: Subject, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = subject.spider.token
    if token is None or not token.required or subject.token_path:
        pytest.skip(f"{subject.platform} crawls without a token")
    monkeypatch.delenv(token.env)
    outcome = subject.drive(subject.snapshot)
    message = f"skipped: {subject.platform} needs a login token; set {token.env}"
    assert (outcome.status, outcome.error, outcome.requests) == ("skipped", message, [])


def test_an_http_error_fails_the_crawl_with_the_platforms_message(subject: Subject) -> None:
    first = subject.baseline.requests[0]
    exchange = subject.snapshot.find(first.method, first.meta["source_url"], first.body, first.headers)
    if exchange is None or not exchange.url.startswith("http"):
        pytest.skip(f"{subject.platform} reads a local file: no HTTP status")
    envelope = {"error": {"code": "contract_test", "message": INJECTED}}
    index = subject.snapshot.exchanges.index(exchange)
    outcome = subject.drive(with_exchange(subject.snapshot, index, status=400, body=envelope))
    # One of a fan of first requests (AWS's regions) failing leaves the others' offers: partial.
    assert outcome.status == ("failed" if subject.baseline.started == 1 else "partial")
    assert outcome.error == f"HTTP 400 from {first.meta['source_url']}: contract_test: {INJECTED}"


def test_an_error_envelope_with_http_200_fails_the_crawl(subject: Subject) -> None:
    if not envelopes(subject.spider):
        pytest.skip(f"{subject.platform}'s answers are tables: no envelope")
    for envelope in envelopes(subject.spider):
        snapshot = subject.snapshot
        for exchange in subject.rows_answers():
            snapshot = with_exchange(snapshot, exchange, body=envelope)
        outcome = subject.drive(snapshot)
        assert outcome.status == "failed", envelope
        assert INJECTED in outcome.error and outcome.offers == []


def test_an_empty_answer_is_a_failure_not_an_empty_market(subject: Subject) -> None:
    snapshot = subject.snapshot
    for exchange in subject.rows_answers():
        snapshot = with_rows(snapshot, subject.spider, exchange, emptied)
    outcome = subject.drive(snapshot)
    assert outcome.status == "failed"
    assert outcome.error.startswith(f"the platform answered with no {subject.spider.rows_name}")


def test_rows_moved_elsewhere_are_a_layout_change(subject: Subject) -> None:
    snapshot, named = subject.snapshot, ""
    for exchange in subject.rows_answers():
        changed = moved(snapshot, subject.spider, exchange)
        if changed is None:
            pytest.skip(f"{subject.platform}'s rows are the table itself")
        snapshot, named = changed
    outcome = subject.drive(snapshot)
    assert outcome.status == "failed"
    assert named in outcome.error


def test_rows_without_the_fields_the_spider_reads_are_a_layout_change(subject: Subject) -> None:
    answers = subject.rows_answers()
    snapshot = subject.snapshot
    for field in subject.spider.required[:1] or subject.spider.gpu_name_fields:
        snapshot = with_every_row(snapshot, subject.spider, answers, drop(field))
    outcome = subject.drive(snapshot)
    assert outcome.status == "failed"
    assert "has the fields the spider reads" in outcome.error


# --- one bad row: rejected or kept as it is, never dropped; the crawl goes on ----------


def _fields_a_row_cannot_lack(spider: type[PlatformSpider]) -> Iterator[tuple[str, list]]:
    for field in spider.required:
        yield field, [field]
    names = [name for name in spider.gpu_name_fields if name != spider.rows_keyed_by]
    if names and len(names) == len(spider.gpu_name_fields) and not set(names) & set(spider.required):
        yield "every GPU name", names


def test_an_incomplete_row_is_rejected_not_dropped(subject: Subject) -> None:
    target = subject.target()
    lost = subject.baseline.offers_from(target.exchange, target.row)
    for label, fields in _fields_a_row_cannot_lack(subject.spider):
        snapshot = subject.snapshot
        for field in fields:
            snapshot = with_row(snapshot, subject.spider, target.exchange, target.row, drop(field))
        outcome = subject.drive(snapshot)
        assert outcome.status == subject.baseline.status, label
        incomplete = [r for r in outcome.rejected if r.reason == "record_incomplete"]
        before = [r for r in subject.baseline.rejected if r.reason == "record_incomplete"]
        assert len(incomplete) == len(before) + 1, label
        assert len(outcome.offers) == len(subject.baseline.offers) - len(lost), label


def test_an_unknown_gpu_is_kept_with_its_raw_name_and_counted(subject: Subject) -> None:
    if not subject.spider.gpu_name_fields:
        pytest.skip(f"{subject.platform}'s spider declares no gpu_name_fields")
    target = subject.target()
    outcome = subject.drive(
        with_row(subject.snapshot, subject.spider, target.exchange, target.row, rename_gpu(subject.spider))
    )
    assert outcome.status == subject.baseline.status
    renamed = outcome.offers_from(target.exchange, target.row)
    assert len(renamed) == len(subject.baseline.offers_from(target.exchange, target.row))
    assert {(o.gpu_name_raw, o.gpu_model) for o in renamed} == {(MYSTERY_GPU, None)}
    assert outcome.stats["gpuplan/unknown_gpus"][MYSTERY_GPU] == len(renamed)
    assert len(outcome.offers) == len(subject.baseline.offers)


def test_an_absurd_price_is_passed_on_as_read_and_refused_by_the_warehouse(subject: Subject) -> None:
    target = subject.target()
    offers = subject.baseline.offers_from(target.exchange, target.row)
    # With the parts an offer keeps in `extra`: a price composed of two rows (GCP's GPU row + its
    # host VM's) is in neither, its GPU part is in the row.
    edit = reprice(prices_of(offers, with_listed=True), lambda price: price * 1e6)
    outcome = subject.drive(with_row(subject.snapshot, subject.spider, target.exchange, target.row, edit))
    assert outcome.status == "ok", "the crawl passes on what the platform said"
    absurd = outcome.offers_from(target.exchange, target.row)
    assert absurd and min(o.price_amount or 0 for o in absurd) > max(o.price_amount or 0 for o in offers)
    # The rest of the crawl is the untouched fixture's, offer for offer (so the warehouse judges it as
    # it judges the baseline): only the repriced row's offers need loading, and each is refused.
    changed, untouched = {id(o) for o in absurd}, {id(o) for o in offers}
    assert [o for o in outcome.offers if id(o) not in changed] == [
        o for o in subject.baseline.offers if id(o) not in untouched
    ]
    loaded = dataclasses.replace(outcome, offers=absurd, rejected=[])
    refused = Counter(i for code, i in rejections(loaded, subject.platform) if code == "price_absurd")
    assert refused == Counter(o.offer_id for o in absurd)


def test_a_crawl_whose_every_quote_is_rejected_fails(subject: Subject) -> None:
    subject.rows_answers()
    snapshot = subject.snapshot
    for trace in subject.baseline.rows:
        if trace.offers:
            edit = reprice(prices_of(trace.offers, with_listed=True), lambda price: 0.0)
            snapshot = with_row(snapshot, subject.spider, trace.exchange, trace.row, edit)
    outcome = subject.drive(snapshot)
    assert outcome.offers == []
    assert (outcome.status, outcome.error.split(" (")[0]) == (
        "failed",
        f"all {len(outcome.rejected)} quotes were rejected",
    )


# --- an answer that is not what was asked -------------------------------------------


def _first_data_answer(subject: Subject) -> tuple[int, bool]:
    """The snapshot exchange of the first JSON answer (or rows table) the spider reads; is it the
    answer to the one request every other one follows (not one of a fan of first requests)?"""
    for position, request in enumerate(subject.baseline.requests):
        exchange = subject.snapshot.find(
            request.method, request.meta["source_url"], request.body, request.headers
        )
        if exchange is None:
            continue
        index = subject.snapshot.exchanges.index(exchange)
        if "json" in exchange.headers.get("Content-Type", "") or index in subject.baseline.row_answers:
            return index, position == 0 and subject.baseline.started == 1
    pytest.skip(f"{subject.platform} reads no JSON answer on this path")


def test_a_cut_off_body_fails_the_crawl(subject: Subject) -> None:
    """A JSON answer cut in half is no JSON; a table cut in half ends inside a row (no final line
    end): cut short, never read as rows with cells missing."""
    index, first = _first_data_answer(subject)
    body = subject.snapshot.exchanges[index].body
    outcome = subject.drive(with_exchange(subject.snapshot, index, body=body[: len(body) // 2]))
    table = subject.spider.rows_format == "csv" and index in subject.baseline.row_answers
    said = "the CSV answer is cut short" if table else "invalid JSON (the body looks cut off)"
    assert said in outcome.error
    assert outcome.status == ("failed" if first else "partial")


def test_an_html_page_where_data_belongs_fails_the_crawl(subject: Subject) -> None:
    index, first = _first_data_answer(subject)
    html = {"Content-Type": "text/html; charset=utf-8"}
    outcome = subject.drive(with_exchange(subject.snapshot, index, body=HTML_PAGE, headers=html))
    expected = (
        "CSV" if index in subject.baseline.row_answers and subject.spider.rows_format == "csv" else "JSON"
    )
    assert (
        f"expected {expected}, got an HTML page (text/html; charset=utf-8): '<!DOCTYPE html>" in outcome.error
    )
    assert outcome.status == ("failed" if first else "partial")


# --- the real download stack, in child processes --------------------------------------


def _over_http(platform: str) -> bool:
    return any(e.url.startswith(("http://", "https://")) for e in snapshot_of(platform).exchanges)


def _served_over_http(platform: str) -> None:
    if not _over_http(platform):
        pytest.skip(f"{platform} reads a local file: no transport to fail")


@pytest.fixture(scope="module")
def retried(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[CrawlSummary, list[int | None]]]:
    """Every platform read over HTTP, crawled together in one crawl child as `gpuplan refresh` crawls
    them, each against its own server whose first-asked path answers 500, then 429 (Retry-After: 0),
    then too late (a timeout) before its recorded answer. platform -> (summary, that path's statuses)."""
    names = [platform for platform in platforms() if _over_http(platform)]
    with ExitStack() as stack:
        servers = {}
        for platform in names:
            # Retry-After: 0 keeps this quick; a longer one waited for is tested once, in test_runner.py.
            script = [failing(500), failing(429, headers={"Retry-After": "0"}), Answer(stall_s=0.8)]
            servers[platform] = stack.enter_context(
                serving(snapshot_of(platform), first=script, first_path_only=True)
            )
        # Spare retries: on a busy machine a healthy answer may also miss the short timeout.
        jobs = [
            CrawlJob(
                platform, loopback_settings(servers[platform].url, DOWNLOAD_TIMEOUT="0.5", RETRY_TIMES="6")
            )
            for platform in names
        ]
        summaries = crawl(jobs, tmp_path_factory.mktemp("retried"), env=every_token_env())
        return {
            summary.platform: (
                summary,
                [
                    hit.status
                    for hit in servers[summary.platform].hits
                    if hit.path == servers[summary.platform].first_path
                ],
            )
            for summary in summaries
        }


@pytest.mark.faults
@pytest.mark.parametrize("platform", platforms())
def test_500_429_and_a_timeout_are_retried_until_the_answer_comes(
    retried: dict[str, tuple[CrawlSummary, list[int | None]]], platform: str
) -> None:
    _served_over_http(platform)
    summary, statuses = retried[platform]
    assert (summary.status, summary.error) == ("ok", None)
    assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items(platform))
    assert statuses[:3] == [500, 429, 200]  # the third answer came too late: a timeout
    assert len(statuses) >= 4 and summary.stats["retries"] >= 3


@pytest.mark.slow
@pytest.mark.parametrize("platform", platforms())
def test_scrapy_crawl_replays_the_fixture_from_a_loopback_origin(platform: str, tmp_path: Path) -> None:
    """`scrapy crawl SLUG` from the repository root, every request sent to a recording's server by
    GPUPLAN_ORIGIN_OVERRIDE (path and query kept), writes the fixture's expected offers."""
    _served_over_http(platform)
    feed, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    env = {
        k: v for k, v in crawl_env(platform, default_token(platform)).items() if k != "SCRAPY_SETTINGS_MODULE"
    }
    with serving(snapshot_of(platform)) as server:
        crawled = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", platform, "-O", str(feed),
             "-s", f"{ORIGIN_OVERRIDE_SETTING}={server.url}", "-s", f"{REPORT_FILE_SETTING}={report}",
             "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "DOWNLOAD_DELAY=0",
             "-s", f"{CLOCK_TOLERANCE_SETTING}={ANY_DAY_S}"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        asked = {hit.path for hit in server.hits if hit.path != "/robots.txt"}
    assert crawled.returncode == 0, crawled.stderr[-2000:]
    # -O exports every item the spider yields: the offers, and the rejected quotes (with a reason).
    offers = [item for item in read_jsonl(feed) if "reason" not in item]
    assert canonical(offers) == canonical(expected_items(platform))
    assert json.loads(report.read_text("utf-8"))["finish_reason"] == "finished"
    recorded = {
        exchange.url.split("://", 1)[1].split("/", 1)[1] for exchange in snapshot_of(platform).exchanges
    }
    assert {path.lstrip("/").split("?")[0] for path in asked} <= {path.split("?")[0] for path in recorded}
    assert os.path.exists(feed) and not (ROOT / "out.jsonl").exists()
