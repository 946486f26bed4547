"""Bench: `gpuplan refresh --offline` end to end: wall time, peak memory, and where the time goes.

    /work/venv/bin/python bench/bench_e2e.py [--quick] [--repeat 3] [--history-days 0]
    /work/venv/bin/python bench/bench_e2e.py --ratio [--repeat 5]

--ratio measures what adding platforms costs (target RATIO_TARGET): `gpuplan refresh
--offline` of every platform against the same refresh with `--platform vastai` alone, as pairs
interleaved in one run (so both sides see the same machine load), each on a fresh folder and
without DAGSTER_HOME (the README's command), the median of each side, and the load average.

Each run is the real command in a child process, on a fresh warehouse and crawl folder, with
one DAGSTER_HOME whose SQLite storage exists before the first run (as in a deployment), so each
run's event log is kept, as with the UI. The split comes from that event log: each step's
STEP_START to STEP_SUCCESS/FAILURE, grouped by the asset group of what it materialized (crawls,
warehouse = load, plans, digest), or `checks` for asset-check steps. `Dagster` is the run's time
outside any step (planning the run's assets and checks before PIPELINE_START, between steps,
closing the run); `startup` is process start to the run's first event (interpreter, imports,
definitions, instance); `after run` is the last event to exit (the CLI prints the plans).

Peak memory: the largest sum of RSS over the command's whole process tree (the CLI and its
Scrapy children) and the largest single process in it, sampled from /proc every SAMPLE_S.
(getrusage(RUSAGE_CHILDREN) is not used: a child's ru_maxrss counts the bench's own memory it
was forked with before exec, gigabytes after --history-days.) One more run without DAGSTER_HOME
(Dagster's in-memory instance, nothing kept) gives the wall time without event-log storage.

--history-days N first loads N days of SYNTHETIC history (bench_history.py: --offers-per-day,
default HISTORY_OFFERS_PER_DAY, spread evenly over every platform of the spider registry) into the
warehouse, through the history bulk path `gpuplan import` uses, so the refresh runs against a grown
warehouse. With --vs-empty (and
--history-days), each run is a pair, in this order: a refresh on a near-empty warehouse (ONE day of
the same synthetic history), then one on the grown warehouse (target: at most
HISTORY_RATIO times the near-empty one, median of the pairs' ratios).
The grown folder is a fresh copy of a warehouse the writer has published twice,
with its `.prev` and the writer's record of what it published: the state a daily run finds. The
script exits 1 when a run fails, the tree's peak RSS exceeds MEMORY_BUDGET_MB, or the ratio is missed.

    /work/venv/bin/python bench/bench_e2e.py --history-days 365 --vs-empty --repeat 3 [--offers-per-day 50000]

With --quick, --vs-empty runs one pair of `--platform lambda` refreshes and does not judge the ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import bench_history

from config.settings import Settings
from scrapers import registry

# The team's memory budget on the shared 24 GB dev machine.
MEMORY_BUDGET_MB = 8_000
HISTORY_RATIO = 1.15  # refresh on a year of history <= 1.15x refresh on an empty warehouse
# "A year of history at the new breadth (about 50,000 offers a day)", every platform.
HISTORY_OFFERS_PER_DAY = 50_000
SAMPLE_S = 0.05  # a Scrapy child lives ~2-5 s: 50 ms samples see every one at its peak
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
GPUPLAN = Path(sys.executable).with_name("gpuplan")
DAGSTER_YAML = "telemetry:\n  enabled: false\n"  # no banner, no network
GROUPS = (
    "startup",
    "Dagster",
    "crawls",
    "warehouse",
    "plans",
    "jobs",
    "checks",
    "digest",
    "dataset",
    "after run",
)
STEP_END = ("STEP_SUCCESS", "STEP_FAILURE")
RATIO_TARGET = 1.5  # refresh of every platform against one platform alone: adding one costs ~nothing
ONE_PLATFORM = "vastai"  # the platform with the largest live answers


@dataclass
class Run:
    """One refresh: wall seconds, its split (GROUPS -> seconds), peak memory, per-step seconds."""

    wall_s: float
    returncode: int
    tree_peak_mb: float
    process_peak_mb: float
    split_s: dict[str, float] = field(default_factory=dict)
    steps_s: dict[str, float] = field(default_factory=dict)


def process_tree_rss_bytes(root: int) -> list[int]:
    """Resident memory of `root` and of each of its descendants, read from /proc (empty once gone)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # exited while we looked
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # field 4; the name in (...) may hold spaces
        children.setdefault(parent, []).append(int(entry.name))
    sizes, pending = [], [root]
    while pending:
        pid = pending.pop()
        try:
            sizes.append(int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES)
        except OSError:
            continue
        pending.extend(children.get(pid, ()))
    return sizes


class TreeSampler(threading.Thread):
    """Samples a process tree's RSS until stopped: the largest sum seen, and the largest process."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_bytes = 0
        self.process_peak_bytes = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_S):
            sizes = process_tree_rss_bytes(self.root)
            self.peak_bytes = max(self.peak_bytes, sum(sizes))
            self.process_peak_bytes = max(self.process_peak_bytes, *sizes, 0)


def dagster_home(root: Path) -> Path:
    """A DAGSTER_HOME with its SQLite storage created, as a deployment has it before a daily run."""
    import dagster as dg  # only here: the bench's own start stays light

    home = root / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(DAGSTER_YAML, encoding="utf-8")
    dg.DagsterInstance.from_config(str(home)).dispose()
    return home


def refresh(
    folder: Path, platforms: list[str], home: Path | None, day: dt.date | None = None
) -> tuple[Run, dt.datetime]:
    """Run `gpuplan refresh --offline` (of `day`, else today) with its warehouse and crawls in
    `folder`, DAGSTER_HOME `home`."""
    env = dict(os.environ)
    env |= {
        "GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(folder / "crawls"),
    }
    env.pop("DAGSTER_HOME", None)
    if home is not None:
        env["DAGSTER_HOME"] = str(home)
    command = [str(GPUPLAN), "refresh", "--offline", *(arg for p in platforms for arg in ("--platform", p))]
    if day is not None:
        command += ["--date", day.isoformat()]
    started_at = dt.datetime.now(dt.UTC)
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = TreeSampler(process.pid)
    sampler.start()
    output, _ = process.communicate()
    wall_s = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    if process.returncode != 0:
        print(f"refresh exited {process.returncode}; its output ends:\n{output[-2000:]}")
    return Run(
        wall_s, process.returncode, sampler.peak_bytes / 1e6, sampler.process_peak_bytes / 1e6
    ), started_at


def split_from_event_log(run: Run, home: Path, started_at: dt.datetime, settings: Settings) -> None:
    """Fill `run.split_s` and `run.steps_s` from the one run recorded in the instance at `home`."""
    import dagster as dg  # only here: the bench's own start stays light

    from pipelines.definitions import build_defs

    graph = build_defs(settings, offline=True).resolve_asset_graph()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (record,) = instance.get_runs(limit=1)  # the newest: the run just made
        events = [log for log in instance.all_logs(record.run_id) if log.dagster_event is not None]
    step_start: dict[str, float] = {}
    step_group: dict[str, str] = {}
    for log in events:
        event = log.dagster_event
        key = event.step_key
        if event.event_type_value == "STEP_START":
            step_start[key] = log.timestamp
        elif event.event_type_value in STEP_END:
            run.steps_s[key] = log.timestamp - step_start[key]
        elif event.event_type_value == "ASSET_MATERIALIZATION":
            step_group[key] = graph.get(event.asset_key).group_name
    first, last = events[0].timestamp, events[-1].timestamp
    split = dict.fromkeys(GROUPS, 0.0)
    for key, seconds in run.steps_s.items():
        split[step_group.get(key, "checks")] += seconds
    split["startup"] = first - started_at.timestamp()
    split["Dagster"] = (last - first) - sum(run.steps_s.values())
    split["after run"] = run.wall_s - sum(split.values())
    run.split_s = split


def one_day(root: Path, platforms: list[str]) -> Path:
    """A warehouse whose yesterday was refreshed (untimed), to copy before each measured refresh.

    A first offline refresh of an empty warehouse also replays the snapshots' recorded day before
    (two days of work); every daily run after a warehouse's first is one day. So the "empty"
    warehouse the benches measure on is this one: one day of offers, then today refreshed.
    """
    folder = root / "one-day"
    folder.mkdir(parents=True)
    timezone = Settings.from_env({}).schedule_timezone
    yesterday = dt.datetime.now(ZoneInfo(timezone)).date() - dt.timedelta(days=1)
    run, _ = refresh(folder, platforms, None, yesterday)
    if run.returncode != 0:
        raise SystemExit("the untimed refresh of yesterday failed")
    return folder


def seed_history(template: Path, days: int, offers_per_day: int) -> int:
    """A warehouse with `days` days of SYNTHETIC history (`offers_per_day` over every platform) in
    `template`, published twice, so it has a `.prev` as after any daily run; returns the offers."""
    from warehouse.engine import connect

    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(template / "warehouse.duckdb")})
    first_day = bench_history.LAST_DAY - dt.timedelta(days=days - 1)
    loaded = bench_history.build_warehouse(settings, first_day, 0, days, offers_per_day)
    with connect.writer(settings.warehouse):
        pass
    return loaded


def fresh_folder(root: Path, name: str, template: Path | None) -> Path:
    """An empty folder, or a copy of `template`'s warehouse files as the writer left them: its
    record of what it published names the copy (a copy is a new file; the writer would otherwise
    look the snapshot over as one it did not publish, which a daily run never does)."""
    folder = root / name
    folder.mkdir(parents=True)
    if template is not None:
        for path in template.iterdir():
            if path.name.startswith("warehouse") and not path.name.endswith(".lock"):
                shutil.copy2(path, folder / path.name)
                # On disk, as a warehouse written by yesterday's run is: otherwise the measured run's
                # fsyncs flush the copy's dirty pages (~0.3 s for a year of history, a few ms for one day).
                fd = os.open(folder / path.name, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        record_path = folder / "warehouse.writer.duckdb.published"
        record = json.loads(record_path.read_text("utf-8"))
        stat = (folder / "warehouse.duckdb").stat()
        record.update(inode=stat.st_ino, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
        record_path.write_text(json.dumps(record), "utf-8")
    return folder


def report(runs: list[Run], ephemeral: Run | None) -> None:
    wall = statistics.median(run.wall_s for run in runs)
    print(f"\n{'part':<11} {'median s':>9} {'share':>6}   (median of {len(runs)} runs, DAGSTER_HOME kept)")
    for group in GROUPS:
        seconds = statistics.median(run.split_s[group] for run in runs)
        print(f"{group:<11} {seconds:>9.2f} {seconds / wall:>6.0%}")
    print(f"{'wall':<11} {wall:>9.2f} {1:>6.0%}")
    print(f"\n{'step':<34} {'median s':>9}")
    for key in runs[0].steps_s:
        print(f"{key:<34} {statistics.median(run.steps_s.get(key, 0.0) for run in runs):>9.2f}")
    peak = max(run.tree_peak_mb for run in runs)
    largest_mb = max(run.process_peak_mb for run in runs)
    print(f"\npeak RSS, whole process tree: {peak:,.0f} MB; largest single process: {largest_mb:,.0f} MB")
    if ephemeral is not None:
        print(f"wall without DAGSTER_HOME (in-memory instance, 1 run): {ephemeral.wall_s:.2f} s")


def measured_runs(root: Path, template: Path | None, platforms: list[str], repeat: int) -> list[Run]:
    """`repeat` refreshes with one DAGSTER_HOME, each split from its event log, each on a fresh folder."""
    home = dagster_home(root)
    runs = []
    for index in range(repeat):
        folder = fresh_folder(root, f"run{index}", template)
        run, started_at = refresh(folder, platforms, home)
        if run.returncode == 0:
            settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
            split_from_event_log(run, home, started_at, settings)
        print(f"run {index + 1}: {run.wall_s:.2f} s, exit {run.returncode}, peak {run.tree_peak_mb:,.0f} MB")
        runs.append(run)
        shutil.rmtree(folder, ignore_errors=True)
    return runs


def _loads(averages: tuple[float, float, float]) -> str:
    return " ".join(f"{value:.1f}" for value in averages)


def platform_ratio(root: Path, template: Path | None, repeat: int) -> int:
    """Paired refreshes, every platform against ONE_PLATFORM alone; 1 when the ratio misses RATIO_TARGET."""
    walls: dict[str, list[float]] = {"every platform": [], ONE_PLATFORM: []}
    before = os.getloadavg()
    for index in range(repeat):
        pair = [("every platform", []), (ONE_PLATFORM, [ONE_PLATFORM])]
        for name, platforms in pair if index % 2 == 0 else reversed(pair):
            folder = fresh_folder(root, f"ratio-{index}-{len(platforms)}", template)
            run, _ = refresh(folder, platforms, None)
            shutil.rmtree(folder, ignore_errors=True)
            if run.returncode != 0:
                return 1
            walls[name].append(run.wall_s)
            print(f"pair {index + 1}: {name}: {run.wall_s:.2f} s")
    after = os.getloadavg()
    every, one = (statistics.median(values) for values in walls.values())
    ratio = every / one
    print(f"\n{'refresh --offline':<26} {'median s':>9}   (median of {repeat} interleaved pairs)")
    print(f"{'every platform':<26} {every:>9.2f}")
    print(f"{'--platform ' + ONE_PLATFORM:<26} {one:>9.2f}")
    verdict = "ok" if ratio <= RATIO_TARGET else "MISSED"
    print(f"ratio {ratio:.2f}x, target <= {RATIO_TARGET}x: {verdict}")
    print(f"load average {_loads(before)} before, {_loads(after)} after")
    return 0 if ratio <= RATIO_TARGET else 1


def paired_runs(
    root: Path, template: Path, platforms: list[str], repeat: int, empty: Path
) -> list[tuple[Run, Run]]:
    """`repeat` pairs (empty: a copy of `empty`, grown: of `template`), one DAGSTER_HOME, each run
    split from its event log."""
    home = dagster_home(root)
    pairs = []
    for index in range(repeat):
        pair = []
        for kind, source in (("empty", empty), ("history", template)):
            folder = fresh_folder(root, f"{kind}{index}", source)
            before = os.getloadavg()[0]
            run, started_at = refresh(folder, platforms, home)
            if run.returncode == 0:
                settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
                split_from_event_log(run, home, started_at, settings)
            print(
                f"pair {index + 1} {kind:<7}: {run.wall_s:6.2f} s, exit {run.returncode}, "
                f"load average {before:.1f} -> {os.getloadavg()[0]:.1f}"
            )
            pair.append(run)
            shutil.rmtree(folder, ignore_errors=True)
        pairs.append((pair[0], pair[1]))
    return pairs


def report_pairs(pairs: list[tuple[Run, Run]], judged: bool = True) -> bool:
    """Print the split of both kinds and the ratio; True when the target holds (or is not judged)."""
    print(f"\n{'part':<11} {'empty s':>8} {'history s':>10}   (medians of {len(pairs)} pairs)")
    for group in GROUPS:
        empty = statistics.median(run.split_s.get(group, 0.0) for run, _ in pairs)
        grown = statistics.median(run.split_s.get(group, 0.0) for _, run in pairs)
        print(f"{group:<11} {empty:>8.2f} {grown:>10.2f}")
    ratios = [grown.wall_s / empty.wall_s for empty, grown in pairs]
    ratio = statistics.median(ratios)
    empty_wall = statistics.median(run.wall_s for run, _ in pairs)
    grown_wall = statistics.median(run.wall_s for _, run in pairs)
    print(f"{'wall':<11} {empty_wall:>8.2f} {grown_wall:>10.2f}")
    ok = ratio <= HISTORY_RATIO or not judged
    verdict = "not judged in --quick" if not judged else "ok" if ok else "MISSED"
    print(
        f"refresh on history / on empty: {ratio:.2f} (pairs {', '.join(f'{r:.2f}' for r in ratios)}); "
        f"target <= {HISTORY_RATIO}: {verdict}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="refresh runs; medians are reported")
    parser.add_argument("--quick", action="store_true", help="smoke run: one platform (lambda), one run")
    parser.add_argument(
        "--ratio", action="store_true", help=f"every platform against --platform {ONE_PLATFORM}, paired"
    )
    parser.add_argument(
        "--history-days",
        type=int,
        default=0,
        help="days of SYNTHETIC history loaded first (0: empty warehouse)",
    )
    parser.add_argument(
        "--vs-empty",
        action="store_true",
        help="with --history-days: pairs of (empty, grown) refreshes, and their ratio",
    )
    parser.add_argument(
        "--offers-per-day",
        type=int,
        default=HISTORY_OFFERS_PER_DAY,
        help="with --history-days: SYNTHETIC offers a day, spread over every platform",
    )
    args = parser.parse_args(argv)
    platforms = ["lambda"] if args.quick else []
    repeat = 1 if args.quick else args.repeat
    if args.vs_empty and args.history_days > 0:
        return main_pairs(args.history_days, args.offers_per_day, platforms, repeat, judged=not args.quick)

    root = Path(tempfile.mkdtemp(prefix="bench_e2e."))
    try:
        template = one_day(root, platforms) if args.history_days <= 0 else None
        if args.history_days > 0:
            template = root / "template"
            start = time.perf_counter()
            offers = seed_history(template, args.history_days, args.offers_per_day)
            size_mb = (template / "warehouse.duckdb").stat().st_size / 1e6
            print(
                f"history: {args.history_days} days, {offers:,} offers, {size_mb:,.0f} MB, "
                f"{time.perf_counter() - start:.0f} s"
            )
        if args.ratio:
            return platform_ratio(root, template, args.repeat)
        runs = measured_runs(root, template, platforms, repeat)
        ephemeral = None
        if not args.quick:
            ephemeral, _ = refresh(fresh_folder(root, "ephemeral", template), platforms, None)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = [run for run in [*runs, *([ephemeral] if ephemeral else [])] if run.returncode != 0]
    if failed:
        print(f"{len(failed)} refresh run(s) failed")
        return 1
    report(runs, ephemeral)
    peak = max(run.tree_peak_mb for run in runs)
    ok = peak <= MEMORY_BUDGET_MB
    print(f"peak {peak:,.0f} MB; budget <= {MEMORY_BUDGET_MB:,} MB: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


def main_pairs(
    history_days: int, offers_per_day: int, platforms: list[str], repeat: int, judged: bool
) -> int:
    root = Path(tempfile.mkdtemp(prefix="bench_e2e."))
    try:
        template = root / "template"
        start = time.perf_counter()
        offers = seed_history(template, history_days, offers_per_day)
        size_mb = (template / "warehouse.duckdb").stat().st_size / 1e6
        print(
            f"history: {history_days} days, {offers:,} offers over {len(registry.platforms())} platforms, "
            f"{size_mb:,.0f} MB, built in {time.perf_counter() - start:.0f} s"
        )
        # The near-empty side: the same synthetic history, one day of it. Not `one_day`: the offline
        # snapshots replay the same feeds every day, so on a warehouse that refreshed yesterday from
        # them today's loads find their crawls loaded already (no-ops), while on the grown
        # warehouse they load; one synthetic day keeps both sides' work the same but for the size.
        near_empty = root / "one-synthetic-day"
        seed_history(near_empty, 1, offers_per_day)
        pairs = paired_runs(root, template, platforms, repeat, near_empty)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if any(run.returncode != 0 for pair in pairs for run in pair):
        print("a refresh run failed")
        return 1
    return 0 if report_pairs(pairs, judged) else 1


if __name__ == "__main__":
    sys.exit(main())
