"""A Digest as mail: HTML (Jinja2, autoescaped, CSS inlined) and plain text with the same facts.

Both bodies come from templates fed the same sentences (`digest.wording`, in the digest's
language, numbers formatted once), so the text alternative can never say something the HTML does
not. The templates hold layout only; every word is in the language's catalogue. Platform-provided
strings are escaped by Jinja2's autoescape in the HTML and left as they are in the text, but for
the characters that drive a terminal or turn text around (ESC, a carriage return, U+202E): every
value either template shows is first made safe by `config.shown_text.visible` (the environment's
`finalize`), so a platform's text cannot clear the screen of someone reading the mail in a terminal.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Generic, Protocol, TypeVar

import css_inline
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from config.shown_text import visible
from digest.catalogue import DEFAULT_LANGUAGE
from digest.chart import ChartLine, chart_currency, chart_lines_of, price_chart_png
from digest.content import CHART_DAYS, EXCLUDED_OFFERS_CHECK, Digest
from digest.wording import Wording, gpus, oneline, pad, pct

# Text columns sized for the common values so a line fits an 80-column reader; longer values
# push the rest of their line right rather than being cut.
TEXT_COLUMNS = {"model": 6, "method": 6, "platform": 14, "gpus": 20}
# Lines one platform may take in a per-platform list (stock changes, offers left out); the rest is
# one line saying how many more. With 28 platforms, one platform's restock of 30 GPU models must not
# push every other platform's news down the mail. `--json` and the tables keep every one.
LINES_PER_PLATFORM = 4
# Plan changes a mail lists (about 1.5 KB each in the two parts); the rest is one line saying how
# many more and where every one is (`gpuplan digest --json`, the plan_changes table). 2,675 changes
# made a 4 MB mail; 40 keep it near 60 KB, and the watches, jobs and smallest models come first.
PLAN_CHANGES_LISTED = 40


class _OfPlatform(Protocol):
    @property
    def platform(self) -> str: ...


P = TypeVar("P", bound=_OfPlatform)


@dataclass(frozen=True)
class PlatformLines(Generic[P]):
    """A platform's first `LINES_PER_PLATFORM` items of a list, and how many more it has."""

    platform: str
    shown: tuple[P, ...]
    more: int


def per_platform(items: Iterable[P], cap: int = LINES_PER_PLATFORM) -> tuple[PlatformLines[P], ...]:
    """`items` grouped by platform, in the order each platform first appears, each cut to `cap`."""
    groups: dict[str, list[P]] = {}
    for item in items:
        groups.setdefault(item.platform, []).append(item)
    return tuple(
        PlatformLines(platform, tuple(group[:cap]), max(0, len(group) - cap))
        for platform, group in groups.items()
    )


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
    lang: str = DEFAULT_LANGUAGE


def render(digest: Digest, lang: str = DEFAULT_LANGUAGE) -> RenderedDigest:
    """The mail for `digest` in `lang` ('en' | 'zh'). A quiet day gets the short form: a line
    saying so and the plans.

    The chart (matplotlib, the slow part) is drawn only when there is news and price history.
    """
    wording = Wording.of(lang)
    subject = wording.subject(digest)
    images: tuple[InlineImage, ...] = ()
    chart_lines: tuple[ChartLine, ...] = ()
    if digest.price_history and not digest.is_quiet:
        currency = chart_currency(digest.price_history, lang)
        images = (
            InlineImage(
                cid=f"price-chart-{digest.digest_date.isoformat()}@gpuplan",
                png=price_chart_png(
                    digest.price_history,
                    digest.digest_date,
                    currency=currency,
                    axis_label=wording.t(f"chart.axis.{currency}"),
                    date_format=wording.t("chart.date_format"),
                ),
                filename=f"gpu-prices-{digest.digest_date.isoformat()}.png",
            ),
        )
        chart_lines = chart_lines_of(digest.price_history)
    context = {
        "digest": digest,
        "w": wording,
        "lang": lang,
        "subject": subject,
        "headline": wording.headline(digest),
        "chart": images[0] if images else None,
        "chart_lines": chart_lines,
        "chart_days": CHART_DAYS,
        "chart_first": min((point.day for point in digest.price_history), default=digest.digest_date),
        "chart_currency": chart_currency(digest.price_history, lang) if digest.price_history else "",
        "excluded_check": EXCLUDED_OFFERS_CHECK,
        "columns": TEXT_COLUMNS,
        "change_groups": digest.changes_by_group(PLAN_CHANGES_LISTED),
        "more_changes": max(0, len(digest.plan_changes) - PLAN_CHANGES_LISTED),
        "stock_groups": per_platform(digest.stock_changes),
        "excluded_groups": per_platform(digest.excluded_offers),
    }
    env = _environment()
    html = env.get_template("digest.html").render(context)
    text = env.get_template("digest.txt").render(context)
    return RenderedDigest(subject, _inliner().inline(html), text, images, lang)


def embed_images(rendered: RenderedDigest) -> str:
    """The HTML with each `cid:` image replaced by a data URI, for a preview file in a browser."""
    html = rendered.html
    for image in rendered.images:
        data_uri = "data:image/png;base64," + base64.b64encode(image.png).decode("ascii")
        html = html.replace(f'src="cid:{image.cid}"', f'src="{data_uri}"')
    return html


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
        finalize=_shown,
    )
    env.filters.update(pct=pct, pad=pad, oneline=oneline)
    env.globals.update(gpus=gpus)
    return env


def _shown(value: object) -> object:
    """What a template shows of `value`: text made safe; escaped HTML (Jinja2's Markup) stays
    marked so, as an escape written in its place adds no HTML."""
    if not isinstance(value, str):
        return value
    return type(value)(visible(value)) if hasattr(value, "__html__") else visible(value)


@cache
def _inliner() -> css_inline.CSSInliner:
    # Our template carries its own <style>; nothing is fetched from the network.
    return css_inline.CSSInliner(load_remote_stylesheets=False)
