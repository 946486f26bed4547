"""Training fabrics between nodes: which offers may be joined into one job and how fast they talk
(`data/clusters.csv`), and what a run on many GPUs loses to interruptions (the goodput factor).

The table is the only place that says an offer can be joined. A row with an `offer_pattern` matches
crawled offers of its platform (the pattern must match the whole `offer_id`); a row without one is a
cluster product no crawl prices yet (a reserved block, an instant cluster sold in a console), listed
so the README can say what exists. A private network alone (a VPC, an overlay, a data centre's LAN)
is no row: nothing here joins it. Bandwidth is one direction, as the vendor quotes it
(`quoted_gbps` per `quoted_per`, over `quoted_over_gpus` GPUs) and derived per GPU.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TypeVar

from sizing.setup import INTERNODE_GB_PER_S

T = TypeVar("T")

CLUSTERS_PATH = Path(__file__).with_name("data") / "clusters.csv"

# Gb/s per GPU between nodes the sizing model assumes where no fabric is named (`gpuplan size`
# without --internode-gbps): sizing.setup.INTERNODE_GB_PER_S in bits.
DEFAULT_INTERNODE_GBPS_PER_GPU = INTERNODE_GB_PER_S * 8
# The fastest NIC one GPU gets today is 800 Gb/s (ConnectX-8, XDR); a figure past four times that is
# a typo (a per-node figure given per GPU), said with the bound.
MAX_INTERNODE_GBPS = 3_200.0
SALE_MODES = ("on_demand_node", "instant_cluster", "reserved_block", "sales_only")
# Node counts a cluster plan tries: powers of two and the halfway steps between them (1.5x), the
# sizes people book (RunPod's 2-8 nodes, Capacity Blocks of 1-64 instances); each is sized, so a
# ladder keeps a job plan interactive where every count up to 64 would size 63 clusters per GPU.
NODE_LADDER = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
DEFAULT_MAX_NODES = 64
# Relative slack on a layout's speed ceiling before it is skipped: the ceiling and the step sum the
# same floating-point terms in another order, which may differ in the last bits (1e-16 relative).
BOUND_SLACK = 1e-9

# Interruptions of a synchronous training job (Llama 3 report, arXiv 2407.21783 §3.3.4): 466 job
# interruptions (47 planned, 419 unexpected) in a 54-day snapshot of pre-training on 16,384 H100s,
# with "higher than 90%" effective training time. The rate per GPU-hour is 466 over the GPU-hours;
# the hours each interruption costs (restart, work since the last checkpoint) follow from the 90%:
# 1/0.9 - 1 of the run lost over 466 interruptions in 54 days. At 90% (the report's floor) the cost
# is an upper bound.
LLAMA3_INTERRUPTIONS = 466
LLAMA3_DAYS = 54
LLAMA3_GPUS = 16_384
LLAMA3_EFFECTIVE_TRAINING = 0.90
INTERRUPTIONS_PER_GPU_HOUR = LLAMA3_INTERRUPTIONS / (LLAMA3_GPUS * LLAMA3_DAYS * 24)
HOURS_LOST_PER_INTERRUPTION = (1 / LLAMA3_EFFECTIVE_TRAINING - 1) * LLAMA3_DAYS * 24 / LLAMA3_INTERRUPTIONS


@dataclass(frozen=True)
class Fabric:
    """One row of the table: a platform's offers (or product) that can be joined, and over what."""

    platform: str
    offer_pattern: str | None
    product: str
    fabric_kind: str
    quoted_gbps: float
    quoted_per: str
    quoted_over_gpus: int
    internode_gbps_per_gpu: float
    sale_mode: str
    nodes_min: int
    nodes_max: int | None
    node_step: int
    min_term_hours: float
    billing: str
    placement_scope: str
    stock_signal: str
    verified: bool
    source: str

    @cached_property
    def internode_gb_per_s(self) -> float:
        """GB/s per GPU, one direction: what the sizing model takes (`TrainingSetup.internode_gb_per_s`)."""
        return self.internode_gbps_per_gpu / 8

    @property
    def crawled(self) -> bool:
        """Whether crawled offers can match this row (a product without a pattern is only listed)."""
        return self.offer_pattern is not None

    @property
    def joined_only(self) -> bool:
        """Whether the platform sells these offers only as a cluster (an instant cluster, a reserved
        block): one node of them is never rented alone."""
        return self.sale_mode in ("instant_cluster", "reserved_block")

    @property
    def label(self) -> str:
        """The fabric in a few characters: `EFA 400`, `IB 400` (its kind's first word and Gb/s per GPU)."""
        return f"{self.fabric_kind.split()[0]} {self.internode_gbps_per_gpu:g}"

    def matches(self, platform: str, offer_id: str) -> bool:
        if self.offer_pattern is None or platform != self.platform:
            return False
        return _compiled(self.offer_pattern).fullmatch(offer_id) is not None

    def node_counts(self, max_nodes: int) -> tuple[int, ...]:
        """Node counts a plan may join, 2 and more: the ladder within the row's limits and `max_nodes`."""
        low, top = max(2, self.nodes_min), min(max_nodes, self.nodes_max or max_nodes)
        return tuple(n for n in NODE_LADDER if low <= n <= top and (n - self.nodes_min) % self.node_step == 0)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _row_to_fabric(row: dict[str, str], line: int) -> Fabric:
    where = f"{CLUSTERS_PATH.name} line {line}"
    try:
        verified = row["verified"].strip().lower()
        if verified not in ("true", "false"):
            raise ValueError(f"verified must be true or false, got {row['verified']!r}")
        fabric = Fabric(
            platform=row["platform"].strip(),
            offer_pattern=row["offer_pattern"].strip() or None,
            product=row["product"].strip(),
            fabric_kind=row["fabric_kind"].strip(),
            quoted_gbps=float(row["quoted_gbps"]),
            quoted_per=row["quoted_per"].strip(),
            quoted_over_gpus=int(row["quoted_over_gpus"]),
            internode_gbps_per_gpu=float(row["internode_gbps_per_gpu"]),
            sale_mode=row["sale_mode"].strip(),
            nodes_min=int(row["nodes_min"]),
            nodes_max=int(row["nodes_max"]) if row["nodes_max"].strip() else None,
            node_step=int(row["node_step"]),
            min_term_hours=float(row["min_term_hours"]),
            billing=row["billing"].strip(),
            placement_scope=row["placement_scope"].strip(),
            stock_signal=row["stock_signal"].strip(),
            verified=verified == "true",
            source=row["source"].strip(),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from exc
    problem = _problem(fabric)
    if problem:
        raise ValueError(f"{where}: {problem}")
    return fabric


def _problem(fabric: Fabric) -> str | None:
    """Why a row cannot stand (None: it can): the derived figure must be the quoted one per GPU."""
    if fabric.sale_mode not in SALE_MODES:
        return f"sale_mode must be one of {', '.join(SALE_MODES)}, got {fabric.sale_mode!r}"
    if abs(fabric.quoted_gbps / fabric.quoted_over_gpus - fabric.internode_gbps_per_gpu) > 1e-9:
        return (
            f"internode_gbps_per_gpu {fabric.internode_gbps_per_gpu:g} is not {fabric.quoted_gbps:g} Gb/s "
            f"per {fabric.quoted_per} over {fabric.quoted_over_gpus} GPUs"
        )
    if fabric.internode_gbps_per_gpu <= 0 or fabric.nodes_min < 1 or fabric.node_step < 1:
        return "bandwidth, nodes_min and node_step must be positive"
    if fabric.nodes_max is not None and fabric.nodes_max < fabric.nodes_min:
        return "nodes_max is under nodes_min"
    if not fabric.source:
        return "a row needs its source"
    if fabric.offer_pattern is not None:
        _compiled(fabric.offer_pattern)  # re.error is a ValueError
    return None


@cache
def _table() -> tuple[Fabric, ...]:
    with CLUSTERS_PATH.open(newline="", encoding="utf-8") as handle:
        return tuple(_row_to_fabric(row, line) for line, row in enumerate(csv.DictReader(handle), start=2))


def load_fabrics() -> list[Fabric]:
    """Every row of the table, in file order (read once per process)."""
    return list(_table())


def fabric_for(platform: str, offer_id: str) -> Fabric | None:
    """The row that lets this offer be joined into a cluster, or None: it is never joined."""
    return next((fabric for fabric in _table() if fabric.matches(platform, offer_id)), None)


def expected_interruptions(gpu_count: int, train_hours: float) -> float:
    """Interruptions a synchronous job on `gpu_count` GPUs expects in `train_hours` (Llama 3's rate)."""
    return INTERRUPTIONS_PER_GPU_HOUR * gpu_count * train_hours


def goodput(gpu_count: int) -> float:
    """Share of wall time that trains on `gpu_count` GPUs: each interruption costs
    HOURS_LOST_PER_INTERRUPTION, and they come at a rate proportional to the GPUs. The hours lost,
    `wall_hours(t, n) - t`, grow with both the GPU count and the run's length; 16,384 GPUs give
    Llama 3's 90%."""
    return 1 / (1 + INTERRUPTIONS_PER_GPU_HOUR * gpu_count * HOURS_LOST_PER_INTERRUPTION)


def wall_hours(train_hours: float, gpu_count: int) -> float:
    """Hours a run of `train_hours` of training takes on `gpu_count` GPUs, interruptions included."""
    return train_hours / goodput(gpu_count)


def goodput_line(gpu_count: int) -> str:
    """The goodput factor as an assumption line of a plan."""
    return (
        f"goodput {goodput(gpu_count):.2%} on {gpu_count:,} GPUs: {INTERRUPTIONS_PER_GPU_HOUR * 1e6:.1f} "
        f"interruptions per million GPU-hours, {HOURS_LOST_PER_INTERRUPTION * 60:.0f} min lost each "
        f"(Llama 3: {LLAMA3_INTERRUPTIONS} interruptions in {LLAMA3_DAYS} days on {LLAMA3_GPUS:,} GPUs, "
        f"{LLAMA3_EFFECTIVE_TRAINING:.0%} effective training time)"
    )


def fastest_option(
    groups: Sequence[Sequence[T]],
    ceilings: Sequence[float],
    rates: Callable[[int], Sequence[tuple[float, float]]],
) -> tuple[T, tuple[float, float]]:
    """Across nodes, the layout that trains fastest among those that fit, with its (tokens per
    second, MFU). `groups` holds every fitting option in the planner's order of preference (ties
    keep the earlier), a group per layout; `ceilings[i]` bounds the tokens per second of any
    option of group i (`StepClock.tokens_bounds`), and `rates(i)` times them. On one node the
    planner keeps the least memory (the smallest ZeRO stage, the least model parallelism); across
    nodes the fabric decides: ZeRO-3/FSDP gathers every weight over it each micro-batch, TP x PP
    with ZeRO-1 sends activations at stage boundaries and the gradients once a step (Narayanan et
    al., arXiv 2104.04473, §3.3; docs/sizing.md), so on a slow fabric the pipeline wins.

    Groups are timed from the highest ceiling down, and the search stops at a ceiling below the
    best found (within BOUND_SLACK, so rounding cannot drop a tie or a winner): the answer is the
    one timing every option would give."""
    if not groups:
        raise ValueError("no option fits")
    best: T | None = None
    best_place, best_rate = (0, 0), (0.0, 0.0)
    order = sorted(range(len(groups)), key=ceilings.__getitem__, reverse=True) if len(groups) > 1 else (0,)
    for group in order:
        if best is not None and ceilings[group] * (1 + BOUND_SLACK) < best_rate[0]:
            break
        for offset, (option, candidate) in enumerate(zip(groups[group], rates(group), strict=True)):
            if (
                best is None
                or candidate[0] > best_rate[0]
                or (candidate[0] == best_rate[0] and (group, offset) < best_place)
            ):
                best, best_place, best_rate = option, (group, offset), candidate
    assert best is not None  # the first group timed sets it
    return best, best_rate
