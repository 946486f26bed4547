"""A Digest as mail: HTML (Jinja2, autoescaped, CSS inlined) and plain text with the same facts.

Both bodies come from templates fed the same strings (numbers are formatted here, once), so
the text alternative can never say something the HTML does not. Platform-provided strings are
escaped by Jinja2's autoescape in the HTML and left verbatim in the text.
"""

from __future__ import annotations

import base64
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import cache
from itertools import groupby
from operator import attrgetter

import css_inline
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from digest.content import CHART_DAYS, Digest, PricePoint

RANKING_TITLES = {
    "lowest_rent": "Lowest rent for a month of training",
    "lowest_cost_per_btoken": "Lowest cost per billion tokens",
}
# Text columns sized for the common values so a line fits an 80-column reader; longer values
# push the rest of their line right rather than being cut.
TEXT_COLUMNS = {"model": 6, "method": 6, "platform": 14, "gpus": 20}
NO_VALUE = "–"  # shown for a missing number; never "0", which would read as free


@dataclass(frozen=True)
class InlineImage:
    """An image the HTML shows through `cid:<cid>`, sent as a related MIME part."""

    cid: str  # without angle brackets
    png: bytes
    filename: str


@dataclass(frozen=True)
class RenderedDigest:
    subject: str
    html: str
    text: str
    images: tuple[InlineImage, ...]


@dataclass(frozen=True)
class ChartLine:
    """What a chart line says, for readers of the text version: last value, 30-day low and high."""

    gpu_model: str
    last_day: date
    last_usd_per_gpu_hour: float
    low_usd_per_gpu_hour: float
    high_usd_per_gpu_hour: float


def render(digest: Digest) -> RenderedDigest:
    """The mail for `digest`. A quiet day gets the short form: a line saying so and the plans.

    The chart (matplotlib, the slow part) is drawn only when there is news and price history.
    """
    summary = _summary(digest)
    subject = f"gpuplan {digest.digest_date}: {summary}"
    images: tuple[InlineImage, ...] = ()
    chart_lines: tuple[ChartLine, ...] = ()
    if digest.price_history and not digest.is_quiet:
        from digest.chart import price_chart_png  # defers the matplotlib import

        images = (
            InlineImage(
                cid=f"price-chart-{digest.digest_date.isoformat()}@gpuplan",
                png=price_chart_png(digest.price_history, digest.digest_date),
                filename=f"gpu-prices-{digest.digest_date.isoformat()}.png",
            ),
        )
        chart_lines = _chart_lines(digest.price_history)
    context = {
        "digest": digest,
        "subject": subject,
        "headline": _headline(digest, summary),
        "chart": images[0] if images else None,
        "chart_lines": chart_lines,
        "chart_days": CHART_DAYS,
        "ranking_titles": RANKING_TITLES,
        "columns": TEXT_COLUMNS,
    }
    env = _environment()
    html = env.get_template("digest.html").render(context)
    text = env.get_template("digest.txt").render(context)
    return RenderedDigest(subject=subject, html=_inliner().inline(html), text=text, images=images)


def embed_images(rendered: RenderedDigest) -> str:
    """The HTML with each `cid:` image replaced by a data URI, for a preview file in a browser."""
    html = rendered.html
    for image in rendered.images:
        data_uri = "data:image/png;base64," + base64.b64encode(image.png).decode("ascii")
        html = html.replace(f'src="cid:{image.cid}"', f'src="{data_uri}"')
    return html


def _headline(digest: Digest, summary: str) -> str:
    if digest.previous_date is None:
        return f"First day with plans, nothing to compare with yet; {summary}."
    if digest.is_quiet:
        return (
            f"No changes since {digest.previous_date}: no plan, stock or price change, "
            "and every platform crawled."
        )
    return f"Since {digest.previous_date}: {summary}."


def _summary(digest: Digest) -> str:
    """'no changes', or the count of each kind of news: '2 plan changes, 1 failed crawl'."""
    if digest.is_quiet:
        return "no changes"
    counts = [
        (len(digest.plan_changes), "plan change"),
        (len(digest.price_moves), "price move"),
        (len(digest.stock_changes), "stock change"),
        (len(digest.failed_crawls), "failed crawl"),
    ]
    return ", ".join(f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in counts if n)


def _chart_lines(history: tuple[PricePoint, ...]) -> tuple[ChartLine, ...]:
    lines = []
    for gpu_model, points in groupby(
        sorted(history, key=attrgetter("gpu_model", "day")), attrgetter("gpu_model")
    ):
        series = list(points)
        prices = [point.min_usd_per_gpu_hour for point in series]
        lines.append(ChartLine(gpu_model, series[-1].day, prices[-1], min(prices), max(prices)))
    return tuple(lines)


def money(value: float | None, symbol: str = "$") -> str:
    """'$1,234' for large amounts, '$12.34' below 100, '$0.245' below 1 (GPU-hour prices)."""
    if value is None:
        return NO_VALUE
    if abs(value) >= 100:
        return f"{symbol}{value:,.0f}"
    if abs(value) >= 1:
        return f"{symbol}{value:.2f}"
    return f"{symbol}{value:.3f}"


def pct(value: float | None) -> str:
    return NO_VALUE if value is None else f"{value:+.1f}%"


def gpus(gpu_model: str | None, gpu_count: int | None) -> str:
    if gpu_model is None:
        return NO_VALUE
    return gpu_model if gpu_count is None else f"{gpu_model} x {gpu_count}"


def months(value: float) -> str:
    """A minimum term in months: '3 months', '1.5 months'."""
    return f"{round(value, 1):g} months"


def label(name: str) -> str:
    """'no_offer_fits' -> 'no offer fits': machine names as words."""
    return name.replace("_", " ")


def pad(value: object, width: int) -> str:
    """Left-justify to `width` terminal columns; CJK characters take two (矩池云 is 6 wide)."""
    text = str(value)
    used = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - used, 0)


def oneline(value: str | None) -> str:
    """Platform text (crawl errors) on one line, so it cannot break the plain-text layout."""
    return NO_VALUE if value is None else " ".join(value.split())


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("digest", "templates"),
        # HTML templates escape every value; the .txt template must not (it would show &lt;).
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(money=money, pct=pct, months=months, label=label, pad=pad, oneline=oneline)
    env.globals.update(gpus=gpus)
    return env


@cache
def _inliner() -> css_inline.CSSInliner:
    # Our template carries its own <style>; nothing is fetched from the network.
    return css_inline.CSSInliner(load_remote_stylesheets=False)
