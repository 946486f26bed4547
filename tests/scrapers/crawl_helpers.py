"""Helpers for the scrapers tests: expected items, a token-free environment, crawl settings
that point a spider at a loopback server."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from scrapers.items import OfferItem
from scrapers.platform import CLOCK_TOLERANCE_SETTING, ORIGIN_OVERRIDE_SETTING
from scrapers.registry import fixture_dir, platforms, spider_class, spider_tokens

# OfferItem's optional fields that default to None: an expected file written before a field existed
# (the contract's hardware and catalog fields) says nothing of it, which is that None.
UNSAID_FIELDS = {
    field.name: None
    for field in dataclasses.fields(OfferItem)
    if field.default is None and field.default_factory is dataclasses.MISSING
}

ANY_DAY_S = 100 * 365 * 86_400  # a clock tolerance no recorded or test day is outside

TOKEN_VARIABLES = tuple(sorted({token.env for name in platforms() for token in spider_tokens(name)}))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def canonical(items: list[dict[str, Any]]) -> list[str]:
    """Items as sorted JSON strings: fan-out spiders answer in no fixed order."""
    return sorted(json.dumps(_whole(item), sort_keys=True, ensure_ascii=False) for item in items)


def _whole(value: Any) -> Any:
    """16.0 written as 16: JSON has one number type, so an expected file may spell either."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole(item) for item in value]
    return value


def expected_items(platform: str, with_token: bool = False, day: str = "") -> list[dict[str, Any]]:
    """The items a fixture must yield; `day` "previous": the day before's (`previous/`)."""
    name = "expected.token.jsonl" if with_token else "expected.jsonl"
    return [UNSAID_FIELDS | item for item in read_jsonl(fixture_dir(platform) / day / name)]


def crawl_env(platform: str | None = None, token: str | None = None) -> dict[str, str]:
    """The test process environment without real tokens; with `token`, every credential the
    platform declares set to it."""
    env = {key: value for key, value in os.environ.items() if key not in TOKEN_VARIABLES}
    if platform is not None and token is not None:
        tokens = spider_tokens(platform)
        assert tokens, f"{platform} takes no token"
        env.update({spec.env: token for spec in tokens})
    return env


def default_token(platform: str) -> str | None:
    """A dummy token for spiders that cannot run without one; None for the others."""
    spec = spider_class(platform).token
    return "test-token" if spec is not None and spec.required else None


def every_token_env() -> dict[str, str]:
    """`crawl_env` with the dummy token of every spider that cannot run without one
    (`default_token`): for one crawl of every platform, as `gpuplan refresh` crawls them together."""
    env = crawl_env()
    for platform in platforms():
        token = default_token(platform)
        if token is not None:
            env.update(crawl_env(platform, token))
    return env


def loopback_settings(server_url: str, **extra: Any) -> dict[str, Any]:
    """Crawl settings for a loopback server: no politeness delays, quick backoff, short timeout."""
    return {
        ORIGIN_OVERRIDE_SETTING: server_url,
        "AUTOTHROTTLE_ENABLED": "False",
        "DOWNLOAD_DELAY": "0",
        "RETRY_BACKOFF_BASE_S": "0.05",
        "RETRY_RATE_LIMITED_BASE_S": "0.05",
        "DOWNLOAD_TIMEOUT": "1",
        # The answers carry their recording's Date (2026-11-30): any day is the crawler's here.
        CLOCK_TOLERANCE_SETTING: str(ANY_DAY_S),
        **extra,
    }
