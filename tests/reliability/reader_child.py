"""A second process reading the published warehouse while the daily run writes (test_daily_run.py).

    python reader_child.py hold|poll WAREHOUSE STOP_FILE

hold: one read-only connection opened at the start and kept open, read again and again.
poll: a new read-only connection for every read (each sees whatever is published then).
Reads until STOP_FILE exists, then once more. Prints "ready" after the first read and, at the end,
one JSON line: {"observations": [...], "errors": [...]}. An observation is one consistent read
(one statement) of the counts `OBSERVE` names.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb

# Counts that must agree in any consistent state: offers and what crawl_runs says it loaded;
# plan_crawls rows whose crawl is unknown (always 0).
OBSERVE = (
    "SELECT (SELECT count(*) FROM offers), (SELECT coalesce(sum(offers_loaded), 0) FROM crawl_runs), "
    "(SELECT count(*) FROM crawl_runs), (SELECT count(*) FROM cheapest_plans), "
    "(SELECT count(*) FROM plan_crawls WHERE crawl_id NOT IN (SELECT crawl_id FROM crawl_runs))"
)
FIELDS = ("offers", "offers_loaded", "crawls", "plans", "orphan_plan_crawls")
READ_EVERY_S = 0.02  # often enough to catch every publish of a run that lasts seconds


def observe(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    (row,) = con.execute(OBSERVE).fetchall()
    return dict(zip(FIELDS, row, strict=True))


def main(mode: str, warehouse: Path, stop_file: Path) -> None:
    observations: list[dict[str, int]] = []
    errors: list[str] = []
    held = duckdb.connect(str(warehouse), read_only=True) if mode == "hold" else None

    def read() -> None:
        try:
            if held is not None:
                observations.append(observe(held))
            else:
                with duckdb.connect(str(warehouse), read_only=True) as con:
                    observations.append(observe(con))
        except duckdb.Error as exc:
            errors.append(str(exc).splitlines()[0])

    read()
    print("ready", flush=True)
    while not stop_file.exists():
        time.sleep(READ_EVERY_S)
        read()
    read()
    print(json.dumps({"observations": observations, "errors": errors}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
