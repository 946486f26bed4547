"""Platform slugs for other trackers' provider names, and days read from file paths."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from scrapers.history.paths import day_in_path, observation_day
from scrapers.history.platforms import platform_slug, platform_slugs


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("vast.ai", "vastai"),
        ("vast", "vastai"),
        ("vastai", "vastai"),
        ("lambdalabs", "lambda"),
        ("Lambda", "lambda"),
        ("massed compute", "massedcompute"),
        ("verda", "datacrunch"),
        ("runpod", "runpod"),
    ],
)
def test_platform_slug(name: str, slug: str) -> None:
    assert platform_slug(name) == slug


def test_platform_slug_refuses_empty() -> None:
    with pytest.raises(ValueError, match="no platform name"):
        platform_slug(" . ")


def test_platform_slugs_keeps_missing() -> None:
    assert platform_slugs(pd.Series(["vast.ai", None])).tolist()[0] == "vastai"
    assert pd.isna(platform_slugs(pd.Series(["vast.ai", None])).tolist()[1])


@pytest.mark.parametrize(
    ("path", "day"),
    [
        ("lambda_vms_2026-04-02.csv", dt.date(2026, 4, 2)),
        ("lambda_vms_2026-05-07_header_only.csv", dt.date(2026, 5, 7)),
        ("catalogs/20260818-42/runpod.csv", dt.date(2026, 8, 18)),
        ("catalogs/v7/vast/vms.csv", None),
        ("prices_2026-13-45.csv", None),  # not a calendar day
    ],
)
def test_day_in_path(path: str, day: dt.date | None) -> None:
    assert day_in_path(Path(path)) == day


def test_observation_day_prefers_the_option_and_explains_when_missing() -> None:
    assert observation_day(Path("x_2026-04-02.csv"), dt.date(2026, 1, 1)) == dt.date(2026, 1, 1)
    with pytest.raises(ValueError, match="pass --date"):
        observation_day(Path("vms.csv"), None)
