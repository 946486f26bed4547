"""Load one crawl into the warehouse with the real writer, saying when (test_crash_safety.py kills it).

    python load_child.py WAREHOUSE SUMMARY

Prints "loading" once the writer is open (locked, migrated) and load_crawl starts, "loaded N" when
load_crawl returned, "published" when the writer closed and published the snapshot.
"""

from __future__ import annotations

import sys
from pathlib import Path

from config.settings import Settings
from warehouse.engine import connect
from warehouse.loading import load_crawl


def main(warehouse: str, summary: Path) -> None:
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": warehouse})
    with connect.writer(settings.warehouse) as con:
        print("loading", flush=True)
        result = load_crawl(con, summary)
        print(f"loaded {result.offers_loaded}", flush=True)
    print("published", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
