"""The trend query over crawls and imports: one run stands for a platform on a day, our own crawl first."""

from __future__ import annotations

import datetime as dt
import json

import warehouse_template

from scrapers.history import formats
from warehouse import history
from warehouse.imports import import_file
from warehouse.loading import load_crawl


def _crawl(folder, day: str, price: float):
    """Our own crawl of lambda on `day`: one 1x H100 SXM offer (a JSONL feed and its summary)."""
    folder.mkdir(parents=True, exist_ok=True)
    item = {
        "platform": "lambda",
        "offer_id": "gpu_1x_h100_sxm5@us-east-1",
        "gpu_name_raw": "gpu_1x_h100_sxm5",
        "gpu_count": 1,
        "price_amount": price,
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "pricing_type": "on_demand",
        "observed_at": f"{day}T06:00:00Z",
        "source_url": "https://cloud.lambda.ai/api/v1/instance-types",
        "gpu_model": "H100 SXM 80GB",
    }
    (folder / "lambda.jsonl").write_text(json.dumps(item) + "\n")
    summary = {
        "platform": "lambda",
        "status": "ok",
        "error": None,
        "started_at": f"{day}T06:00:00Z",
        "finished_at": f"{day}T06:00:05Z",
        "items_yielded": 1,
        "offline": False,
        "source": "crawl",
        "feed": "lambda.jsonl",
    }
    path = folder / "lambda.summary.json"
    path.write_text(json.dumps(summary))
    return path


def test_our_crawl_stands_for_its_day_over_an_import(lambda_catalogs, tmp_path) -> None:
    con = warehouse_template.scratch()
    load_crawl(con, _crawl(tmp_path / "2026-04-06", "2026-04-06", 4.10))
    for catalog in lambda_catalogs[:2]:
        import_file(con, formats.get("skypilot"), catalog)
    trend = history.price_trend(
        con, "H100 SXM 80GB", dt.date(2026, 4, 1), dt.date(2026, 4, 30), platform="lambda", gpu_count=1
    )
    assert trend["min_usd_per_gpu_hour"].tolist() == [3.78, 4.10]
    assert trend["sources"].tolist() == ["import:skypilot", "crawl"]
    assert trend["offers"].tolist() == [17, 1]  # the imported day is not added to the crawled one


def test_trend_aggregates_platforms_and_filters(lambda_catalogs, sample) -> None:
    con = warehouse_template.scratch()
    import_file(con, formats.get("skypilot"), lambda_catalogs[0])
    import_file(con, formats.get("skypilot"), sample("skypilot_catalog_format/vast_vms_2026-04-29.csv"))
    april = (dt.date(2026, 4, 1), dt.date(2026, 4, 30))
    trend = history.price_trend(con, "H100 SXM 80GB", *april)
    # every GPU count: Lambda's 8x instance is the cheapest per GPU-hour on 2 April (27.52 / 8)
    assert trend[["min_usd_per_gpu_hour", "cheapest_platform"]].values.tolist() == [
        [3.44, "lambda"],
        [1.80, "vastai"],  # the 1x H100 SXM bucket (the 8x one is 14.94 / 8 = 1.87)
    ]
    assert history.price_trend(con, "H100 SXM 80GB", *april, pricing_type="spot").empty  # no spot in either
    assert history.price_trend(con, "H100 SXM 80GB", *april, platform="runpod").empty
