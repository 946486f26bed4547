"""Collectives and host links: the bandwidth one GPU's collectives see, and the bytes ZeRO/FSDP
and Megatron's distributed optimizer move per micro-batch and per step (ring algorithms at
(n - 1)/n; ZeRO §7 for the stage-3 volume)."""

from __future__ import annotations

from sizing.catalog import GpuSpec
from sizing.methods import StateBytes

# nccl-tests reach about 80% of the advertised one-direction bandwidth (ml-engineering
# network notes, sizing.md §4).
COLLECTIVE_EFFICIENCY = 0.8
# Ascend HCCS: intra-node all_reduce bus bandwidth measured at 2, 4 and 8 NPUs
# (gameofdimension/limulidae README: 18 / 30 / 72 GB/s, against A800's 143 / 104 / 89), used
# as is instead of the aggregate link figure, which HCCS's full mesh never delivers to one ring.
HCCS_BUS_GB_PER_S = ((2, 18.0), (4, 30.0), (8, 72.0))
# Host link, one direction, for CPU offload and for NVLink-bridge cards past their pair:
# PCIe 3.0/4.0/5.0 x16 carry 16/32/64 GB/s per direction (sizing.md §4); GH200 reaches its
# Grace CPU over NVLink-C2C (900 GB/s both directions).
HOST_LINK_GB_PER_S = {
    "V100": 16.0,
    "H100": 64.0,
    "H800": 64.0,
    "H200": 64.0,
    "H20": 64.0,
    "B200": 64.0,
    "B300": 64.0,
    "MI300X": 64.0,
    "MI325X": 64.0,
    "MI355X": 64.0,
    "Gaudi 3": 64.0,
    "RTX 5090": 64.0,
    "GH200": 450.0,
    "GB200": 450.0,  # NVLink-C2C to Grace, 450 GB/s per direction (ml-engineering network notes)
    "GB300": 450.0,
}
DEFAULT_HOST_LINK_GB_PER_S = 32.0  # PCIe 4.0 x16
# Sustained DRAM bandwidth of a rented GPU server's CPUs for the offloaded optimizer step;
# dual-socket servers reach 100-300 GB/s, rented hosts are often the low end.
CPU_MEMORY_GB_PER_S = 100.0


def host_link_gb_per_s(gpu: GpuSpec) -> float:
    """One direction of the GPU's link to its host CPU."""
    if gpu.interconnect.startswith("PCIe"):
        return gpu.interconnect_gb_per_s / 2
    return HOST_LINK_GB_PER_S.get(gpu.family, DEFAULT_HOST_LINK_GB_PER_S)


def collective_gb_per_s(gpu: GpuSpec, gpu_count: int, internode_gb_per_s: float) -> float:
    """Bandwidth one GPU's collectives see: one direction of its link, at nccl efficiency
    (HCCS: the measured bus bandwidth); across nodes, the slower of that and the network."""
    if gpu.interconnect == "HCCS":
        ring = min(gpu_count, gpu.gpus_per_node)
        link = next((gb for count, gb in HCCS_BUS_GB_PER_S if ring <= count), HCCS_BUS_GB_PER_S[-1][1])
        return (
            min(link, internode_gb_per_s * COLLECTIVE_EFFICIENCY) if gpu_count > gpu.gpus_per_node else link
        )
    link = gpu.interconnect_gb_per_s / 2
    if gpu.interconnect == "NVLink bridge" and gpu_count > 2:
        link = host_link_gb_per_s(gpu)  # bridges join pairs; past a pair it is PCIe
    if gpu_count > gpu.gpus_per_node:
        link = min(link, internode_gb_per_s)
    return link * COLLECTIVE_EFFICIENCY


def comm_bytes(
    states: StateBytes, stage: int, n: int, accounting: str, share: float = 1.0
) -> tuple[float, float]:
    """(per micro-batch, per step) bytes each GPU sends in ring collectives over `n` replicas,
    for a model-parallel shard holding `share` of the states."""
    if n == 1:
        return 0.0, 0.0
    ring = (n - 1) / n * share
    grads, weights, trainable = states.gradients, states.weights, states.trainable_params
    if accounting == "megatron":  # reduced in fp32 from the main-gradient buffer
        grads = states.fp32_gradient_bytes or grads
    if stage == 3:  # all-gather weights forward and backward, reduce-scatter gradients
        return ring * (2 * weights + grads), 0.0
    if stage == 2:  # reduce-scatter every micro-batch, all-gather updated weights per step
        return ring * grads, ring * trainable * 2
    if stage == 1 and accounting == "megatron":  # reduce-scatter, then all-gather params
        return 0.0, ring * (grads + trainable * 2)
    return 0.0, 2 * ring * grads  # one all-reduce per step (no sync while accumulating)
