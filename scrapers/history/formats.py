"""The import formats: every module of this package that defines `FORMAT` and either
`read_chunks(path, options)` (read in Python, a chunk of rows at a time) or `QUERY` (read by DuckDB in
the warehouse: `warehouse.imports` runs the query; the module checks the header and resolves names).

Adding a format is adding one module; nothing keeps a list by hand.
"""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

import scrapers.history
from scrapers.history.offers import CHUNK_ROWS, ImportedChunk, ImportedFile, ReadOptions, whole_file

ReadChunks = Callable[..., Iterator[ImportedChunk]]


@dataclass(frozen=True)
class Format:
    """One file format: its name (`import:<name>` is the source it loads under) and its reader."""

    name: str
    description: str
    read_chunks: ReadChunks | None = None
    # A format read in the warehouse: the module with QUERY, NAMES_QUERY, check_header, lookups and
    # problem (scrapers/history/observations.py).
    sql_reader: ModuleType | None = None

    def chunks(
        self,
        path: Path,
        *,
        observed_on: dt.date | None = None,
        platform: str | None = None,
        chunk_rows: int = CHUNK_ROWS,
    ) -> Iterator[ImportedChunk]:
        """Read one file `chunk_rows` rows at a time; `observed_on` and `platform` override what the
        file or its name says. Errors (not this format, no date) come at the first chunk or, for a
        row the CSV parser cannot split, at its chunk."""
        if self.read_chunks is None:
            raise ValueError(f"{self.name} files are read in the warehouse (warehouse.imports.import_file)")
        return self.read_chunks(path, ReadOptions(observed_on, platform, chunk_rows))

    def read(
        self, path: Path, *, observed_on: dt.date | None = None, platform: str | None = None
    ) -> ImportedFile:
        """Read one file at once."""
        return whole_file(path, self.name, self.chunks(path, observed_on=observed_on, platform=platform))


@cache
def formats() -> dict[str, Format]:
    """Every import format by name."""
    found = {}
    for info in pkgutil.iter_modules(scrapers.history.__path__):
        module = importlib.import_module(f"{scrapers.history.__name__}.{info.name}")
        if hasattr(module, "FORMAT") and hasattr(module, "read_chunks"):
            found[module.FORMAT] = Format(module.FORMAT, module.DESCRIPTION, read_chunks=module.read_chunks)
        elif hasattr(module, "FORMAT") and hasattr(module, "QUERY"):
            found[module.FORMAT] = Format(module.FORMAT, module.DESCRIPTION, sql_reader=module)
    return dict(sorted(found.items()))


def get(name: str) -> Format:
    """The format called `name`; raises with the known names otherwise."""
    known = formats()
    if name not in known:
        raise KeyError(f"unknown import format {name!r}; known: {', '.join(known)}")
    return known[name]
