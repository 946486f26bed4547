"""OCI spider: GPU parts priced per GPU-hour, mapped to shapes; the licence and on-premises
look-alikes left out; a part no client maps, or one whose name no longer names its card."""

from __future__ import annotations

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders.oci import pay_as_you_go


def _by_shape() -> dict[str, object]:
    return {o.offer_id: o for o in drive("oci").offers}


def test_a_part_is_priced_per_gpu_hour_on_each_of_its_shapes() -> None:
    offers = drive("oci").offers
    a10 = {
        o.offer_id: (o.gpu_count, o.price_amount, o.price_per)
        for o in offers
        if o.extra["partNumber"] == "B95909"
    }
    assert a10 == {
        "VM.GPU.A10.1": (1, 2.0, "gpu"),
        "VM.GPU.A10.2": (2, 2.0, "gpu"),
        "BM.GPU.A10.4": (4, 2.0, "gpu"),
    }
    h100 = next(o for o in offers if o.offer_id == "BM.GPU.H100.8")
    assert (h100.gpu_model, h100.gpu_count, h100.price_amount, h100.region) == (
        "H100 SXM 80GB",
        8,
        10.0,
        None,
    )
    assert h100.extra["price_list_updated"] == "2026-08-14T09:09:55.872Z"


def test_licences_and_cloud_at_customer_parts_are_no_rentals() -> None:
    """An NVIDIA AI Enterprise licence (H100 2.50) would undercut the H100 rental (10.00)."""
    outcome = drive("oci")
    parts = {o.extra["partNumber"] for o in outcome.offers}
    assert not parts & {"B111824", "B111830", "B110965", "B111454", "B111455", "B108806"}
    assert min(o.price_amount or 0 for o in outcome.offers if o.gpu_model == "H100 SXM 80GB") == 10.0


def test_a_part_no_client_maps_to_a_shape_is_rejected_with_its_record() -> None:
    rejected = {r.raw["partNumber"]: r.reason for r in drive("oci").rejected}
    assert rejected == {"B109480": "part_without_shape", "B93544": "part_without_shape"}


def test_a_part_whose_name_stops_naming_its_card_is_no_longer_read_from_the_table() -> None:
    body = json_of(snapshot_of("oci").exchanges[0])
    row = next(item for item in body["items"] if item["partNumber"] == "B98415")
    row["displayName"] = "Oracle Cloud Infrastructure - Compute - GPU - B400"  # a reassigned part number
    offer = next(
        o
        for o in drive("oci", with_exchange(snapshot_of("oci"), 0, body=body)).offers
        if o.offer_id == "BM.GPU.H100.8"
    )
    assert (offer.gpu_model, offer.gpu_name_raw) == (None, row["displayName"])


def test_the_pay_as_you_go_usd_price() -> None:
    localizations = [
        {"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9}]},
        {
            "currencyCode": "USD",
            "prices": [{"model": "ANNUAL_COMMIT", "value": 8}, {"model": "PAY_AS_YOU_GO", "value": 10}],
        },
    ]
    assert pay_as_you_go(localizations) == 10.0
    assert pay_as_you_go([{"currencyCode": "USD", "prices": []}]) is None
    assert pay_as_you_go("not a list") is None
