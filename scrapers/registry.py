"""Scrapy's spider loader as the one registry: the platforms, their spider classes, tokens and fixtures.

No list of platforms is kept by hand anywhere: a platform is a spider file in `scrapers/spiders/`
(its `name` the platform slug) and a fixture folder `scrapers/fixtures/<slug>/`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from scrapy.settings import Settings as ScrapySettings
from scrapy.spiderloader import SpiderLoader

from scrapers.platform import PlatformSpider, Token
from scrapers.replay import SNAPSHOT_FILE
from sizing.gpu_names import did_you_mean, nearest_names

SETTINGS_MODULE = "scrapers.settings"
FIXTURES = Path(__file__).parent / "fixtures"
# A fixture folder holds the latest recorded day; this folder in it, the day before (same layout).
PREVIOUS = "previous"


class UnknownPlatform(LookupError):
    """A platform name the spider loader does not know (a usage error, not a crawl failure)."""


@cache  # the spider files do not change under a running process; the loader imports every one
def _loader() -> SpiderLoader:
    settings = ScrapySettings()
    settings.setmodule(SETTINGS_MODULE, priority="project")
    return SpiderLoader.from_settings(settings)


def platforms() -> list[str]:
    """Every platform, from Scrapy's spider loader (the only registry)."""
    return sorted(_loader().list())


def platform(name: str) -> str:
    """The platform a person means by `name`: its slug, in any case. Raises UnknownPlatform naming
    the nearest platforms (all of them when none is near)."""
    slug = name.strip().lower()
    known = platforms()
    if slug in known:
        return slug
    nearest = nearest_names(slug, known)
    hint = did_you_mean(nearest) if nearest else f"; known: {', '.join(known)}"
    raise UnknownPlatform(f"unknown platform {name!r}{hint}")


def spider_class(name: str) -> type[PlatformSpider]:
    try:
        spider = _loader().load(name)
    except KeyError:
        raise UnknownPlatform(f"unknown platform {name!r}; known: {', '.join(platforms())}") from None
    if not issubclass(spider, PlatformSpider):
        raise UnknownPlatform(f"spider {name!r} is not a gpuplan platform spider")
    return spider


def platform_tokens() -> dict[str, Token]:
    """The token each platform declares (`PlatformSpider.token`), by platform: the one list of them."""
    return {name: token for name in platforms() if (token := spider_class(name).token) is not None}


def spider_tokens(name: str) -> list[Token]:
    """Every credential the platform's spider declares: its `token`, and any companion `Token`
    declared beside it (compshare's private key, which signs and is never sent)."""
    return spider_class(name).tokens()


def token_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every credential set in `env` that a spider declares: what no summary, log or table may
    ever show."""
    tokens = [token for name in platforms() for token in spider_tokens(name)]
    return tuple(value for token in tokens if (value := token.value(env)))


def fixture_dir(name: str) -> Path:
    """The platform's recorded snapshot and expected items (package data)."""
    return FIXTURES / name


def previous_fixture_dir(name: str) -> Path | None:
    """The platform's recorded day before the latest (`<fixture_dir>/previous/`), when it has one.

    A `previous/` day holds only the answers that differ from the latest day's: its `snapshot.json`
    names an unchanged answer by the latest day's file (`"body_file": "../01-....json"`), which
    `scrapers.replay` allows inside the package's own fixtures."""
    folder = fixture_dir(name) / PREVIOUS
    return folder if (folder / SNAPSHOT_FILE).is_file() else None
