"""The quotes source: the bundled example, a user's file read live, bad lines, validity, offline replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawl_harness import drive, snapshot_of
from crawl_helpers import canonical, crawl_env, expected_items, read_jsonl

from scrapers.crawl.runner import run_crawl
from scrapers.replay import Exchange, Snapshot
from scrapers.spiders.quotes import EXAMPLE_URL

HEADER = (
    "seller,gpu,gpu_count,price,currency,price_per,billing_period,min_term,stock,valid_from,valid_to,region\n"
)
SNAPSHOT_DAY = "Mon, 30 Nov 2026 06:00:00 GMT"  # the day every drive() below is observed on


@pytest.fixture(autouse=True)
def _no_quotes_file_of_yours(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process crawls read GPUPLAN_QUOTES_FILE: tests start from the bundled example."""
    monkeypatch.delenv("GPUPLAN_QUOTES_FILE", raising=False)


def _file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, content: bytes) -> Snapshot:
    """`content` as the user's quotes file, answered on the snapshot's day (in-process drive)."""
    path = tmp_path / name
    path.write_bytes(content)
    monkeypatch.setenv("GPUPLAN_QUOTES_FILE", str(path))
    exchange = Exchange("GET", path.as_uri(), "", 200, {"Date": SNAPSHOT_DAY}, content)
    return Snapshot(tmp_path, {"platform": "quotes"}, [exchange])


def test_the_example_holds_the_articles_monthly_quotes() -> None:
    outcome = drive("quotes")
    assert outcome.status == "ok"
    quotes = {(o.gpu_model, o.price_amount, o.min_term_periods) for o in outcome.offers}
    assert quotes == {("Ascend 910B 64GB", 2139.0, 1), ("H20 96GB", 4464.0, 1), ("H800 80GB", 9993.0, 1)}
    assert {(o.price_currency, o.price_per, o.billing_period, o.pricing_type) for o in outcome.offers} == {
        ("CNY", "gpu", "month", "monthly_plan")
    }
    assert {o.extra["seller"] for o in outcome.offers} == {"聚力算力平台"}
    assert {o.available_gpus for o in outcome.offers} == {None}
    assert {o.source_url for o in outcome.offers} == {EXAMPLE_URL}


def test_bad_lines_are_errors_with_line_numbers_and_good_lines_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    content = (
        HEADER
        + "经纪乙,RTX 4090 48G,8,9800,CNY,instance,month,3,16,,,华东\n"
        + "经纪乙,A800 80G,1,0,CNY,gpu,month,1,,,,\n"
        + "经纪乙,H20 141G,1,6.5,CNY,gpu,hour,1,售罄,,,\n"
        + "经纪乙,RTX 4090 48G,8,9700,CNY,instance,month,3,,,,华东\n"
    )
    outcome = drive("quotes", _file(monkeypatch, tmp_path, "quotes.csv", content.encode()))
    assert outcome.status == "partial"
    assert outcome.errors == [
        "quotes.csv line 3: price must be > 0, got '0'",
        "quotes.csv line 5: the same quote as line 2 (经纪乙/RTX 4090 48G/8x/华东/3 month), both in force",
    ]
    assert [(r.reason, r.raw["line"]) for r in outcome.rejected] == [
        ("quote_invalid", 3),
        ("quote_invalid", 5),
    ]
    offers = {o.gpu_model: o for o in outcome.offers}
    node = offers["RTX 4090 48GB"]
    assert (node.gpu_count, node.price_per, node.min_term_periods, node.available_gpus, node.region) == (
        8,
        "instance",
        3,
        16,
        "华东",
    )
    assert (offers["H20 141GB"].pricing_type, offers["H20 141GB"].available_gpus) == ("on_demand", 0)


def test_quotes_outside_their_validity_are_rejected_but_are_no_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    content = (
        HEADER
        + "经纪甲,L20,1,2.5,CNY,gpu,hour,1,,2026-11-01,2026-11-29,\n"  # ended the day before
        + "经纪甲,L20,1,2.4,CNY,gpu,hour,1,,2026-12-01,,\n"  # starts the day after
        + "经纪甲,L20,1,2.6,CNY,gpu,hour,2,,2026-11-30,2026-11-30,\n"  # valid that very day
    )
    outcome = drive("quotes", _file(monkeypatch, tmp_path, "quotes.csv", content.encode()))
    assert (outcome.status, outcome.errors) == ("ok", [])
    assert sorted(r.reason for r in outcome.rejected) == ["quote_expired", "quote_not_yet_valid"]
    assert [o.price_amount for o in outcome.offers] == [2.6]


def test_a_file_of_expired_quotes_fails_saying_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    content = (
        "- {seller: 甲, gpu: L20, price: 2.5, currency: CNY, billing_period: hour, valid_to: 2026-01-31}"
    )
    outcome = drive("quotes", _file(monkeypatch, tmp_path, "quotes.yaml", content.encode()))
    assert (outcome.status, outcome.error) == ("failed", "all 1 quotes were rejected (quote_expired ×1)")


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("quotes.csv", "某经纪,L20\n".encode("gb18030"), "quotes.csv is not UTF-8 text (byte "),
        ("quotes.yaml", b"# nothing yet\n", "quotes.yaml holds no quotes"),
        ("quotes.csv", b"seller,gpu,cost\n", "quotes.csv line 1: unknown column 'cost'"),
    ],
)
def test_a_file_that_cannot_be_read_fails_the_crawl(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, content: bytes, error: str
) -> None:
    outcome = drive("quotes", _file(monkeypatch, tmp_path, name, content))
    assert outcome.status == "failed"
    assert outcome.error.startswith(error)


def test_a_relative_path_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_QUOTES_FILE", "quotes.yaml")
    outcome = drive("quotes")
    assert (outcome.status, outcome.error) == (
        "failed",
        "GPUPLAN_QUOTES_FILE must be an absolute path, got quotes.yaml",
    )


@pytest.mark.slow
def test_a_live_crawl_reads_the_users_file_and_a_missing_one_fails_at_once(tmp_path: Path) -> None:
    path = tmp_path / "报价.csv"
    path.write_text(HEADER + "经纪甲,RTX 4090 48G,1,3.2,CNY,gpu,hour,1,4,,,\n", "utf-8")
    summary = run_crawl("quotes", tmp_path / "out", env={**crawl_env(), "GPUPLAN_QUOTES_FILE": str(path)})
    assert summary.status == "ok"
    (offer,) = read_jsonl(Path(summary.feed))
    assert (offer["source_url"], offer["price_amount"], offer["extra"]["file"]) == (
        path.as_uri(),
        3.2,
        "报价.csv",
    )
    missing = run_crawl(
        "quotes", tmp_path / "out", env={**crawl_env(), "GPUPLAN_QUOTES_FILE": str(tmp_path / "x.yaml")}
    )
    assert missing.status == "failed"
    assert missing.error.startswith("the quotes file cannot be read (FileNotFoundError from file://")
    assert missing.stats["retries"] == 0


@pytest.mark.slow
def test_offline_replay_reads_the_bundled_example_whatever_the_setting(tmp_path: Path) -> None:
    env = {**crawl_env(), "GPUPLAN_QUOTES_FILE": str(tmp_path / "not-read.csv")}
    summary = run_crawl("quotes", tmp_path, offline=True, env=env)
    assert (summary.status, summary.error) == ("ok", None)
    assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items("quotes"))
    assert "聚力算力平台".encode() in Path(summary.feed).read_bytes()


def test_the_snapshot_is_the_bundled_example_itself() -> None:
    (exchange,) = snapshot_of("quotes").exchanges
    example = Path(__file__).parents[2] / "scrapers" / "data" / "quotes.example.yaml"
    assert exchange.url == EXAMPLE_URL
    assert exchange.body == example.read_bytes()
