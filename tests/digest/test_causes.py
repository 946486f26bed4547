"""Plan changes that share one cause are said under it once ("vastai's A100 PCIe 80GB, new at
$0.410/GPU-h, now wins 3 plans"), and where Before and Now are the same platform and GPU the
change says what differs (offer, region, billing): in the text mail, the HTML and the JSON.
SYNTHETIC rows on a migrated DuckDB."""

from __future__ import annotations

import html
import re
from datetime import date, timedelta

import pytest
from synthetic_warehouse import HOURS_PER_MONTH

from digest.changes import changed_plans, shared_causes
from digest.content import build_digest
from digest.export import digest_object
from digest.render import render

DAY = date(2026, 12, 1)
PREVIOUS = DAY - timedelta(days=1)
PCIE, A100 = "A100 PCIe 80GB", "A100 SXM 80GB"
MOVED = [("7B", "lora"), ("7B", "qlora"), ("13B", "lora")]


@pytest.fixture
def moved(warehouse):
    """Three plans move from vastai's offer va1 (Sweden) to its new va2 (Japan), same GPU; one plan
    moves on its own, from thunder to lambda."""
    before = [{"offer_id": "va1", "gpu_model": PCIE, "usd": 1.0, "available": 8, "region": "Sweden, SE"}]
    now = [
        *before,
        {"offer_id": "va2", "gpu_model": PCIE, "usd": 0.41, "available": 8, "region": "Japan, JP"},
    ]
    warehouse.crawl(PREVIOUS, "vastai", before)
    warehouse.crawl(DAY, "vastai", now)
    warehouse.crawl(PREVIOUS, "thunder", [{"offer_id": "th", "gpu_model": A100, "usd": 1.2, "available": 8}])
    warehouse.crawl(DAY, "thunder", [{"offer_id": "th", "gpu_model": A100, "usd": 1.2, "available": 8}])
    warehouse.crawl(DAY, "lambda", [{"offer_id": "la", "gpu_model": A100, "usd": 0.9, "available": 8}])
    plan = warehouse.plan
    rent = HOURS_PER_MONTH * 2
    old = [plan(m, x, "vastai", PCIE, 2, rent * 1.0, offer_id="va1") for m, x in MOVED]
    new = [plan(m, x, "vastai", PCIE, 2, rent * 0.41, offer_id="va2") for m, x in MOVED]
    old.append(plan("30B", "lora", "thunder", A100, 2, rent * 1.2, offer_id="th"))
    new.append(plan("30B", "lora", "lambda", A100, 2, rent * 0.9, offer_id="la"))
    warehouse.plans(PREVIOUS, old)
    warehouse.plans(DAY, new)
    changed = [*MOVED, ("30B", "lora")]
    warehouse.changes(DAY, [{"model": m, "method": x, "change_type": "price_down"} for m, x in changed])
    return build_digest(warehouse.con, DAY, price_move_pct=10.0)


def test_plans_that_share_a_cause_are_grouped_under_it(moved):
    [cause] = shared_causes(moved.plan_changes)
    assert (cause.reason.kind, cause.reason.platform, cause.offer_id) == ("new_offer", "vastai", "va2")
    assert [(c.model, c.method) for c in cause.changes] == MOVED
    groups = moved.changes_by_group()
    assert [(g.cause is not None, len(g.changes)) for g in groups] == [(True, 3), (False, 1)]


def test_the_text_mail_says_the_cause_once_and_what_differs(moved):
    text = render(moved, "en").text
    head = "vastai's A100 PCIe 80GB, new at $0.410/GPU-h, now wins 3 plans"
    assert text.count(head) == 1 and "now offers" not in text.split(head)[1].split("\n30B\n")[0]
    lines = text.replace("\xa0", " ").splitlines()  # the arrow's non-breaking space
    first = lines.index(head) + 1
    assert lines[first] == (
        f"- 7B lora, lowest rent for a month: vastai {PCIE} x 2, by the hour → "
        f"vastai {PCIE} x 2, by the hour "
        "(same platform and GPU; offer va1 → va2, region Sweden, SE → Japan, JP)"
    )
    assert (
        lines[first + 1]
        == "    rent for a month (or the minimum term) $1,460 (¥10,512) → $599 (¥4,310): the plan -59.0%"
    )
    assert lines[first + 2] == f"    why: vastai's {PCIE} is unchanged at $1.00/GPU-h"
    # the change with a cause of its own stays under its model, its reasons whole
    alone = lines.index("30B")
    assert lines[alone + 1].startswith(f"- lora, lowest rent for a month: thunder {A100} x 2")
    assert "same platform" not in lines[alone + 1]
    assert lines[alone + 3].startswith(f"    why: lambda now offers {A100} at $0.900/GPU-h")


def test_the_html_says_the_same(moved):
    page = render(moved, "en").html
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert shown.count("vastai's A100 PCIe 80GB, new at $0.410/GPU-h, now wins 3 plans") == 1
    assert shown.count("offer va1 → va2, region Sweden, SE → Japan, JP") == 3
    assert "7B qlora, lowest rent for a month" in shown and "13B lora, lowest rent for a month" in shown
    zh = render(moved, "zh").text
    assert "vastai 新上架 A100 PCIe 80GB（¥2.95/卡时），现为 3 个方案的最优" in zh
    assert "（同一平台同一 GPU；实例 va1 → va2，地区 Sweden, SE → Japan, JP）" in zh


def test_the_json_lists_the_causes_and_points_each_change_at_its_own(moved):
    data = digest_object(moved, "en")
    [cause] = data["change_causes"]
    assert cause["kind"] == "new_offer" and cause["platform"] == "vastai" and cause["offer_id"] == "va2"
    assert cause["plans"] == 3 and cause["usd_per_gpu_hour"] == pytest.approx(0.41)
    assert cause["text"] == "vastai's A100 PCIe 80GB, new at $0.410/GPU-h, now wins 3 plans"
    entries = data["plan_changes"]
    assert [entry["cause"] for entry in entries] == [0, 0, 0, None]
    assert entries[0]["differs"] == "offer va1 → va2, region Sweden, SE → Japan, JP"
    assert entries[3]["differs"] is None
    assert (entries[0]["old"]["region"], entries[0]["new"]["region"]) == ("Sweden, SE", "Japan, JP")
    # the why keeps every reason: a program reads the change alone
    assert entries[0]["why"].startswith(f"vastai now offers {PCIE} at $0.410/GPU-h")


def test_a_cause_of_one_plan_is_no_group(warehouse, moved):
    only = [change for change in changed_plans(warehouse.con, DAY) if change.model != "7B"]
    assert shared_causes(only) == ()
