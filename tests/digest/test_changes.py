"""digest.changes on a migrated DuckDB with SYNTHETIC rows: one entry per changed plan, the ranking's own
measure, jobs first, and why each plan changed (table-driven)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from synthetic_warehouse import CNY_PER_USD, HOURS_PER_MONTH, NOW

from digest.catalogue import words
from digest.changes import changed_plans
from digest.content import build_digest
from digest.export import digest_object
from digest.render import render
from digest.wording import Wording
from warehouse import daily_plans

DAY = date(2026, 12, 1)
PREVIOUS = DAY - timedelta(days=1)


def _rent(usd_per_gpu_hour: float, gpus: int) -> float:
    return usd_per_gpu_hour * gpus * HOURS_PER_MONTH


def test_one_entry_per_changed_plan_however_many_detail_rows(warehouse):
    """The issue's case: thunder A100 SXM x2 -> vastai A100 PCIe x2 is three plan_changes rows (new
    platform, new GPU, price down) and one entry; the other ranking of the same model is another."""
    plan = warehouse.plan
    warehouse.plans(
        PREVIOUS,
        [
            plan("7B", "lora", "thunder", "A100 SXM 80GB", 2, _rent(1.0, 2), offer_id="th"),
            plan(
                "7B",
                "lora",
                "thunder",
                "A100 SXM 80GB",
                2,
                _rent(1.0, 2),
                offer_id="th",
                ranking="lowest_run_total",
            ),
        ],
    )
    warehouse.plans(
        DAY,
        [
            plan("7B", "lora", "vastai", "A100 PCIe 80GB", 2, _rent(0.41, 2), offer_id="va"),
            plan(
                "7B",
                "lora",
                "vastai",
                "A100 PCIe 80GB",
                2,
                _rent(0.41, 2),
                offer_id="va",
                ranking="lowest_run_total",
            ),
        ],
    )
    for ranking in ("lowest_rent", "lowest_run_total"):
        warehouse.changes(
            DAY,
            [
                {"model": "7B", "method": "lora", "ranking": ranking, "change_type": kind}
                for kind in ("new_platform", "new_gpu", "price_down")
            ],
        )
    entries = build_digest(warehouse.con, DAY, price_move_pct=10.0).plan_changes
    assert [(e.model, e.method, e.ranking, e.change_types) for e in entries] == [
        ("7B", "lora", "lowest_rent", ("new_gpu", "new_platform", "price_down")),
        ("7B", "lora", "lowest_run_total", ("new_gpu", "new_platform", "price_down")),
    ]
    rent = entries[0]
    assert (rent.old.platform, rent.old.gpu_model, rent.old.gpu_count, rent.old.billing_period) == (
        "thunder",
        "A100 SXM 80GB",
        2,
        "hour",
    )
    assert (rent.new.platform, rent.new.gpu_model, rent.new.gpu_count) == ("vastai", "A100 PCIe 80GB", 2)
    assert rent.new.usd_per_gpu_hour == pytest.approx(0.41)
    assert rent.pct_change == pytest.approx(-59.0)


def test_each_ranking_and_a_job_report_their_own_measure_alike_everywhere(warehouse):
    """7B full moves from 4090 x 8 at 10,000 USD a month and 100 USD per billion tokens to H100 x 8
    at 15,000 and 50 (a run of 1B tokens billed by the hour costs its rent per billion tokens: 100 ->
    50 USD); a job's best plan moves from 620 to 480 USD in total. The change detector
    (plan_changes), the digest's text and its JSON say the same sign and percent for each: the
    month's rent rose 50 % (lowest_rent), the run's total fell 50 % (lowest_run_total), the job's
    total fell 22.6 %."""
    plan = warehouse.plan
    for day, platform, gpu, rent, per_btoken in (
        (PREVIOUS, "ppio", "RTX 4090 24GB", 10_000.0, 100.0),
        (DAY, "lambda", "H100 SXM 80GB", 15_000.0, 50.0),
    ):
        cny = {"cost_cny_per_billion_tokens": per_btoken * CNY_PER_USD, "total_cny": per_btoken * CNY_PER_USD}
        warehouse.plans(
            day,
            [
                plan(
                    "7B",
                    "full",
                    platform,
                    gpu,
                    8,
                    rent,
                    offer_id=f"{platform}-8",
                    ranking=ranking,
                    cost_usd_per_billion_tokens=per_btoken,
                    total_usd=per_btoken,
                    **cny,
                )
                for ranking in daily_plans.RANKINGS
            ],
        )
    warehouse._insert(
        "job_plans",
        [
            _job_plan(PREVIOUS, "qwen-sft", "autodl", "RTX 4090 24GB", 4, 0.30, 620.0),
            _job_plan(DAY, "qwen-sft", "矩池云", "RTX 4090 24GB", 4, 0.25, 480.0),
        ],
    )
    for subject in daily_plans.SUBJECTS:
        daily_plans.compute_plan_changes(warehouse.con, DAY, 10.0, subject)

    expected = {
        ("plan", "lowest_rent"): (
            "price_up",
            50.0,
            "rent for a month (or the minimum term) $10,000 (¥72,000) → $15,000 (¥108,000): the plan +50.0%",
        ),
        ("plan", "lowest_run_total"): (
            "price_down",
            -50.0,
            "total as billed $100 (¥720) → $50.00 (¥360): the plan -50.0%",
        ),
        ("job", "lowest_total"): (
            "price_down",
            100 * (480 - 620) / 620,
            "total as billed $620 (¥4,464) → $480 (¥3,456): the plan -22.6%",
        ),
    }
    stored = warehouse.con.execute(
        "SELECT subject, ranking, change_type, pct_change FROM plan_changes "
        "WHERE change_date = $d AND change_type LIKE 'price_%'",
        {"d": DAY},
    ).fetchall()
    assert {(subject, ranking): (kind, pytest.approx(pct)) for subject, ranking, kind, pct in stored} == {
        key: (kind, pytest.approx(pct)) for key, (kind, pct, _) in expected.items()
    }

    digest = build_digest(warehouse.con, DAY, price_move_pct=10.0)
    text = " ".join(render(digest, "en").text.split())
    said = {
        (entry["subject"], entry["ranking"]): (entry["change_types"], entry["pct_change"])
        for entry in digest_object(digest, "en")["plan_changes"]
    }
    for key, (kind, pct, line) in expected.items():
        assert kind in said[key][0]
        assert said[key][1] == pytest.approx(pct)
        assert line in text


# Each case: offers on PREVIOUS and DAY {platform: [(offer_id, gpu_model, usd, available)]} (None: the
# platform did not crawl that day), the old and the new plan (platform, offer_id, gpu_model, gpus,
# usd per GPU-hour; None: no offer fits) -> the reasons (kind, platform, pct rounded).
A100, PCIE = "A100 SXM 80GB", "A100 PCIe 80GB"
REASON_CASES = {
    "a new offer undercuts one that rose": (
        {"thunder": [("th", A100, 1.0, 4)]},
        {"thunder": [("th", A100, 1.12, 4)], "vastai": [("va", PCIE, 0.41, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.41),
        [("new_offer", "vastai", None), ("old_rose", "thunder", 12.0)],
    ),
    "an offer that got cheaper, the old one unchanged": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 1.2, 4)]},
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.9),
        [("new_fell", "vastai", -25.0), ("old_same", "thunder", None)],
    ),
    "the old offer is gone": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 1.2, 4)]},
        {"thunder": [("th2", A100, 1.5, 4)], "vastai": [("va", PCIE, 1.2, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 1.2),
        [("new_at", "vastai", None), ("old_gone", "thunder", None)],
    ),
    "the old offer is short of GPUs": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 1.2, 4)]},
        {"thunder": [("th", A100, 1.0, 1)], "vastai": [("va", PCIE, 1.2, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 1.2),
        [("new_at", "vastai", None), ("old_short", "thunder", None)],
    ),
    "the old platform did not crawl today": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 1.2, 4)]},
        {"thunder": None, "vastai": [("va", PCIE, 1.2, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 1.2),
        [("new_at", "vastai", None), ("old_missing", "thunder", None)],
    ),
    "the same offer's price moved": (
        {"vastai": [("va", PCIE, 1.0, 4)]},
        {"vastai": [("va", PCIE, 1.2, 4)]},
        ("vastai", "va", PCIE, 2, 1.0),
        ("vastai", "va", PCIE, 2, 1.2),
        [("price_rose", "vastai", 20.0)],
    ),
    "the same offer's price fell": (
        {"vastai": [("va", PCIE, 1.0, 4)]},
        {"vastai": [("va", PCIE, 0.8, 4)]},
        ("vastai", "va", PCIE, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.8),
        [("price_fell", "vastai", -20.0)],
    ),
    # sign tests: a rise of 0.5 % is a rise, on each side (a test of `pct > 1` would read it "fell")
    "the same offer rose 0.5 %": (
        {"vastai": [("va", PCIE, 1.0, 4)]},
        {"vastai": [("va", PCIE, 1.005, 4)]},
        ("vastai", "va", PCIE, 2, 1.0),
        ("vastai", "va", PCIE, 2, 1.005),
        [("price_rose", "vastai", 0.5)],
    ),
    "the same offer fell 0.5 %": (
        {"vastai": [("va", PCIE, 1.0, 4)]},
        {"vastai": [("va", PCIE, 0.995, 4)]},
        ("vastai", "va", PCIE, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.995),
        [("price_fell", "vastai", -0.5)],
    ),
    "the old offer fell, by less than a new one undercuts it": (
        {"thunder": [("th", A100, 1.0, 4)]},
        {"thunder": [("th", A100, 0.9, 4)], "vastai": [("va", PCIE, 0.41, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.41),
        [("new_offer", "vastai", None), ("old_fell", "thunder", -10.0)],
    ),
    "the old offer rose 0.5 %": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        {"thunder": [("th", A100, 1.005, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.9),
        [("new_at", "vastai", None), ("old_rose", "thunder", 0.5)],
    ),
    "the new offer rose 0.5 %: at its price, not cheaper": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        {"thunder": [("th2", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9045, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.9045),
        [("new_at", "vastai", None), ("old_gone", "thunder", None)],
    ),
    # the unchanged threshold (UNCHANGED_PCT, 0.1 %): under it unchanged, at it a move
    "the old offer moved under the threshold": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        {"thunder": [("th", A100, 1.0009, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.9),
        [("new_at", "vastai", None), ("old_same", "thunder", None)],
    ),
    "the old offer moved by the threshold": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        {"thunder": [("th", A100, 1.001, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.9),
        [("new_at", "vastai", None), ("old_rose", "thunder", 0.1)],
    ),
    "the new offer fell under the threshold": (
        {"thunder": [("th", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.9, 4)]},
        {"thunder": [("th2", A100, 1.0, 4)], "vastai": [("va", PCIE, 0.89992, 4)]},
        ("thunder", "th", A100, 2, 1.0),
        ("vastai", "va", PCIE, 2, 0.89992),
        [("new_at", "vastai", None), ("old_gone", "thunder", None)],
    ),
    "an offer fits where none did": (
        {},
        {"vastai": [("va", PCIE, 1.2, 4)]},
        None,
        ("vastai", "va", PCIE, 2, 1.2),
        [("none_fitted", None, None), ("new_offer", "vastai", None)],
    ),
    "no offer fits any more": (
        {"vastai": [("va", PCIE, 1.2, 4)]},
        {"vastai": [("va", PCIE, 1.2, 0)]},
        ("vastai", "va", PCIE, 2, 1.2),
        None,
        [("none_fits", None, None), ("old_short", "vastai", None)],
    ),
}


def test_the_plan_kept_its_offer_with_another_gpu_count(warehouse):
    """The same offer, more GPUs (and a price under the unchanged threshold): one reason, the new
    count, in words too."""
    warehouse.crawl(PREVIOUS, "vastai", [{"offer_id": "va", "gpu_model": PCIE, "usd": 1.0, "available": 8}])
    warehouse.crawl(DAY, "vastai", [{"offer_id": "va", "gpu_model": PCIE, "usd": 1.0005, "available": 8}])
    warehouse.plans(PREVIOUS, [_plan_row(warehouse, ("vastai", "va", PCIE, 2, 1.0))])
    warehouse.plans(DAY, [_plan_row(warehouse, ("vastai", "va", PCIE, 4, 1.0005))])
    warehouse.changes(DAY, [{"model": "7B", "method": "lora", "change_type": "new_count"}])
    [entry] = changed_plans(warehouse.con, DAY)
    assert [(r.kind, r.platform, r.gpu_model, r.gpus) for r in entry.reasons] == [
        ("gpu_count", "vastai", PCIE, 4)
    ]
    assert Wording(words("en")).why(entry, with_label=False) == f"now 4 GPUs of vastai's {PCIE}"


# The reasons in words: the sign and size of each move as the reader sees it.
WORDED_CASES = {
    "price_rose 0.5 %": (
        "the same offer rose 0.5 %",
        f"the plan's offer, vastai's {PCIE}, itself rose 0.5% to $1.00/GPU-h",
    ),
    "price_fell": (
        "the same offer's price fell",
        f"the plan's offer, vastai's {PCIE}, itself fell 20.0% to $0.800/GPU-h",
    ),
    "old_fell": (
        "the old offer fell, by less than a new one undercuts it",
        f"vastai now offers {PCIE} at $0.410/GPU-h; "
        f"the old plan's offer, thunder's {A100}, itself fell only 10.0%",
    ),
    "old_rose 0.1 %": (
        "the old offer moved by the threshold",
        f"the old plan's offer, thunder's {A100}, itself rose 0.1%",
    ),
    "old_same": ("the old offer moved under the threshold", f"thunder's {A100} is unchanged at $1.00/GPU-h"),
}


@pytest.mark.parametrize("case, sentence", WORDED_CASES.values(), ids=WORDED_CASES.keys())
def test_a_reason_in_words(warehouse, case, sentence):
    before, now, old, new, _ = REASON_CASES[case]
    _changed(warehouse, before, now, old, new)
    [entry] = changed_plans(warehouse.con, DAY)
    assert sentence in Wording(words("en")).why(entry, with_label=False)


def _plan_row(warehouse, plan):
    if plan is None:
        return {"model": "7B", "params": 7e9, "method": "lora", "status": "no_offer_fits", "offer_id": None}
    platform, offer_id, gpu_model, gpus, usd = plan
    return warehouse.plan("7B", "lora", platform, gpu_model, gpus, _rent(usd, gpus), offer_id=offer_id)


@pytest.mark.parametrize("before, now, old, new, expected", REASON_CASES.values(), ids=REASON_CASES.keys())
def test_why_a_plan_changed(warehouse, before, now, old, new, expected):
    _changed(warehouse, before, now, old, new)
    [entry] = changed_plans(warehouse.con, DAY)
    assert [
        (r.kind, r.platform, None if r.pct_change is None else round(r.pct_change, 6)) for r in entry.reasons
    ] == expected
    assert (entry.old.ok, entry.new.ok) == (old is not None, new is not None)


def _changed(warehouse, before, now, old, new):
    for day, crawls in ((PREVIOUS, before), (DAY, now)):
        for platform, offers in crawls.items():
            if offers is None:
                warehouse.crawl(day, platform, status="failed", error="synthetic outage")
                continue
            warehouse.crawl(
                day,
                platform,
                [{"offer_id": o, "gpu_model": g, "usd": usd, "available": n} for o, g, usd, n in offers],
            )
    warehouse.plans(PREVIOUS, [_plan_row(warehouse, old)])
    warehouse.plans(DAY, [_plan_row(warehouse, new)])
    warehouse.changes(DAY, [{"model": "7B", "method": "lora", "change_type": "synthetic"}])


def test_a_reason_carries_both_currencies(warehouse):
    warehouse.crawl(DAY, "vastai", [{"offer_id": "va", "gpu_model": PCIE, "usd": 0.41, "available": 4}])
    warehouse.plans(PREVIOUS, [_plan_row(warehouse, None)])
    warehouse.plans(DAY, [_plan_row(warehouse, ("vastai", "va", PCIE, 2, 0.41))])
    warehouse.changes(DAY, [{"model": "7B", "method": "lora", "change_type": "now_fits"}])
    [entry] = changed_plans(warehouse.con, DAY)
    offer = entry.reasons[-1]
    assert offer.usd_per_gpu_hour == pytest.approx(0.41)
    assert offer.cny_per_gpu_hour == pytest.approx(0.41 * CNY_PER_USD)


def _job_plan(day, job, platform, gpu_model, gpus, usd_per_gpu_hour, total_usd, **more):
    return {
        "plan_date": day,
        "job": job,
        "rank": 1,
        "status": "ok",
        "model": "qwen2.5-14b",
        "method": "lora",
        "tokens": 5e8,
        "epochs": 3.0,
        "platform": platform,
        "offer_id": f"synthetic-{platform}",
        "gpu_model": gpu_model,
        "gpu_count": gpus,
        "billing_period": "hour",
        "pricing_type": "on_demand",
        "price_usd_per_gpu_hour": usd_per_gpu_hour,
        "total_usd": total_usd,
        "total_cny": total_usd * CNY_PER_USD,
        "computed_at": NOW,
        **more,
    }


def test_jobs_come_first_with_their_total(warehouse):
    """A job's best plan (job_plans, rank 1; SYNTHETIC rows as the job-plans pipeline writes them) is a
    changed plan too, listed before the model sizes, its measure the total paid."""
    warehouse.plans(PREVIOUS, [warehouse.plan("7B", "lora", "vastai", PCIE, 1, 300.0)])
    warehouse.plans(DAY, [warehouse.plan("7B", "lora", "矩池云", PCIE, 1, 250.0)])
    warehouse.changes(DAY, [{"model": "7B", "method": "lora", "change_type": "new_platform"}])
    warehouse._insert(
        "job_plans",
        [
            _job_plan(PREVIOUS, "qwen-sft", "autodl", "RTX 4090 24GB", 4, 0.30, 620.0),
            _job_plan(PREVIOUS, "qwen-sft", "vastai", "RTX 4090 24GB", 4, 0.31, 640.0, rank=2),
            _job_plan(DAY, "qwen-sft", "矩池云", "RTX 4090 24GB", 4, 0.25, 480.0),
        ],
    )
    warehouse.job_changes(
        DAY, [{"job": "qwen-sft", "change_type": kind} for kind in ("new_platform", "price_down")]
    )
    entries = changed_plans(warehouse.con, DAY)
    assert [(e.subject, e.job, e.model) for e in entries] == [
        ("job", "qwen-sft", "qwen2.5-14b"),
        ("plan", None, "7B"),
    ]
    job = entries[0]
    assert (job.ranking, job.measure, job.old.platform, job.new.platform) == (
        "lowest_total",
        "total_usd",
        "autodl",
        "矩池云",
    )
    assert (job.old.measure_usd, job.new.measure_usd) == (620.0, 480.0)
    assert job.new.cny_per_gpu_hour == pytest.approx(0.25 * CNY_PER_USD)
    assert job.pct_change == pytest.approx(-22.580645)


def test_a_jobs_cluster_plan_is_named_as_one(warehouse):
    """A job whose best plan moves onto a cluster (job_plans.fabric: whole nodes joined over the
    platform's fabric): the digest's line says it is a cluster, of how many nodes, over what."""
    warehouse._insert(
        "job_plans",
        [
            _job_plan(PREVIOUS, "big", "oci", "H100 SXM 80GB", 8, 10.0, 9000.0, nodes=1),
            _job_plan(DAY, "big", "aws", "H100 SXM 80GB", 64, 6.88, 8000.0, nodes=8, fabric="EFA 400"),
        ],
    )
    warehouse.job_changes(DAY, [{"job": "big", "change_type": "new_platform"}])
    (job,) = changed_plans(warehouse.con, DAY)
    assert (job.old.nodes, job.old.fabric, job.new.nodes, job.new.fabric) == (1, None, 8, "EFA 400")
    english, chinese = Wording(words("en")), Wording(words("zh"))
    assert english.plan(job.new) == "aws H100 SXM 80GB x 64 (a cluster of 8 nodes over EFA 400), by the hour"
    assert "cluster" not in english.plan(job.old)
    assert "8 台节点组成的集群" in chinese.plan(job.new) and "EFA 400" in chinese.plan(job.new)
