"""The same history in two orders: the real shared samples.

Before: the history floor judged each row on load against the cheapest price loaded so far, so the
order decided. The SkyPilot Lambda catalogs, then the cherielilili observations: three Vast A100
spot rows (0.13 USD/h) were refused and the import exited 1, 34,888 offers stored. The observations
first: every row loaded, 34,891 offers, an H200 spot bid of 0.06 USD/h among them, kept as a price.
Now every priced row is stored and the history rule judges it when read, against the other
platforms' prices of the card over the window before its day: the same offers and the same
verdicts whatever the order.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplan.cli import app
from warehouse import gpus
from warehouse.engine import connect

pytestmark = pytest.mark.faults

LAMBDA_CATALOGS = ("2026-04-02", "2026-04-06", "2026-04-20", "2026-05-07")
OBSERVATIONS = "price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv"


def _import(warehouse: Path, *args: str | Path) -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["--warehouse", str(warehouse), "import", *map(str, args)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stdout  # every row loaded: nothing refused, no day failed


def _warehouse(folder: Path, steps: list[tuple[str, list[Path]]]) -> dict[str, list[tuple]]:
    """A warehouse with the GPU catalog (as every refresh leaves it), then the imports in order."""
    warehouse = folder / "warehouse.duckdb"
    with connect.writer(warehouse) as con:
        gpus.sync_catalog(con)
    for file_format, files in steps:
        _import(warehouse, file_format, *files)
    with connect.reader(warehouse) as con:
        return {
            "offers": con.execute("SELECT * FROM offers ORDER BY ALL").fetchall(),
            "rejected": con.execute(
                "SELECT crawl_id, raw, reason FROM rejected_offers ORDER BY ALL"
            ).fetchall(),
            "runs": con.execute("SELECT * EXCLUDE (loaded_at) FROM crawl_runs ORDER BY ALL").fetchall(),
            "votes": con.execute("SELECT * FROM price_reference_votes ORDER BY ALL").fetchall(),
            "implausible": con.execute("SELECT * FROM implausible_offers ORDER BY ALL").fetchall(),
            "a100_spot": con.execute(
                "SELECT o.run_day, o.price_usd_per_gpu_hour, i.reason IS NOT NULL FROM offers AS o "
                "LEFT JOIN implausible_offers AS i USING (crawl_id, offer_id, pricing_type) "
                "WHERE o.platform = 'vastai' AND o.gpu_model = 'A100 SXM 80GB' AND o.pricing_type = 'spot' "
                "AND o.price_usd_per_gpu_hour = 0.13 ORDER BY ALL"
            ).fetchall(),
            "h200_spot": con.execute(
                "SELECT run_day, price_usd_per_gpu_hour, reason FROM implausible_offers "
                "WHERE gpu_model = 'H200 SXM 141GB' ORDER BY ALL"
            ).fetchall(),
        }


@pytest.mark.slow
def test_the_same_history_in_two_orders_stores_the_same_offers_and_verdicts(
    tmp_path: Path, sample: Callable[[str], Path]
) -> None:
    catalogs = [sample(f"skypilot_catalog_format/lambda_vms_{day}.csv") for day in LAMBDA_CATALOGS]
    observations = [sample(OBSERVATIONS)]
    first = _warehouse(tmp_path / "catalogs_first", [("skypilot", catalogs), ("observations", observations)])
    second = _warehouse(
        tmp_path / "observations_first", [("observations", observations), ("skypilot", catalogs)]
    )
    for table in first:
        assert first[table] == second[table], f"{table} differ between the two orders"
    assert first["rejected"] == []
    # the three Vast A100 spot rows the old order refused: stored, and plausible (vast is the only spot
    # seller of the card, so the compute stand-in judges them: the other platforms' spot per TFLOP)
    days = [row[0] for row in first["a100_spot"] if not row[2]]
    assert {dt.date(2026, 4, 16), dt.date(2026, 4, 29), dt.date(2026, 5, 1)} <= set(days)
    # the H200 spot bid of 0.06 the other order kept as a price: stored, judged implausible, with why
    (h200, *_) = first["h200_spot"]
    assert h200[:2] == (dt.date(2026, 4, 19), 0.06)
    assert h200[2].startswith(
        "implausible price: 0.06 USD per GPU-hour is under 10% of what the other platforms"
    )
