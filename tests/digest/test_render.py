"""render(): escaping, inlined CSS, the same facts in HTML and text in each language, watches and jobs
first, one entry per changed plan, the quiet form, the chart (once)."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from busy_digest import BUSY, DAY, HOSTILE, WATCHES

from digest.chart import chart_currency
from digest.content import CrawlFailure, PricePoint, StockChange
from digest.export import digest_object
from digest.render import LINES_PER_PLATFORM, PLAN_CHANGES_LISTED, embed_images, render
from digest.wording import amount, pad, pct


@pytest.fixture(scope="module")
def busy():
    return render(BUSY, "en")


@pytest.fixture(scope="module")
def busy_zh():
    return render(BUSY, "zh")


def _visible(rendered) -> tuple[str, str]:
    """The HTML's visible text and the text part, each on one line (whitespace collapsed)."""
    visible_html = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rendered.html)).split())
    return visible_html, " ".join(rendered.text.split())


def test_every_platform_string_is_escaped_in_html_and_verbatim_in_text(busy):
    assert "<script" not in busy.html
    # the day's plan, the changed plan's new side, the reason it names, the crawl error
    # and the line of what to rent today, which names the day's first plan
    assert busy.html.count("&lt;script&gt;") == 5
    assert busy.text.count(HOSTILE) == 5


def test_terminal_escapes_in_platform_text_reach_neither_part() -> None:
    """A crawl error (and a platform name) carrying a hyperlink, a clear screen, a carriage return
    and a bidi override: the text part, read in a terminal, shows them as escapes; so does the HTML."""
    hostile = "\x1b]8;;https://collector.example/\x1b\\rent\x1b]8;;\x1b\\\x1b[2J\x1b[H\rok \u202eSU"
    day = replace(
        BUSY,
        failed_crawls=(CrawlFailure("gpushare", "failed", f"HTTP 503 {hostile}", None),),
        plans=tuple(replace(plan, platform="vast\x1b[31mai") for plan in BUSY.plans),
    )
    for lang in ("en", "zh"):
        rendered = render(day, lang)
        for part in (rendered.text, rendered.html, rendered.subject):
            for raw in ("\x1b", "\r", "\x07", "\u202e"):
                assert raw not in part, (lang, raw)
        assert "\\x1b]8;;https://collector.example/" in rendered.text
        assert "\\x1b[2J\\x1b[H ok \\u202eSU" in rendered.text  # one line: the return is a space
        assert "vast\\x1b[31mai" in rendered.text and "vast\\x1b[31mai" in rendered.html


def test_css_is_inlined(busy):
    assert "<style" not in busy.html
    assert re.search(r'<div[^>]*style="[^"]*padding', busy.html)


# What the reader must learn, whichever body their client shows.
FACTS = {
    "en": [
        "H100 SXM 80GB under $2.00/GPU-h: now $1.70/GPU-h at lambda (was $2.00/GPU-h)",
        "H200 SXM 141GB: at least 8 GPUs free on one platform (on runpod): now 16 GPUs at runpod "
        "(was 0 GPUs)",
        "job qwen-sft under $500 in total: now $480: 矩池云 RTX 4090 24GB x 4 (was $620)",
        "Job qwen-sft (qwen2.5-14b lora)",
        "autodl RTX 4090 24GB x 4, by the hour",
        "矩池云 RTX 4090 24GB x 4, by the day",
        "total as billed $620 (¥4,464) → $480 (¥3,456): the plan -22.6%",
        "矩池云 now offers RTX 4090 24GB at $0.250/GPU-h",
        "autodl's RTX 4090 24GB offer is gone",
        "full, lowest rent for a month",
        "rent for a month (or the minimum term) $1,460 (¥10,512) → $599 (¥4,310): the plan -59.0%",
        "the old plan's offer, thunder's A100 SXM 80GB, itself rose 12.0%",
        "full, lowest total for one run",
        "total as billed $300 (¥2,160) → $255 (¥1,836): the plan -15.0%",
        "$993 for one run",  # the day's run plan, in the reader's currency alone
        "the plan's offer, lambda's H100 SXM 80GB, itself fell 15.0% to $1.70/GPU-h",
        "no offer fits any more",
        "lambda's H100 SXM 80GB has only 2 GPUs free",
        "$2.00/GPU-h",
        "$1.50/GPU-h",
        "-25.0%",
        "sold out (was 8 GPUs)",
        "back in stock: 16 GPUs",
        "gpushare",
        "HTTP 503",
        "Left out as implausible (check prices_believable)",
        "runpod H200 SXM 141GB: 1 offer at $0.500/GPU-h, the market asks $2.95/GPU-h",
        "drift (vastai): offers dropped from 1200 to 450",
        "$41,000 a month",  # a plan's line: the reader's currency alone
        "min. term 3 months: $123,000 (¥885,600)",
        "stock unknown",
        "monthly plan",
        "no offer fits",
    ],
    "zh": [
        "H100 SXM 80GB 低于 $2.00/卡时：现价 $1.70/卡时（lambda）（此前 $2.00/卡时）",
        "H200 SXM 141GB：单个平台至少 8 张空闲（限 runpod）：runpod 现有 16 张（此前 0 张）",
        "任务 qwen-sft 总价低于 $500",
        "任务 qwen-sft（qwen2.5-14b lora）",
        "矩池云 RTX 4090 24GB x 4，按天计费",
        "总价 ¥4,464 ($620) → ¥3,456 ($480)：方案 -22.6%",
        "矩池云 新上架 RTX 4090 24GB，¥1.80/卡时",
        "autodl 的 RTX 4090 24GB 报价已下架",
        "full，月租最低",
        "一个月（或最短租期）租金 ¥10,512 ($1,460) → ¥4,310 ($599)：方案 -59.0%",
        "原方案的报价（thunder 的 A100 SXM 80GB）自身上涨 12.0%",
        "full，跑一次总价最低",
        "总价 ¥2,160 ($300) → ¥1,836 ($255)：方案 -15.0%",
        "¥7,148",
        "已没有合适的报价",
        "lambda 的 H100 SXM 80GB 只剩 2 张空闲",
        "¥14.40/卡时",
        "¥10.80/卡时",
        "售罄（此前 8 张）",
        "恢复供应：16 张",
        "因价格不可信而排除（检查 prices_believable）",
        "runpod H200 SXM 141GB：1 条报价，低至 ¥3.60/卡时，市场价 ¥21.24/卡时",
        "drift（vastai）：offers dropped from 1200 to 450",
        "每月 ¥295,200",
        "最短租期 3 个月：¥885,600 ($123,000)",
        "库存未知",
        "包月",
        "没有合适的报价",
    ],
}


@pytest.mark.parametrize(
    "lang, fact", [(lang, fact) for lang, facts in FACTS.items() for fact in facts], ids=lambda v: str(v)[:40]
)
def test_html_and_text_carry_the_same_facts(busy, busy_zh, lang, fact):
    visible_html, text = _visible(busy if lang == "en" else busy_zh)
    assert fact in visible_html
    assert fact in text


def test_subject_counts_the_news_in_each_language(busy, busy_zh):
    assert busy.subject == (
        "gpuplan 2026-12-01: 3 watches fired, 4 plan changes, 1 price move, 2 stock changes, 1 failed crawl"
    )
    assert busy_zh.subject == (
        "gpuplan 2026-12-01：3 个提醒触发，4 项方案变化，1 项价格变动，2 项库存变化，1 个平台抓取失败"
    )
    assert busy.lang == "en" and busy_zh.lang == "zh"


@pytest.mark.parametrize(
    "lang, watches, changes",
    [("en", "Watches", "Plan changes since 2026-11-30"), ("zh", "提醒", "自 2026-11-30 以来的方案变化")],
)
def test_watches_come_first_then_jobs_then_models(busy, busy_zh, lang, watches, changes):
    rendered = busy if lang == "en" else busy_zh
    lines = rendered.text.splitlines()
    headings = [line for line in lines if line and not line.startswith((" ", "-"))]
    assert (
        headings.index(watches.upper() if lang == "en" else watches) == 3
    )  # right after the title, what to rent today and the headline
    start = lines.index(changes.upper() if lang == "en" else changes)
    groups = [line for line in lines[start + 1 :] if line and not line.startswith((" ", "-"))][:3]
    assert groups == (
        ["Job qwen-sft (qwen2.5-14b lora)", "7B", "70B"]
        if lang == "en"
        else ["任务 qwen-sft（qwen2.5-14b lora）", "7B 模型", "70B 模型"]
    )
    h2 = re.findall(r"<h2[^>]*>([^<]*)</h2>", rendered.html)
    assert h2[:2] == [watches, changes]
    h3 = re.findall(r"<h3[^>]*>([^<]*)</h3>", rendered.html)
    assert h3 == groups


def test_one_entry_per_changed_plan(busy):
    section = busy.text.split("PLAN CHANGES SINCE")[1].split("BIGGEST PRICE MOVES")[0]
    entries = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(entries) == len(BUSY.plan_changes) == 4
    assert busy.html.count("why: ") == 4  # each entry says why, once


def test_a_watch_that_held_yesterday_is_not_news(busy):
    held = WATCHES[-1]
    assert held.holds and held.held_before and not held.fired
    assert "RTX 4090 24GB under $0.500/GPU-h" not in busy.text


def test_plain_text_keeps_chinese_columns_aligned(busy):
    stock_lines = [line for line in busy.text.splitlines() if "sold out" in line or "back in stock" in line]
    # 恒源云 is 3 characters but 6 columns wide: both GPU names start at the same column.
    starts = [
        len(line.split("A100")[0]) if "A100" in line else len(line.split("RTX")[0]) for line in stock_lines
    ]
    assert pad("恒源云", 14) == "恒源云" + " " * 8
    assert starts[0] + 3 == starts[1]  # 3 wide characters use 3 fewer characters of padding


QUIET = replace(
    BUSY,
    plan_changes=(),
    stock_changes=(),
    price_moves=(),
    failed_crawls=(),
    watches=(WATCHES[-1],),
    price_history=(PricePoint("A100 80GB", DAY, 1.0, 7.2),),
)


@pytest.mark.parametrize(
    "lang, subject, headline, plans",
    [
        (
            "en",
            "gpuplan 2026-12-01: no changes",
            "No changes since 2026-11-30",
            "LOWEST RENT FOR A MONTH OF TRAINING",
        ),
        ("zh", "gpuplan 2026-12-01：无变化", "自 2026-11-30 以来没有变化", "训练一个月租金最低"),
    ],
)
def test_a_quiet_day_is_short_and_has_no_chart(lang, subject, headline, plans):
    rendered = render(QUIET, lang)
    assert rendered.subject == subject
    assert rendered.images == ()
    assert headline in rendered.text and headline in rendered.html
    for section in (
        "PLAN CHANGES",
        "PRICE MOVES",
        "STOCK CHANGES",
        "DID NOT CRAWL",
        "LAST 30 DAYS",
        "WATCHES",
    ):
        assert section not in rendered.text
    assert plans in rendered.text  # the plans stay: they are the product


def _history():
    return tuple(
        PricePoint(gpu, DAY - timedelta(days=n), usd + n / 100, (usd + n / 100) * 7.2)
        for gpu, usd in (("A100 80GB", 1.1), ("RTX 4090 24GB", 0.35))
        for n in range(30)
    )


@pytest.mark.parametrize(
    "lang, line",
    [
        ("en", "latest $0.350/GPU-h (2026-12-01), low $0.350/GPU-h, high $0.640/GPU-h"),
        ("zh", "最新 ¥2.52/卡时（2026-12-01），最低 ¥2.52/卡时，最高 ¥4.61/卡时"),
    ],
)
def test_the_chart_is_an_inline_png_referenced_by_cid(lang, line):
    rendered = render(replace(BUSY, price_history=_history()), lang)
    [image] = rendered.images
    assert image.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert f'src="cid:{image.cid}"' in rendered.html
    # The chart's facts in words, for the text reader: latest, low and high per GPU model.
    assert "RTX 4090 24GB" in rendered.text and line in rendered.text
    preview = embed_images(rendered)
    assert "cid:" not in preview and 'src="data:image/png;base64,iVBOR' in preview


def test_the_chart_falls_back_to_usd_where_a_day_has_no_cny_price():
    history = (*_history(), PricePoint("H100 SXM 80GB", DAY, 2.0, None))
    assert chart_currency(_history(), "zh") == "CNY"
    assert chart_currency(history, "zh") == "USD"
    assert chart_currency(history, "en") == "USD"


FORMAT_CASES = [
    (amount, (None,), "–"),
    (amount, (41000.0,), "$41,000"),
    (amount, (12.345,), "$12.35"),
    (amount, (0.2449,), "$0.245"),
    (amount, (18000.0, "CNY"), "¥18,000"),
    (pct, (None,), "–"),
    (pct, (12.34,), "+12.3%"),
    (pct, (-4.0,), "-4.0%"),
]


@pytest.mark.parametrize("format_, args, expected", FORMAT_CASES)
def test_number_formats(format_, args, expected):
    assert format_(*args) == expected


def test_json_carries_each_section_with_its_sentences():
    content = digest_object(BUSY, "zh")
    job = content["plan_changes"][0]
    assert (job["subject"], job["job"], job["measure"], job["old_value_usd"], job["new_value_usd"]) == (
        "job",
        "qwen-sft",
        "total_usd",
        620.0,
        480.0,
    )
    assert job["old"]["platform"] == "autodl" and job["new"]["billing_period"] == "day"
    assert job["why"] == "矩池云 新上架 RTX 4090 24GB，¥1.80/卡时；autodl 的 RTX 4090 24GB 报价已下架"
    [move] = content["price_moves"]
    assert (
        move["gpu_model"],
        move["platform"],
        move["old_usd_per_gpu_hour"],
        move["new_usd_per_gpu_hour"],
    ) == (
        "H100 SXM 80GB",
        "矩池云",
        2.0,
        1.5,
    )
    assert [w["fired"] for w in content["watches"]] == [True, True, True, False]
    assert content["watches"][0]["text"].startswith("H100 SXM 80GB 低于 $2.00/卡时")
    assert content["excluded_offers"][0]["platform"] == "runpod"
    assert content["check_warnings"] == [
        {"check": "drift", "platform": "vastai", "detail": "offers dropped from 1200 to 450"}
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_platform_takes_a_few_lines_of_a_per_platform_list_and_says_how_many_more(lang):
    """28 platforms: one platform's 30 restocked GPU models are its first few lines and one line
    with the count; the other platforms' lines follow; every change stays in --json."""
    restocked = tuple(StockChange("vastai", f"GPU {index:02d}", 0, index + 1) for index in range(30))
    busy = replace(BUSY, stock_changes=(*restocked, StockChange("matpool", "L40S 48GB", 3, 0)))
    rendered = render(busy, lang)
    text = rendered.text.splitlines()
    vast = [line for line in text if line.startswith("- vastai")]
    assert len(vast) == LINES_PER_PLATFORM + 1
    assert "26" in vast[-1] and "--json" in vast[-1]
    matpool = "matpool" if lang == "en" else "矩池云"  # as the language's readers know it
    assert any(line.startswith(f"- {matpool}") and "L40S 48GB" in line for line in text)
    visible_html, _ = _visible(rendered)
    assert "GPU 03" in visible_html and "GPU 04" not in visible_html and "--json" in visible_html
    assert len(digest_object(busy, lang)["stock_changes"]) == 31


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mail_lists_a_bounded_number_of_plan_changes_and_says_how_many_more(lang):
    """2,675 plan changes made a 4 MB mail: the first PLAN_CHANGES_LISTED are listed, then one line
    with the count of the rest; --json keeps every one."""
    many = tuple(
        replace(BUSY.plan_changes[index % len(BUSY.plan_changes)], model=f"{index + 1}B")
        for index in range(2_675)
    )
    rendered = render(replace(BUSY, plan_changes=many), lang)
    more = 2_675 - PLAN_CHANGES_LISTED
    assert f"{more}" in rendered.text and "--json" in rendered.text.split(f"{more}")[1].splitlines()[0]
    assert len(rendered.text.encode()) + len(rendered.html.encode()) < 200_000
    assert len(digest_object(replace(BUSY, plan_changes=many), lang)["plan_changes"]) == 2_675
