"""The rendered digest in a real browser: Chromium from the distribution, driven by Playwright.

At a phone's width (390 CSS px) and a desktop's (1280), in both languages: nothing is wider than
the page (the document's scrollWidth is the viewport's), the plans are one column, the arrows do
not break from what they point from, and the chart fits. Skips where no Chromium is installed,
saying so; `.ci/run` installs it (apt's `chromium`) and sets GPUPLAN_REQUIRE_CHROMIUM=1 so the test
fails there instead. Playwright's own browser download (`playwright install`) is never used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from busy_digest import BUSY

from digest.content import PricePoint
from digest.render import embed_images, render

WIDTHS = (390, 1280)
# Two cards over a week, one above $2 (the top of the axis must be labelled above it)
HISTORY = tuple(
    PricePoint(gpu, BUSY.digest_date - timedelta(days=back), usd, usd * 7.2)
    for back in range(7)
    for gpu, usd in (("H100 SXM 80GB", 2.4 - 0.05 * back), ("RTX 4090 24GB", 0.31 + 0.01 * back))
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "no Chromium installed (apt-get install chromium)"
        if os.environ.get("GPUPLAN_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"Chromium is required here (GPUPLAN_REQUIRE_CHROMIUM=1) but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_digest_fits_the_screen_in_one_column(
    browser: Any, lang: str, width: int, tmp_path: Path
) -> None:
    rendered = render(replace(BUSY, price_history=HISTORY), lang)
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.set_content(embed_images(rendered))
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= width, f"{lang} at {width} px is {scroll_width} px wide"
        # every plan is one block: its lines stack, none sits beside another
        plans = page.locator(".item")
        assert plans.count() >= len(BUSY.plans)
        boxes = [plans.nth(index).bounding_box() for index in range(plans.count())]
        lefts = {round(box["x"]) for box in boxes if box}
        assert len(lefts) == 1
        # the chart is drawn at twice its CSS size and shown within the page
        image = page.locator("img")
        natural, shown = image.evaluate("i => [i.naturalWidth, i.getBoundingClientRect().width]")
        assert natural >= 2 * min(shown, 640) - 1 and shown <= width
        if lang == "zh":
            assert "矩池云" in page.inner_text("body")
        page.screenshot(path=str(tmp_path / f"digest-{lang}-{width}.png"), full_page=True)
    finally:
        page.close()
