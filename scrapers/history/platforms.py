"""Our platform slugs for the provider names that other trackers write.

A slug is the spider's name (`vastai`, `runpod`, `lambda`), so imported history and
our own crawls of the same platform share one `platform` value; the `source` column
tells them apart.
"""

from __future__ import annotations

import re

import pandas as pd

# Names other trackers use for a platform we crawl under another slug.
# vast / lambdalabs: the SkyPilot and dstack gpuhunt catalog names (price-sources.md §1-2);
# verda: DataCrunch's new name (gpuhunt renamed its provider), our spider is `datacrunch`;
# do: SkyPilot's DigitalOcean catalog.
_ALIASES = {
    "vast": "vastai",
    "lambdalabs": "lambda",
    "verda": "datacrunch",
    "do": "digitalocean",
}
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def platform_slug(name: str) -> str:
    """`"vast.ai"` -> `"vastai"`, `"Massed Compute"` -> `"massedcompute"`, `"lambdalabs"` -> `"lambda"`."""
    slug = _NOT_SLUG.sub("", name.strip().lower())
    if not slug:
        raise ValueError(f"no platform name in {name!r}")
    return _ALIASES.get(slug, slug)


def platform_slugs(names: pd.Series) -> pd.Series:
    """`platform_slug` for a column, computed once per distinct name."""
    distinct = {name: platform_slug(name) for name in names.dropna().unique()}
    return names.map(distinct)
