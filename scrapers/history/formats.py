"""The import formats: every module of this package that defines `FORMAT` and `read_offers`.

Adding a format is adding one module; nothing keeps a list by hand.
"""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import scrapers.history
from scrapers.history.offers import ImportedFile

ReadOffers = Callable[..., ImportedFile]


@dataclass(frozen=True)
class Format:
    """One file format: its name (`import:<name>` is the source it loads under) and its reader."""

    name: str
    description: str
    read_offers: ReadOffers

    def read(
        self, path: Path, *, observed_on: dt.date | None = None, platform: str | None = None
    ) -> ImportedFile:
        """Read one file; `observed_on` and `platform` override what the file or its name says."""
        return self.read_offers(path, observed_on=observed_on, platform=platform)


@cache
def formats() -> dict[str, Format]:
    """Every import format by name."""
    found = {}
    for info in pkgutil.iter_modules(scrapers.history.__path__):
        module = importlib.import_module(f"{scrapers.history.__name__}.{info.name}")
        if hasattr(module, "FORMAT") and hasattr(module, "read_offers"):
            found[module.FORMAT] = Format(module.FORMAT, module.DESCRIPTION, module.read_offers)
    return dict(sorted(found.items()))


def get(name: str) -> Format:
    """The format called `name`; raises with the known names otherwise."""
    known = formats()
    if name not in known:
        raise KeyError(f"unknown import format {name!r}; known: {', '.join(known)}")
    return known[name]
