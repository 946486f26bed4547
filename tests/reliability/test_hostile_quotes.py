"""Hostile and careless quotes files (quote prices).

Each test writes a quotes file of our own making (SYNTHETIC quotes, sellers 经纪甲...), crawls it
with the real spider in a child process (`scrapers.crawl.runner.run_crawl`, as `gpuplan crawl quotes`
does with GPUPLAN_QUOTES_FILE set) and loads the crawl into a real warehouse. What main did before
the fix is stated in each test; what must hold now: the quotes that say one price load at that
price, every other one is refused with its line, and a file that is no quotes file at all fails
the crawl in one line, at once.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from warehouse_template import migrated

from reliability.synthetic_crawls import write_crawl
from scrapers.crawl.runner import run_crawl
from scrapers.crawl.summary import CrawlSummary
from warehouse.engine import connect
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

# A crawl that hangs (a FIFO nobody writes to) or never ends (/dev/zero) fails the test here.
CRAWL_TIMEOUT_S = 60.0
HEADER = "seller,gpu,gpu_count,price,currency,price_per,billing_period\n"


def _crawl(tmp_path: Path, name: str, content: str | bytes | None = None) -> CrawlSummary:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    env = {**os.environ, "GPUPLAN_QUOTES_FILE": str(path)}
    return run_crawl("quotes", tmp_path / "out", env=env, timeout_s=CRAWL_TIMEOUT_S)


def _errors(summary: CrawlSummary) -> list[str]:
    return list(summary.stats.get("errors", []))


def _offers(summary: CrawlSummary) -> dict[str, tuple[float, str, str, str]]:
    """Seller -> (price_amount, currency, price_per, billing_period) of the crawl's feed."""
    feed = summary.feed
    assert feed is not None
    return {
        offer["extra"]["seller"]: (
            offer["price_amount"],
            offer["price_currency"],
            offer["price_per"],
            offer["billing_period"],
        )
        for offer in map(json.loads, Path(feed).read_text("utf-8").splitlines())
    }


def _load(tmp_path: Path, summary: CrawlSummary, history: bool = False) -> duckdb.DuckDBPyConnection:
    """A reader of a new warehouse in tmp_path: a SYNTHETIC H100 history first if asked (three
    platforms, so the history rule has other platforms to judge by), then the crawl."""
    warehouse = tmp_path / "warehouse" / "warehouse.duckdb"
    with connect.writer(migrated(warehouse)) as con:
        if history:
            for platform in ("synthcloud", "synthcloud-b", "synthcloud-c"):
                # the day the crawl runs: within the history rule's window of it
                day = datetime.now(UTC).date()
                load_crawl(con, write_crawl(tmp_path / "history", day, 50, platform, platform))
        load_crawl(con, summary)
    return connect.reader(warehouse)


def test_quote_prices_in_words_load_as_meant(tmp_path: Path) -> None:
    """Before: "2.1万" loaded as 2.1, "9.8k" as 9.8, "2,5" as 25; "USD 2.5" under CNY as 2.5 CNY,
    "9.9元/天" billed by the hour as 9.9 CNY an hour, "8卡起租 面议" as 8 CNY an hour."""
    content = HEADER + (
        "经纪甲,华为910B 64G,1,2.1万,CNY,gpu,month\n"
        '经纪乙,RTX 4090 24G,1,"2,5",CNY,gpu,hour\n'
        "经纪丙,H20 96G,1,9.8k,CNY,gpu,month\n"
        "经纪丁,L20,1,USD 2.5,CNY,gpu,hour\n"
        "经纪戊,L20,1,9.9元/天,CNY,gpu,hour\n"
        "经纪己,A800 80G,8,8卡起租 面议,CNY,instance,month\n"
        "经纪庚,A800 80G,8,9800元/台/月,,,\n"
    )
    summary = _crawl(tmp_path, "quotes.csv", content)
    assert summary.status == "partial"
    assert _errors(summary) == [
        "quotes.csv line 5: price says USD but currency is CNY: correct one of them",
        "quotes.csv line 6: price says day but billing_period is hour: correct one of them",
        "quotes.csv line 7: price is not one price: '8卡起租 面议' is price on request",
    ]
    assert _offers(summary) == {
        "经纪甲": (21_000.0, "CNY", "gpu", "month"),
        "经纪乙": (2.5, "CNY", "gpu", "hour"),
        "经纪丙": (9_800.0, "CNY", "gpu", "month"),
        "经纪庚": (9_800.0, "CNY", "instance", "month"),
    }
    with _load(tmp_path, summary) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(4,)]
        refused = con.execute(
            "SELECT count(*) FROM rejected_offers WHERE reason LIKE 'quote_invalid%'"
        ).fetchall()
        assert refused == [(3,)]  # kept, with the problems, in rejected_offers


def test_duplicated_price_column_or_key_is_an_error(tmp_path: Path) -> None:
    """Before: a second `price` column or YAML key silently replaced the first."""
    columns = _crawl(
        tmp_path, "quotes.csv", "seller,gpu,price,currency,billing_period,price\n甲,L20,2.5,CNY,hour,25\n"
    )
    assert columns.status == "failed"
    assert columns.error is not None
    assert columns.error.startswith("quotes.csv line 1: column 'price' twice (columns 3 and 6)")
    keys = (
        "- {seller: 甲, gpu: L20, price: 2.5, currency: CNY, billing_period: hour}\n"
        "- seller: 乙\n  gpu: L20\n  price: 2.4\n  currency: CNY\n  billing_period: hour\n  price: 24\n"
    )
    summary = _crawl(tmp_path, "quotes.yaml", keys)
    assert summary.status == "partial"
    assert _errors(summary) == ["quotes.yaml line 7: price is given twice (lines 4 and 7): keep one"]
    assert set(_offers(summary)) == {"甲"}


def test_a_lone_quote_far_below_the_cards_history_is_judged_implausible(tmp_path: Path) -> None:
    """Before: one mis-typed quote became most of the day's cheapest plans, since the day's price
    floor needs other platforms selling the card that day. Now history judges it: stored, judged
    implausible with its reason, left out of plans."""
    content = HEADER + "经纪甲,H100 SXM 80G,1,0.6元/卡时,,,\n经纪乙,H100 SXM 80G,1,9.5,CNY,gpu,hour\n"
    summary = _crawl(tmp_path, "quotes.csv", content)
    assert summary.status == "ok"  # each quote says one price: the spider passes both on
    with _load(tmp_path, summary, history=True) as con:
        ((status,),) = con.execute("SELECT status FROM crawl_runs WHERE platform = 'quotes'").fetchall()
        assert status == "ok"  # both stored: the verdict is the history rule's, when read
        quoted = con.execute(
            "SELECT price_amount FROM offers WHERE platform = 'quotes' ORDER BY 1"
        ).fetchall()
        assert quoted == [(0.6,), (9.5,)]
        ((amount, reason),) = con.execute(
            "SELECT o.price_amount, i.reason FROM implausible_offers AS i JOIN offers AS o "
            "USING (crawl_id, offer_id, pricing_type) WHERE i.platform = 'quotes'"
        ).fetchall()
        assert amount == 0.6 and reason.startswith("implausible price: 0.09")  # 0.6 CNY
        assert (
            "under 10% of what the other platforms ask for this GPU (1 USD per GPU-hour, the median of 3"
            in reason
        )


def test_yaml_billion_laughs_is_refused_and_the_valid_quote_loads(tmp_path: Path) -> None:
    """Before: a 429-byte file took over 6 GB of RAM, wrote a 350 MB feed, and the loader dropped
    the one valid quote with it."""
    levels = "".join(f"    l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 10))
    content = (
        "- {seller: 甲, gpu: L20, price: 2.5, currency: CNY, billing_period: hour}\n"
        "- seller: 乙\n  gpu: L20\n  price: 2.4\n  currency: CNY\n  billing_period: hour\n"
        "  note:\n    l0: &l0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + levels
    )
    assert len(content.encode()) < 1024
    started = time.monotonic()
    summary = _crawl(tmp_path, "quotes.yaml", content)
    assert time.monotonic() - started < 30
    assert summary.status == "partial"
    assert _errors(summary) == [
        "quotes.yaml line 2: YAML aliases expand this item past 1,000 values "
        "(a 'billion laughs' file?): refused, nothing built from it"
    ]
    assert set(_offers(summary)) == {"甲"}
    out = tmp_path / "out"
    assert sum(path.stat().st_size for path in out.glob("quotes.*jsonl")) < 4096
    with _load(tmp_path, summary) as con:
        assert con.execute("SELECT offer_id FROM offers").fetchall() == [("甲/L20/1x/1 hour",)]


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "oversized"])
def test_a_quotes_path_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    """Before: a FIFO blocked the crawl for ever, /dev/zero read until memory ran out."""
    path = tmp_path / "quotes.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        with path.open("wb") as sparse:  # 5 MiB that take no disk
            sparse.truncate(5 * 1024 * 1024)
    started = time.monotonic()
    summary = _crawl(tmp_path, "quotes.csv")
    assert time.monotonic() - started < 30
    assert summary.status == "failed"
    expected = {
        "fifo": "is a FIFO, not a regular file: refused unread",
        "dev_zero": "is a device, not a regular file: refused unread",
        "oversized": "is 5,242,880 bytes, over the 4,194,304-byte limit of a quotes file: refused unread",
    }[kind]
    assert summary.error is not None  # the path as the runner resolved it (a link: its target), then why
    assert summary.error.startswith("GPUPLAN_QUOTES_FILE /") and summary.error.endswith(f": {expected}")


def test_excel_csv_quirks_are_read_and_the_rest_named_by_line(tmp_path: Path) -> None:
    """Before: Excel's trailing empty header cells, `Seller` and ` GPU ` failed the whole file,
    and a field over 128 KB was reported as "spider bug" with no line number."""
    content = (
        "\ufeff Seller , GPU ,GPU Count,Price,Currency,Price Per, Billing Period ,,\n"
        "经纪甲,L20,1,2.5,CNY,gpu,hour,,\n"
        "经纪乙,L20,1,2.4,CNY,gpu,hour,,\n"
        f'经纪丙,L20,1,2.3,CNY,gpu,hour,,"{"x" * 140_000}\n'
        "经纪丁,L20,1,2.2,CNY,gpu,hour,,\n"
    )
    summary = _crawl(tmp_path, "quotes.csv", content)
    assert summary.status == "partial"
    assert _errors(summary) == [
        "quotes.csv line 4: a field over 131,072 characters; "
        "the rest of the file from here is not read (an unclosed quote?)"
    ]
    assert set(_offers(summary)) == {"经纪甲", "经纪乙"}
