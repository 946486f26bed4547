"""render(): escaping, inlined CSS, the same facts in HTML and text, the quiet form, the chart (once)."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import date, timedelta

import pytest

from digest.content import (
    CrawlFailure,
    Digest,
    PlanChange,
    PlanLine,
    PriceMove,
    PricePoint,
    StockChange,
)
from digest.render import embed_images, money, pad, pct, render

DAY = date(2026, 12, 1)
HOSTILE = '<script>alert("x")</script>'


def _plan(model, method, ranking, platform, gpu_model, gpu_count, usd, **more) -> PlanLine:
    fields = dict(
        model=model,
        method=method,
        ranking=ranking,
        status="ok",
        platform=platform,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        pricing_type="on_demand",
        stock_known=True,
        rent_usd_per_month=usd,
        rent_cny_per_month=usd * 7.2,
        commitment_hours=730,
        commitment_months=None,
        commitment_usd=usd,
        cost_usd_per_billion_tokens=usd / 100,
        cost_cny_per_billion_tokens=usd / 100 * 7.2,
    )
    return PlanLine(**{**fields, **more})


BUSY = Digest(
    digest_date=DAY,
    previous_date=DAY - timedelta(days=1),
    price_move_pct=10.0,
    plans=(
        _plan("7B", "full", "lowest_rent", "矩池云", "A100 80GB", 2, 2500.0),
        _plan("7B", "full", "lowest_cost_per_btoken", HOSTILE, "H100 SXM 80GB", 1, 1800.0),
        _plan(
            "70B",
            "full",
            "lowest_rent",
            "lambda",
            "H100 SXM 80GB",
            16,
            41000.0,
            commitment_hours=2190,
            commitment_months=3.0,
            commitment_usd=123000.0,
        ),
        _plan(
            "13B",
            "lora",
            "lowest_rent",
            "autodl",
            "RTX 4090 24GB",
            2,
            450.0,
            stock_known=False,
            pricing_type="monthly_plan",
        ),
        replace(
            _plan("70B", "qlora", "lowest_rent", None, None, None, 0.0),
            status="no_offer_fits",
            rent_usd_per_month=None,
        ),
    ),
    plan_changes=(
        PlanChange(
            "7B",
            "full",
            "lowest_rent",
            "new_platform",
            "vastai",
            "矩池云",
            2800.0,
            2500.0,
            -10.7,
            f"via {HOSTILE}",
        ),
    ),
    stock_changes=(StockChange("恒源云", "A100 80GB", 8, 0), StockChange("autodl", "RTX 4090 24GB", 0, 16)),
    price_moves=(PriceMove("H100 SXM 80GB", 2.0, 1.5, -25.0, "vastai", "矩池云"),),
    failed_crawls=(CrawlFailure("gpushare", "failed", f"HTTP 503\n{HOSTILE}", None),),
    price_history=(),
)

# What the reader must learn, whichever body their client shows.
BUSY_FACTS = [
    "矩池云",
    "A100 80GB x 2",
    "$2,500",
    "¥18,000",
    "$25.00",
    "H100 SXM 80GB x 16",
    "$41,000",
    "min. term 3 months",
    "$123,000",
    "stock unknown",
    "monthly plan",
    "no offer fits",
    "new platform",
    "vastai",
    "$2,800",
    "-10.7%",
    "恒源云",
    "sold out (was 8 GPUs)",
    "back in stock: 16 GPUs",
    "$2.00",
    "$1.50",
    "-25.0%",
    "gpushare",
    "HTTP 503",
    HOSTILE,
]


@pytest.fixture(scope="module")
def busy():
    return render(BUSY)


def test_every_platform_string_is_escaped_in_html_and_verbatim_in_text(busy):
    assert "<script" not in busy.html
    assert busy.html.count("&lt;script&gt;") == 3  # plan platform, change detail, crawl error
    assert busy.text.count(HOSTILE) == 3


def test_css_is_inlined(busy):
    assert "<style" not in busy.html
    assert re.search(r'<td[^>]*style="[^"]*padding', busy.html)


@pytest.mark.parametrize("fact", BUSY_FACTS)
def test_html_and_text_carry_the_same_facts(busy, fact):
    visible_html = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", busy.html)).split())
    assert fact in visible_html
    assert fact in " ".join(busy.text.split())


def test_subject_counts_the_news(busy):
    assert busy.subject == "gpuplan 2026-12-01: 1 plan change, 1 price move, 2 stock changes, 1 failed crawl"


def test_plain_text_keeps_chinese_columns_aligned(busy):
    stock_lines = [line for line in busy.text.splitlines() if "sold out" in line or "back in stock" in line]
    # 恒源云 is 3 characters but 6 columns wide: both GPU names start at the same column.
    starts = [
        len(line.split("A100")[0]) if "A100" in line else len(line.split("RTX")[0]) for line in stock_lines
    ]
    assert pad("恒源云", 14) == "恒源云" + " " * 8
    assert starts[0] + 3 == starts[1]  # 3 wide characters use 3 fewer characters of padding


def test_a_quiet_day_is_short_and_has_no_chart():
    quiet = replace(
        BUSY,
        plan_changes=(),
        stock_changes=(),
        price_moves=(),
        failed_crawls=(),
        price_history=(PricePoint("A100 80GB", DAY, 1.0),),
    )
    rendered = render(quiet)
    assert rendered.subject == "gpuplan 2026-12-01: no changes"
    assert rendered.images == ()
    assert "No changes since 2026-11-30" in rendered.text
    assert "No changes since 2026-11-30" in rendered.html
    for section in ("PLAN CHANGES", "PRICE MOVES", "STOCK CHANGES", "DID NOT CRAWL", "LAST 30 DAYS"):
        assert section not in rendered.text
        assert section.lower() not in rendered.html.lower()
    assert "LOWEST RENT FOR A MONTH OF TRAINING" in rendered.text  # the plans stay: they are the product


def test_the_chart_is_an_inline_png_referenced_by_cid():
    history = tuple(
        PricePoint(gpu, DAY - timedelta(days=n), usd + n / 100)
        for gpu, usd in (("A100 80GB", 1.1), ("RTX 4090 24GB", 0.35))
        for n in range(30)
    )
    rendered = render(replace(BUSY, price_history=history))
    [image] = rendered.images
    assert image.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert f'src="cid:{image.cid}"' in rendered.html
    # The chart's facts in words, for the text reader: latest, low and high per GPU model.
    assert (
        "RTX 4090 24GB" in rendered.text
        and "latest $0.350 (2026-12-01), low $0.350, high $0.640" in rendered.text
    )
    preview = embed_images(rendered)
    assert "cid:" not in preview and 'src="data:image/png;base64,iVBOR' in preview


FORMAT_CASES = [
    (money, (None,), "–"),
    (money, (41000.0,), "$41,000"),
    (money, (12.345,), "$12.35"),
    (money, (0.2449,), "$0.245"),
    (money, (18000.0, "¥"), "¥18,000"),
    (pct, (None,), "–"),
    (pct, (12.34,), "+12.3%"),
    (pct, (-4.0,), "-4.0%"),
]


@pytest.mark.parametrize("format_, args, expected", FORMAT_CASES)
def test_number_formats(format_, args, expected):
    assert format_(*args) == expected
