"""Benchmark: the Vast.ai spider parses a market-sized bundles answer (10,000 offers) in under 1 s.

Measures what a crawl spends per response after the download: JSON decoding, the
spider's callback (GPU names, stock, both prices per offer) and the offer checks of
the item pipeline. The answer is the bundled snapshot's 12 offers repeated with new
ids, GPU memory and prices, so names repeat as they do in the real market.

    /work/venv/bin/python bench/bench_parse.py [--offers 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from scrapers.pipelines import OfferChecks
from scrapers.registry import fixture_dir
from scrapers.spiders.vastai import BUNDLES_URL, VastaiSpider

TARGET_S = 1.0


def market_answer(offers: int) -> bytes:
    template = json.loads((fixture_dir("vastai") / "01-api-v0-bundles.json").read_text("utf-8"))["offers"]
    rows = []
    for n in range(offers):
        row = dict(template[n % len(template)])
        row["id"] = 40_000_000 + n
        row["dph_total"] = round(row["dph_total"] * (0.8 + (n % 41) / 100), 4)
        rows.append(row)
    return json.dumps({"offers": rows}).encode("utf-8")


def parse_once(body: bytes) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, items) for one parse of `body`."""
    crawler = get_crawler(VastaiSpider)
    spider = VastaiSpider.from_crawler(crawler)
    crawler.spider = spider
    pipeline = OfferChecks(crawler)
    request = Request(BUNDLES_URL, method="POST", meta={"source_url": BUNDLES_URL})
    headers = {"Content-Type": "application/json", "Date": "Mon, 30 Nov 2026 06:00:00 GMT"}
    response = TextResponse(BUNDLES_URL, body=body, headers=headers, encoding="utf-8", request=request)
    started, started_cpu = time.perf_counter(), time.process_time()
    items = [pipeline.process_item(item) for item in spider.parse_rows(response)]
    pipeline.close_spider()
    return time.perf_counter() - started, time.process_time() - started_cpu, len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # 10,000 offers is the request's limit: the spider rightly warns the result may be partial.
    logging.getLogger(VastaiSpider.name).setLevel(logging.ERROR)
    body = market_answer(args.offers)
    runs = [parse_once(body) for _ in range(args.repeat)]
    best_s = min(wall for wall, _, _ in runs)
    best_cpu_s = min(cpu for _, cpu, _ in runs)
    print(
        f"{args.offers} offers ({len(body) / 1e6:.1f} MB) -> {runs[0][2]} items: "
        f"best of {args.repeat}: {best_s:.3f} s wall, {best_cpu_s:.3f} s CPU"
    )
    # Judged on CPU time: on a shared machine the wall clock measures the neighbours too.
    print(f"target < {TARGET_S:.1f} s: {'met' if best_cpu_s < TARGET_S else 'MISSED'}")
    if best_cpu_s >= TARGET_S:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
