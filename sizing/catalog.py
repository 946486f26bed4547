"""The GPU catalog: `data/gpus.csv`, one row per canonical GPU model name.

Scrapers map raw platform names to exactly these `gpu_model` strings and the warehouse
mirrors the columns into its `gpus` table, so names here are a contract.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

CATALOG_PATH = Path(__file__).with_name("data") / "gpus.csv"

# Vendors size HBM/GDDR in binary units: an "80GB" H100 has 80 GiB of memory.
NAMEPLATE_BYTES_PER_GB = 2**30
# Share of the nameplate the device offers a process, as PyTorch reports it ("GPU 0 has a total
# capacity of ..." in its out-of-memory messages): 79.11-79.15 GiB of an 80 GB H100 or A100,
# 139.80 of a 141 GB H200, 39.38-39.39 of an A100 40GB, 23.52-23.69 of a 24 GB RTX 3090/4090
# (docs/sizing.md lists where each was read). The CUDA context, NCCL and cuBLAS buffers come out
# of it: they are the memory model's overhead.
USABLE_FRACTION = 0.985
# Data-centre GDDR cards run with ECC on, which holds back 1/16: an A10G reports 22,516 MiB
# (0.916 of 24 GiB), an L4 22.03-22.30 GiB, an L40S 46,068 MiB in Vast's listing (0.937).
ECC_GDDR_FAMILIES = frozenset({"A10", "A10G", "A40", "L4", "L20", "L40", "L40S", "T4"})
ECC_GDDR_USABLE_FRACTION = 15 / 16 * USABLE_FRACTION
NON_CUDA_FAMILIES = ("Ascend", "MI", "Gaudi")
# An Ascend 910B2C reports 62,432 MiB of its 64 GiB (sizing.md §1.5).
ASCEND_USABLE_FRACTION = 62_432 / 65_536


@dataclass(frozen=True)
class GpuSpec:
    """One catalog row. Memory in nameplate GB (binary, see above); bandwidths in GB/s.

    `bf16_dense_tflops` is the dense (no sparsity) tensor rate with FP32 accumulate, the
    rate training runs at (FP16 for Volta, which has no BF16). `interconnect_gb_per_s` is
    the per-GPU bidirectional figure vendors quote for `interconnect`; `gpus_per_node` is
    the most GPUs of this model one server holds. `verified` is False when any value is
    unverified; `source` says where each value comes from and why.
    """

    gpu_model: str
    family: str
    form: str | None
    memory_gb: float
    bf16_dense_tflops: float
    memory_bandwidth_gb_per_s: float
    interconnect: str
    interconnect_gb_per_s: float
    gpus_per_node: int
    verified: bool
    source: str

    @cached_property
    def runs_cuda(self) -> bool:
        """An NVIDIA GPU (CUDA-only kernels such as Transformer Engine's userbuffers run on it);
        the catalog's other families are Huawei's Ascend, AMD's Instinct MI and Intel's Gaudi."""
        return not self.family.startswith(NON_CUDA_FAMILIES)

    @cached_property
    def usable_fraction(self) -> float:
        """Share of the nameplate the device reports to PyTorch (see USABLE_FRACTION)."""
        if self.family in ECC_GDDR_FAMILIES:
            return ECC_GDDR_USABLE_FRACTION
        if self.family.startswith("Ascend"):
            return ASCEND_USABLE_FRACTION
        return USABLE_FRACTION

    @cached_property
    def usable_memory_gb(self) -> float:
        """Memory a training process can allocate, in GB of 1e9 bytes."""
        return self.memory_gb * NAMEPLATE_BYTES_PER_GB * self.usable_fraction / 1e9


def _parse_bool(value: str, where: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in {"true", "false"}:
        raise ValueError(f"{where}: verified must be true or false, got {value!r}")
    return lowered == "true"


def _row_to_spec(row: dict[str, str], line: int) -> GpuSpec:
    where = f"{CATALOG_PATH.name} line {line}"
    try:
        return GpuSpec(
            gpu_model=row["gpu_model"].strip(),
            family=row["family"].strip(),
            form=row["form"].strip() or None,
            memory_gb=float(row["memory_gb"]),
            bf16_dense_tflops=float(row["bf16_dense_tflops"]),
            memory_bandwidth_gb_per_s=float(row["memory_bandwidth_gb_per_s"]),
            interconnect=row["interconnect"].strip(),
            interconnect_gb_per_s=float(row["interconnect_gb_per_s"]),
            gpus_per_node=int(row["gpus_per_node"]),
            verified=_parse_bool(row["verified"], where),
            source=row["source"].strip(),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from exc


@cache
def _catalog() -> tuple[GpuSpec, ...]:
    with CATALOG_PATH.open(newline="", encoding="utf-8") as handle:
        # Line 1 is the header, so the first data row is line 2.
        return tuple(_row_to_spec(row, line) for line, row in enumerate(csv.DictReader(handle), start=2))


def load_gpus() -> list[GpuSpec]:
    """Every catalog GPU, in file order (the file is read once per process)."""
    return list(_catalog())


def name_key(name: str) -> str:
    """The forgiving form of a name: lower case, no spaces, dashes, underscores or dots."""
    return re.sub(r"[\s\-_./]+", "", name.lower())


@cache
def _by_key() -> dict[str, GpuSpec]:
    return {name_key(gpu.gpu_model): gpu for gpu in _catalog()}


def find_gpu(name: str) -> GpuSpec:
    """The catalog GPU called `name`, ignoring case, spaces and dashes ("h100-sxm-80gb").

    A name without the memory suffix ("H100 SXM", "rtx4090") matches when exactly one
    catalog entry starts with it. Raises ValueError naming close candidates otherwise.
    """
    key = name_key(name)
    if not key:
        raise ValueError("empty GPU name")
    by_key = _by_key()
    if key in by_key:
        return by_key[key]
    prefixed = [gpu for k, gpu in by_key.items() if k.startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    if prefixed:
        names = ", ".join(gpu.gpu_model for gpu in prefixed)
        raise ValueError(f"GPU {name!r} is ambiguous: {names}")
    raise ValueError(f"unknown GPU {name!r}; known: {', '.join(gpu.gpu_model for gpu in _catalog())}")
