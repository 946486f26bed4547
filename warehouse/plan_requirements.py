"""Each day's `plan_requirements`: the job sizes its offers allow, and the sizing model's answer for each.

The sizing model (`sizing.planner`) runs in Python; which GPU counts to size comes from the
day's offers (`plans/unit_sizes.sql`). A requirement depends on (model, method, GPU, count)
only, never on the day, so `size_days` sizes every count any of its days offers once and
gives each day exactly the rows sizing that day alone would give. The daily run (one day),
a Dagster backfill (a range) and `gpuplan backfill` all size through `size_days`.
A job plan (issue 17) sizes its own job the same way (`job_requirement_rows`), through the
job's one call into the sizing model (`sizing.jobs.job_requirements`), as plain rows: the ad-hoc
job plan (`gpuplan plans --tokens`) imports no pandas (half its process's start), so pandas is
imported only inside the functions that build frames.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, cast

import duckdb

from sizing import fabric
from sizing.catalog import GpuSpec, load_gpus
from sizing.jobs import Job, job_requirements
from sizing.planner import requirements
from sizing.results import Requirement
from warehouse import plans, queries

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
    gpus_per_node: int, unit_gpu_counts: Iterable[int], limit: int = plans.MAX_PLAN_GPU_COUNT
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

    groups = _count_groups(gpus, _offered(_pairs(unit_sizes)), plans.MAX_PLAN_GPU_COUNT)
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
    groups = _count_groups(gpus, offered, job.max_gpus or plans.MAX_PLAN_GPU_COUNT)
    found = (
        requirement
        for counts, names in groups.items()
        if counts
        for requirement in job_requirements(job, counts, names)
    )
    return [{**row, "internode_gbps_per_gpu": None, "goodput": 1.0} for row in requirement_rows(found, gpus)]


def cluster_requirement_rows(
    job: Job, clusters: Mapping[float, Mapping[str, Iterable[int]]]
) -> list[dict[str, object]]:
    """The sizing model's rows for one job on clusters: `clusters` maps a fabric's Gb/s per GPU to
    the GPU models joined over it and their GPU counts (whole nodes). Each row is sized at that
    bandwidth and says it (`internode_gbps_per_gpu`), with the goodput its GPU count keeps
    (`sizing.fabric.goodput`); GPU models taking the same counts are sized in one call."""
    catalog = {gpu.gpu_model: gpu for gpu in load_gpus()}
    rows: list[dict[str, object]] = []
    for gbps, by_gpu in sorted(clusters.items()):
        groups: dict[tuple[int, ...], list[str]] = {}
        for gpu_model, counts in by_gpu.items():
            groups.setdefault(tuple(sorted(set(counts))), []).append(gpu_model)
        found = (
            requirement
            for counts, names in groups.items()
            for requirement in job_requirements(job, counts, names, gbps / 8)
        )
        gpus = [catalog[name] for names in groups.values() for name in names]
        rows += [
            {**row, "internode_gbps_per_gpu": gbps, "goodput": fabric.goodput(cast(int, row["gpu_count"]))}
            for row in requirement_rows(found, gpus)
        ]
    return rows


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
    con: duckdb.DuckDBPyConnection, days: Sequence[date], models: Sequence[str], methods: Sequence[str]
) -> SizedDays:
    """Replace the plan_requirements of each of `days` with the sizing model's rows for that day's offers.

    `con` is the writer; the offers of a day are those of the crawls recorded for it (plan_crawls).
    Raises what the sizing model raises for an unknown model or method, before anything is written.
    """
    import pandas as pd  # the daily path's frames; see the module's docstring

    if not days:
        return SizedDays(
            requirements=pd.DataFrame(columns=list(plans.REQUIREMENT_COLUMNS)),
            gpu_models_on_offer=(),
            rows_stored=0,
        )
    gpus = load_gpus()
    units = {day: queries.frame(con, "plans/unit_sizes", plan_date=day) for day in days}
    union = pd.concat(units.values(), ignore_index=True).drop_duplicates()
    everything = requirements_frame(models, methods, gpus, union)
    stored = sum(
        plans.store_requirements(
            con, day, everything.merge(job_sizes(gpus, units[day]), on=["gpu_model", "gpu_count"])
        )
        for day in days
    )
    return SizedDays(
        requirements=everything,
        gpu_models_on_offer=tuple(sorted(union["gpu_model"].unique())),
        rows_stored=stored,
    )
