"""SkyPilot's hosted catalogs (scrapers/spiders/skypilot_catalog.py, gcp.py): what is peculiar to
the family beyond the contract test — the catalog's date (an answer that may be refused or absent),
a broken catalog run, the columns read by name, and the clouds' memory quirks.

Real material: the shared SkyPilot-format samples (shared/samples/skypilot_catalog_format/, the
Lambda catalog as anycloud-sh/catalog mirrored it, and its header-only broken run), read where they
are beside the project; the fixtures' rows are real catalog rows (their README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from crawl_harness import drive, snapshot_of, with_exchange
from crawl_helpers import crawl_env

from scrapers.crawl.runner import run_crawl
from scrapers.replay import SNAPSHOT_FILE, Exchange, Snapshot
from scrapers.skypilot_offers import CatalogTable
from scrapers.spiders.skypilot_catalog import (
    CATALOG_URL,
    COMMITS_URL,
    MIRROR_URL,
    PrimeintellectSpider,
    ShadeformSpider,
    SkyPilotCatalogSpider,
)

SAMPLES = Path(__file__).parents[3] / "shared/samples/skypilot_catalog_format"
RATE_LIMITED = {
    "message": "API rate limit exceeded for 203.0.113.7.",
    "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
}


class LambdaCatalogSpider(SkyPilotCatalogSpider):
    """The family's base on the one cloud whose real catalog history is beside the project."""

    name = "test_lambda_catalog"
    cloud = "lambda"


def _sample(name: str) -> bytes:
    path = SAMPLES / name
    if not path.is_file():
        pytest.skip(f"the shared sample {path} is not beside the project")
    return path.read_bytes()


def _lambda_catalog(table: bytes, date_status: int = 404) -> Snapshot:
    headers = {"Content-Type": "text/plain; charset=utf-8", "Date": "Thu, 07 May 2026 07:30:00 GMT"}
    exchanges = [
        Exchange("GET", CATALOG_URL.format(cloud="lambda"), "", 200, headers, table),
        Exchange(
            "GET", COMMITS_URL.format(cloud="lambda"), "", date_status, headers, json.dumps({}).encode()
        ),
    ]
    return Snapshot(Path("."), {"platform": LambdaCatalogSpider.name}, exchanges)


def test_a_refused_date_request_leaves_the_date_unknown_and_the_crawl_ok() -> None:
    outcome = drive("nebius", with_exchange(snapshot_of("nebius"), 1, status=403, body=RATE_LIMITED))
    assert (outcome.status, outcome.error, outcome.errors) == ("ok", None, [])
    assert len(outcome.offers) == 15 and {o.catalog_date for o in outcome.offers} == {None}
    reason = "HTTP 403 from " + COMMITS_URL.format(cloud="nebius")
    assert {o.extra["catalog_date_unknown"] for o in outcome.offers} == {reason}
    assert outcome.stats["gpuplan/catalog_date_unknown"] == reason
    assert {o.catalog for o in outcome.offers} == {"skypilot-catalog/v8"}


def test_a_commits_answer_naming_no_commit_leaves_the_date_unknown() -> None:
    outcome = drive("hyperstack", with_exchange(snapshot_of("hyperstack"), 1, body=[]))
    assert (outcome.status, outcome.errors) == ("ok", [])
    assert {o.catalog_date for o in outcome.offers} == {None}
    assert all("names no commit date" in o.extra["catalog_date_unknown"] for o in outcome.offers)


def test_the_date_is_the_files_last_commit_day() -> None:
    offer = drive("shadeform").offers[0]
    commit = json.loads(snapshot_of("shadeform").exchanges[1].body)[0]
    assert offer.catalog_date == commit["commit"]["committer"]["date"][:10] == "2026-11-30"
    assert offer.extra["catalog_commit"] == commit["sha"]


@pytest.mark.slow
def test_a_recording_without_the_date_answer_replays_through_scrapy_with_the_date_unknown(
    tmp_path: Path,
) -> None:
    """The real download stack: a request the recording lacks is dropped to its errback."""
    recording = tmp_path / "recording"
    recording.mkdir()
    snapshot = json.loads((snapshot_of("jarvislabs").folder / SNAPSHOT_FILE).read_text("utf-8"))
    snapshot["exchanges"] = snapshot["exchanges"][:1]
    (recording / SNAPSHOT_FILE).write_text(json.dumps(snapshot), "utf-8")
    body = snapshot["exchanges"][0]["response"]["body_file"]
    (recording / body).write_bytes((snapshot_of("jarvislabs").folder / body).read_bytes())
    summary = run_crawl("jarvislabs", tmp_path / "out", replay_dir=recording, env=crawl_env())
    assert (summary.status, summary.error) == ("ok", None), summary.stats
    offers = [json.loads(line) for line in Path(str(summary.feed)).read_text("utf-8").splitlines()]
    assert len(offers) == 6 and {o["catalog_date"] for o in offers} == {None}
    assert all(o["extra"]["catalog_date_unknown"].startswith("not in the offline snapshot") for o in offers)


def test_a_header_only_catalog_is_a_failed_crawl_not_a_sold_out_cloud() -> None:
    outcome = drive(LambdaCatalogSpider, _lambda_catalog(_sample("lambda_vms_2026-05-07_header_only.csv")))
    assert outcome.status == "failed" and outcome.offers == []
    assert outcome.error.startswith("the platform answered with no catalog rows")


def test_the_real_lambda_catalog_reads_by_header_through_the_family() -> None:
    outcome = drive(LambdaCatalogSpider, _lambda_catalog(_sample("lambda_vms_2026-05-07.csv")))
    assert (outcome.status, outcome.rejected) == ("ok", [])
    assert len(outcome.offers) == 391  # its GPU rows; the 34 CPU rows are skipped, not rejected
    assert outcome.stats["gpuplan/catalog_rows_not_gpu"] == 34
    by_id = {offer.offer_id: offer for offer in outcome.offers}
    h100 = by_id["gpu_1x_h100_sxm5@us-east-1"]
    assert (h100.gpu_name_raw, h100.gpu_model, h100.gpu_count, h100.pricing_type) == (
        "H100",
        "H100 SXM 80GB",
        1,
        "on_demand",
    )
    assert by_id["gpu_1x_gh200@us-midwest-1"].gpu_model == "GH200 96GB"
    assert {o.available_gpus for o in outcome.offers} == {None}


def test_a_catalog_of_cpu_instances_only_fails() -> None:
    table = b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
    table += b"cpu_4x_general,,,4.0,16.0,0.2,europe-central-1,,\n"
    outcome = drive(LambdaCatalogSpider, _lambda_catalog(table))
    assert outcome.status == "failed"
    assert outcome.error.startswith("the catalog lists no GPU instance: none of its 1 rows has one")


def test_a_column_gone_from_the_header_is_a_layout_change() -> None:
    table = snapshot_of("nebius").exchanges[0].body.decode("utf-8")
    header, rest = table.split("\n", 1)
    renamed = header.replace(",Price,", ",HourlyPrice,") + "\n" + rest
    outcome = drive("nebius", with_exchange(snapshot_of("nebius"), 0, body=renamed.encode("utf-8")))
    assert outcome.status == "failed"
    assert outcome.error.startswith("the catalog has no column Price (its header: InstanceType,")


class TestCloudMemory:
    """Each fetcher's `SizeInMiB`, as its code writes it."""

    shadeform = ShadeformSpider.table("shadeform", "2026-11-30T06:00:00Z", "")
    primeintellect = PrimeintellectSpider.table("primeintellect", "2026-11-30T06:00:00Z", "")
    cases: ClassVar[list[tuple[CatalogTable, str, int, float | None]]] = [
        # fetch_shadeform.py: 'SizeInMiB': int(config['vram_per_gpu_in_gb'])
        (shadeform, "{'Gpus': [{'Name': 'A6000', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 48}}]}", 8, 48.0),
        # a fixed fetcher's real MiB would be above any card's GB
        (
            shadeform,
            "{'Gpus': [{'Name': 'H100', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}}]}",
            1,
            80.0,
        ),
        # the stored v8 table: the whole machine's memory in the per-GPU field
        (
            primeintellect,
            '{"Gpus":[{"Name":"A100-80GB","Count":8,"MemoryInfo":{"SizeInMiB":655360}}]}',
            8,
            80.0,
        ),
        # fetch_primeintellect.py's rewrite: per GPU, no Gpus list
        (primeintellect, "{'AcceleratorName': 'H100', 'MemoryInfo': {'SizeInMiB': 81920}}", 8, 80.0),
        (primeintellect, "", 8, None),
    ]

    @pytest.mark.parametrize(("spider", "gpu_info", "count", "memory_gb"), cases)
    def test_memory_per_gpu(
        self, spider: CatalogTable, gpu_info: str, count: int, memory_gb: float | None
    ) -> None:
        assert spider.memory_gb({"GpuInfo": gpu_info}, count) == memory_gb


def test_seeweb_is_read_in_euros_and_says_the_currency_is_assumed() -> None:
    outcome = drive("seeweb")
    assert {o.price_currency for o in outcome.offers} == {"EUR"}
    assert "EUR" in outcome.stats["gpuplan/unverified"]
    unlisted = [o for o in outcome.offers if o.region is None]
    assert unlisted and all(o.extra["no_region_listed"] for o in unlisted)


def test_a_gcp_gpu_row_is_priced_with_its_host_and_without_one_rejected() -> None:
    outcome = drive("gcp")
    offer = next(o for o in outcome.offers if o.offer_id == "a2-highgpu-1g+A100:1@us-central1-a")
    assert offer.price_amount == round(offer.extra["gpu_price_usd"] + offer.extra["host_price_usd"], 5)
    assert (offer.gpu_model, offer.gpu_count, offer.region) == ("A100 SXM 40GB", 1, "us-central1")
    assert [(r.reason, r.raw["AcceleratorName"], r.raw["Region"]) for r in outcome.rejected] == [
        ("host_missing", "A100", "asia-northeast1")
    ]
    assert not [o for o in outcome.offers if o.gpu_name_raw.startswith("tpu-")]


def test_githubs_rate_limit_sends_the_crawl_to_skypilots_s3_mirror() -> None:
    snapshot = with_exchange(snapshot_of("nebius"), 0, status=429, body=b"429: Too Many Requests")
    table = snapshot_of("nebius").exchanges[0]
    mirror = Exchange("GET", MIRROR_URL.format(cloud="nebius"), "", 200, table.headers, table.body)
    outcome = drive("nebius", Snapshot(snapshot.folder, snapshot.meta, [*snapshot.exchanges, mirror]))
    assert (outcome.status, outcome.errors) == ("ok", [])
    assert {o.source_url for o in outcome.offers} == {MIRROR_URL.format(cloud="nebius")}
    assert len(outcome.offers) == len(drive("nebius").offers)


def test_a_catalog_refused_otherwise_fails_the_crawl() -> None:
    outcome = drive("nebius", with_exchange(snapshot_of("nebius"), 0, status=404, body=b"404: Not Found"))
    assert (outcome.status, outcome.error) == (
        "failed",
        # the answer's own words follow the status (platform.describe_failure)
        "HTTP 404 from " + CATALOG_URL.format(cloud="nebius") + ": 404: Not Found",
    )
