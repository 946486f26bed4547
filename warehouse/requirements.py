"""Each day's `plan_requirements`: the job sizes its offers allow, and the sizing model's answer for each.

The sizing model (`sizing.planner`) runs in Python; which GPU counts to size comes from the
day's offers (`plans/unit_sizes.sql`). A requirement depends on (model, method, GPU, count)
only, never on the day, so `size_days` sizes every count any of its days offers once and
gives each day exactly the rows sizing that day alone would give. The daily run (one day),
a Dagster backfill (a range) and `gpuplan backfill` all size through `size_days`.
A job plan sizes its own job the same way (`job_requirement_rows`), through the
job's one call into the sizing model (`sizing.jobs.job_requirements`), as plain rows: the ad-hoc
job plan (`gpuplan plans --tokens`) imports no pandas (half its process's start), so pandas is
imported only inside the functions that build frames.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, cast

import duckdb

from sizing import fabric
from sizing.catalog import GpuSpec, load_gpus
from sizing.jobs import Job, job_requirements
from sizing.planner import requirements
from sizing.results import Requirement
from sizing.setup import TrainingSetup
from warehouse import daily_plans, queries

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class SizedDays:
    """What `size_days` stored.

    `requirements`: the sizing model's rows for every (GPU model, job size) any of the days
    allows (REQUIREMENT_COLUMNS); `gpu_models_on_offer`: GPU models priced on any of the days;
    `rows_stored`: plan_requirements rows written, all days together.
    """

    requirements: pd.DataFrame
    gpu_models_on_offer: tuple[str, ...]
    rows_stored: int


def plan_gpu_counts(
    gpus_per_node: int, unit_gpu_counts: Iterable[int], limit: int = daily_plans.MAX_PLAN_GPU_COUNT
) -> list[int]:
    """Every job size a plan on this GPU model can take (`plan_shapes`), up to `limit`.

    1..gpus_per_node (cards picked on one node) and the unit sizes offers sell it in (a 10-GPU
    machine, a 16-GPU cluster).
    """
    counts = {count for count in unit_gpu_counts if 1 <= count <= limit}
    counts.update(range(1, min(gpus_per_node, limit) + 1))
    return sorted(counts)


def _fields(requirement: Requirement) -> dict[str, object]:
    """A requirement's fields as a row: shallow (they are plain values), where dataclasses.asdict
    deep-copies each one, the larger part of building a day's 20k rows."""
    return {field.name: getattr(requirement, field.name) for field in dataclasses.fields(requirement)}


def requirement_rows(found: Iterable[Requirement], gpus: Sequence[GpuSpec]) -> list[dict[str, object]]:
    """The sizing model's requirements as rows: each one's fields and its GPU's `gpus_per_node`
    (REQUIREMENT_COLUMNS and the rest of `Requirement`). `gpus` holds every GPU of `found`."""
    per_node = {gpu.gpu_model: gpu.gpus_per_node for gpu in gpus}
    rows = []
    for requirement in found:
        row = _fields(requirement)
        row["gpus_per_node"] = per_node[requirement.gpu_model]
        rows.append(row)
    return rows


def _offered(unit_sizes: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    """GPU model -> the unit sizes (GPU counts) its offers come in, from (gpu_model, gpu_count) pairs."""
    offered: dict[str, list[int]] = {}
    for gpu_model, gpu_count in unit_sizes:
        offered.setdefault(gpu_model, []).append(gpu_count)
    return offered


def _pairs(unit_sizes: pd.DataFrame) -> Iterable[tuple[str, int]]:
    return zip(unit_sizes["gpu_model"], unit_sizes["gpu_count"], strict=True)


def _count_groups(
    gpus: Sequence[GpuSpec], offered: Mapping[str, Sequence[int]], limit: int
) -> dict[tuple[int, ...], list[str]]:
    """GPU models grouped by the job sizes they take (`offered`: `_offered`): each group is sized
    in one call, so the GPU-independent work is done once per group."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for gpu in gpus:
        counts = plan_gpu_counts(gpu.gpus_per_node, offered.get(gpu.gpu_model, []), limit)
        groups.setdefault(tuple(counts), []).append(gpu.gpu_model)
    return groups


def requirements_frame(
    models: Sequence[str], methods: Sequence[str], gpus: Sequence[GpuSpec], unit_sizes: pd.DataFrame
) -> pd.DataFrame:
    """The sizing model's requirements, one row per (model, method, catalog GPU, job size).

    `unit_sizes` (gpu_model, gpu_count) are the unit sizes on offer. GPUs that take the same job
    sizes are sized in one call, so the GPU-independent work is done once per group.
    """
    import pandas as pd  # the daily path's frames; see the module's docstring

    groups = _count_groups(gpus, _offered(_pairs(unit_sizes)), daily_plans.MAX_PLAN_GPU_COUNT)
    found = (
        requirement
        for model in models
        for method in methods
        for counts, names in groups.items()
        for requirement in requirements(model, method, gpu_counts=counts, gpus=names)
    )
    return pd.DataFrame(requirement_rows(found, gpus))


def job_requirement_rows(job: Job, unit_sizes: Iterable[tuple[str, int]]) -> list[dict[str, object]]:
    """The sizing model's rows for one job (`requirement_rows`) on the GPU models of `unit_sizes`
    ((gpu_model, gpu_count) pairs: the unit sizes its offers come in), at every job size those
    offers allow up to the job's `max_gpus`. Empty when nothing is on offer."""
    offered = _offered(unit_sizes)
    gpus = [gpu for gpu in load_gpus() if gpu.gpu_model in offered]
    groups = _count_groups(gpus, offered, job.max_gpus or daily_plans.MAX_PLAN_GPU_COUNT)
    found = (
        requirement
        for counts, names in groups.items()
        if counts
        for requirement in job_requirements(job, counts, names)
    )
    return [{**row, "internode_gbps_per_gpu": None, "goodput": 1.0} for row in requirement_rows(found, gpus)]


# A fabric's sizing call: (GPU counts, GPU models, GB/s per GPU between nodes) -> the model's rows.
ClusterSizer = Callable[[tuple[int, ...], list[str], float], Iterable[Requirement]]


def cluster_counts(
    offered: Iterable[Sequence[Any]], cap: int | None = None
) -> dict[float, dict[str, set[int]]]:
    """Fabric Gb/s per GPU -> GPU model -> the GPU counts clusters of `offered` take: rows of
    (gpu_model, unit GPUs, Gb/s per GPU or None, node counts), as plans/cluster_sizes.sql and
    jobs/unit_sizes.sql give them. Whole nodes of the catalog's node size only, up to `cap` GPUs
    (a job's max_gpus; None: any)."""
    per_node = {gpu.gpu_model: gpu.gpus_per_node for gpu in load_gpus()}
    clusters: dict[float, dict[str, set[int]]] = {}
    for gpu_model, count, gbps, node_counts in offered:
        if gbps is None or per_node.get(gpu_model) != count:
            continue
        counts = {nodes * count for nodes in node_counts if cap is None or nodes * count <= cap}
        if counts:
            clusters.setdefault(gbps, {}).setdefault(gpu_model, set()).update(counts)
    return clusters


def cluster_rows(
    clusters: Mapping[float, Mapping[str, Iterable[int]]], size: ClusterSizer
) -> list[dict[str, object]]:
    """The sizing model's rows on clusters (`cluster_counts`), each sized by `size` at its fabric's
    bandwidth and saying it (`internode_gbps_per_gpu`), with the goodput its GPU count keeps
    (`sizing.fabric.goodput`); GPU models taking the same counts are sized in one call."""
    catalog = {gpu.gpu_model: gpu for gpu in load_gpus()}
    rows: list[dict[str, object]] = []
    for gbps, by_gpu in sorted(clusters.items()):
        groups: dict[tuple[int, ...], list[str]] = {}
        for gpu_model, counts in by_gpu.items():
            groups.setdefault(tuple(sorted(set(counts))), []).append(gpu_model)
        found = (
            requirement for counts, names in groups.items() for requirement in size(counts, names, gbps / 8)
        )
        gpus = [catalog[name] for names in groups.values() for name in names]
        rows += [
            {**row, "internode_gbps_per_gpu": gbps, "goodput": fabric.goodput(cast(int, row["gpu_count"]))}
            for row in requirement_rows(found, gpus)
        ]
    return rows


def cluster_requirement_rows(
    job: Job, clusters: Mapping[float, Mapping[str, Iterable[int]]]
) -> list[dict[str, object]]:
    """`cluster_rows` for one job (its sizing call at each fabric's bandwidth)."""
    return cluster_rows(clusters, lambda counts, names, gb: job_requirements(job, counts, names, gb))


def job_sizes(gpus: Sequence[GpuSpec], unit_sizes: pd.DataFrame) -> pd.DataFrame:
    """(gpu_model, gpu_count) pairs `requirements_frame` sizes for a day whose offers come in `unit_sizes`."""
    import pandas as pd  # the daily path's frames; see the module's docstring

    offered = _offered(_pairs(unit_sizes))
    return pd.DataFrame(
        [
            (gpu.gpu_model, count)
            for gpu in gpus
            for count in plan_gpu_counts(gpu.gpus_per_node, offered.get(gpu.gpu_model, []))
        ],
        columns=["gpu_model", "gpu_count"],
    )


def size_days(
    con: duckdb.DuckDBPyConnection,
    days: Sequence[date],
    models: Sequence[str],
    methods: Sequence[str],
    fabrics: Sequence[Mapping[str, Any]] = (),
) -> SizedDays:
    """Replace the plan_requirements of each of `days` with the sizing model's rows for that day's offers.

    `con` is the writer; the offers of a day are those of the crawls recorded for it (plan_crawls).
    `fabrics` (`fabric_rows`; empty: none): the day's clusters are sized too, each at its fabric's
    bandwidth (`cluster_rows`). Raises what the sizing model raises for an unknown model or method,
    before anything is written.
    """
    import pandas as pd  # the daily path's frames; see the module's docstring

    if not days:
        return SizedDays(
            requirements=pd.DataFrame(columns=list(daily_plans.REQUIREMENT_COLUMNS)),
            gpu_models_on_offer=(),
            rows_stored=0,
        )
    gpus = load_gpus()
    units = {day: queries.frame(con, "plans/unit_sizes", plan_date=day) for day in days}
    union = pd.concat(units.values(), ignore_index=True).drop_duplicates()
    everything = requirements_frame(models, methods, gpus, union)
    clusters = {
        day: con.execute(
            queries.sql("plans/cluster_sizes"), {"plan_date": day, "fabrics": list(fabrics)}
        ).fetchall()
        if fabrics
        else []
        for day in days
    }
    sized = pd.DataFrame(
        cluster_rows(
            cluster_counts(row for found in clusters.values() for row in found),
            lambda counts, names, gb: (
                requirement
                for model in models
                for method in methods
                for requirement in requirements(
                    model, method, gpu_counts=counts, gpus=names, setup=TrainingSetup(internode_gb_per_s=gb)
                )
            ),
        ),
        columns=[*daily_plans.REQUIREMENT_COLUMNS, *daily_plans.CLUSTER_REQUIREMENT_DEFAULTS],
    )
    stored = sum(
        daily_plans.store_requirements(
            con,
            day,
            pd.concat(
                [
                    everything.merge(job_sizes(gpus, units[day]), on=["gpu_model", "gpu_count"]),
                    _days_clusters(sized, clusters[day]),
                ],
                ignore_index=True,
            ),
        )
        for day in days
    )
    return SizedDays(
        requirements=pd.concat([everything, sized], ignore_index=True),
        gpu_models_on_offer=tuple(sorted(union["gpu_model"].unique())),
        rows_stored=stored,
    )


def fabric_rows(max_nodes: int) -> list[dict[str, Any]]:
    """The cluster table's rows that crawled offers can match, as plan_shapes' `fabrics`: each with
    the node counts a plan may join (`Fabric.node_counts`; none when `max_nodes` is under 2) and
    whether its offers are sold only as a cluster (`Fabric.joined_only`: never one node alone, so
    such a row stays without node counts)."""
    return [
        {
            "platform": row.platform,
            "offer_pattern": row.offer_pattern,
            "fabric": row.label,
            "internode_gbps_per_gpu": row.internode_gbps_per_gpu,
            "node_counts": list(row.node_counts(max_nodes)),
            "min_term_hours": row.min_term_hours,
            "joined_only": row.joined_only,
        }
        for row in fabric.load_fabrics()
        if row.crawled and (row.node_counts(max_nodes) or row.joined_only)
    ]


def _days_clusters(sized: pd.DataFrame, found: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """Of `sized` (cluster rows of all the days), those of one day's clusters (`found`: its rows of
    plans/cluster_sizes.sql)."""
    keys = {
        (gpu_model, gpus, gbps)
        for gbps, by_gpu in cluster_counts(found).items()
        for gpu_model, counts in by_gpu.items()
        for gpus in counts
    }
    mask = [
        (gpu_model, gpus, gbps) in keys
        for gpu_model, gpus, gbps in zip(
            sized["gpu_model"], sized["gpu_count"], sized["internode_gbps_per_gpu"], strict=True
        )
    ]
    return sized[mask]
