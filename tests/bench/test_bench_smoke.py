"""The scale benchmarks run end to end at a tiny size (`--quick`), so they cannot rot.

Each script runs as a user runs it (`python bench/<name>.py --quick`, from the repository root)
and must exit 0 and print its table. No timing is asserted: `--quick` does not judge targets,
and figures at these sizes mean nothing. Temporary warehouses go under pytest's tmp_path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scrapers import registry

ROOT = Path(__file__).resolve().parents[2]

# What each script must print: its table's header and its closing line.
EXPECTED = {
    "bench_import.py": ("yardstick read_csv", "import:", "not judged in --quick"),
    "bench_history.py": ("trend (product)", "naive (pandas)", "warehouse on disk:", "not judged in --quick"),
    "bench_growth.py": ("refresh s", "plans", "peak RSS MB by step", "not judged in --quick"),
    "bench_ingest.py": ("read_json s", "ratio", "row-by-row baseline", "not judged in --quick"),
    "bench_e2e.py": ("crawls", "warehouse", "plans", "Dagster", "peak RSS, whole process tree"),
    "bench_startup.py": ("gpuplan --help", "gpuplan sql 'select 1'", "not judged in --quick"),
    "bench_jobs.py": ("process: gpuplan plans --json", "naive: Python loop", "not judged in --quick"),
    "bench_many_jobs.py": ("ours: the job plans writer session", "per job: plan_job", "not judged"),
    "bench_publish.py": ("x yardstick", "before", "full read", "not judged in --quick"),
    "bench_export.py": ("export s (median)", "long / short", "not judged in --quick"),
    "bench_watches.py": ("ours: evaluate_watches", "per watch: one call", "peak RSS", "not judged"),
    "bench_watch_cycle.py": ("one cycle:", "history / empty", "not judged in --quick"),
}


def run_quick(script: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("DAGSTER_HOME", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_quick_run_prints_its_table_and_cleans_up(script: str, tmp_path: Path) -> None:
    result = run_quick(script, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for text in EXPECTED[script]:
        assert text in result.stdout, f"{script} --quick did not print {text!r}:\n{result.stdout}"
    assert sorted(path.name for path in tmp_path.iterdir()) == [], "the script left temporary files"


@pytest.mark.slow
def test_history_pairs_spread_the_synthetic_offers_over_every_platform(tmp_path: Path) -> None:
    """`--history-days --vs-empty` builds its history over the registry's platforms, at the breadth asked."""
    args = ("--history-days", "2", "--vs-empty", "--offers-per-day", "560")
    result = run_quick("bench_e2e.py", tmp_path, *args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    platforms = len(registry.platforms())
    offers = 2 * platforms * (560 // platforms)
    assert f"history: 2 days, {offers:,} offers over {platforms} platforms" in result.stdout, result.stdout
    for text in ("empty s", "history s", "not judged in --quick"):
        assert text in result.stdout, f"--vs-empty --quick did not print {text!r}:\n{result.stdout}"
    assert sorted(path.name for path in tmp_path.iterdir()) == [], "the script left temporary files"
