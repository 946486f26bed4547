"""AWS spider: one price document per Location, rows under the Location's name, the GPU family
table, and a document served gzip without saying so."""

from __future__ import annotations

import gzip

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders.aws import AwsSpider, instance_gpus, location_of


def test_the_location_is_written_as_the_pricing_pages_write_it() -> None:
    asked = [r.meta["source_url"] for r in drive("aws").requests]
    assert asked[0] == (
        "https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/"
        "ec2-ondemand-without-sec-sel/US%20East%20(N.%20Virginia)/Linux/index.json"
    )
    assert [location_of(url) for url in asked] == [
        "US East (N. Virginia)",
        "US East (Ohio)",
        "US West (Oregon)",
    ]
    assert AwsSpider.rows_path(asked[1]) == ("regions", "US East (Ohio)")


def test_offers_by_instance_type_per_region_with_the_familys_gpus() -> None:
    offers = {o.offer_id: o for o in drive("aws").offers}
    p5 = offers["p5.48xlarge/us-east-1"]
    assert (p5.gpu_model, p5.gpu_count, p5.price_amount, p5.price_per, p5.region) == (
        "H100 SXM 80GB",
        8,
        55.04,
        "instance",
        "us-east-1",
    )
    assert p5.extra["published"] == "2026-11-27T18:02:11Z"
    assert offers["g5.xlarge/us-west-2"].gpu_model == "A10G 24GB", "AWS's A10G is not an A10"
    assert offers["p4d.24xlarge/us-east-1"].gpu_model == "A100 SXM 40GB"
    assert offers["p4de.24xlarge/us-east-1"].gpu_model == "A100 SXM 80GB"
    assert not any(o.offer_id.startswith(("c6a.", "m7i.", "trn1.")) for o in offers.values())


def test_the_family_table() -> None:
    assert instance_gpus("p6-b200.48xlarge") == ("B200", 180, 8)
    assert instance_gpus("g6e.12xlarge") == ("L40S", 48, 4)
    assert instance_gpus("g4dn.metal") == ("T4", 16, 8)
    assert instance_gpus("g5g.xlarge") is None, "Graviton G5g (T4G) is not in the table"
    assert instance_gpus("trn1.32xlarge") is None


def test_a_document_sent_gzip_without_a_content_encoding_is_read() -> None:
    snapshot = snapshot_of("aws")
    zipped = with_exchange(snapshot, 0, body=gzip.compress(snapshot.exchanges[0].body))
    assert drive("aws", zipped).offers == drive("aws").offers


def test_a_document_without_its_locations_rows_fails_that_location() -> None:
    body = json_of(snapshot_of("aws").exchanges[1])
    body["regions"] = {"US East (N. Virginia)": body["regions"]["US East (Ohio)"]}
    outcome = drive("aws", with_exchange(snapshot_of("aws"), 1, body=body))
    assert outcome.status == "partial"
    assert "no 'US East (Ohio)' at ['regions']" in outcome.error
    assert not any(o.region == "us-east-2" for o in outcome.offers)
