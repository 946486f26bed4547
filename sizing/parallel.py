"""Tensor x pipeline x data parallel layouts: which ones a GPU count allows, and the share of
the model, the micro-batches in flight and the pipeline bubble of each.

TP runs inside a node (its all-reduces sit on the critical path of every layer), PP across
nodes (one activation per micro-batch crosses a stage boundary); data parallelism over what is
left, with the distributed optimizer (ZeRO-1) or plain replicas (Narayanan et al., arXiv
2104.04473, §3.3: "tensor model parallelism within a server, pipeline parallelism across").
With the 1F1B schedule the first stage holds min(p, m) micro-batches of activations and the
step takes (m + p - 1) micro-batch slots: a bubble of (p - 1)/m (Narayanan §2.2.1).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

from sizing.activations import ActivationPlan, Activations, LayerCosts, stage_activations
from sizing.methods import StateBytes
from sizing.shapes import ModelSpec

# Degrees the planner tries: powers of two, as in every published Megatron/NeMo configuration.
_DEGREES = (1, 2, 4, 8, 16, 32, 64)
# What one GPU of a pipeline stage holds: its share of the model states and its activations.
Shard = tuple[StateBytes, Activations]


class Layout(NamedTuple):
    """`tp` GPUs split each layer, `pp` stages split the layers; the rest is data parallel. A named
    tuple, so that the planner's caches, keyed by layout, hash and compare it in C."""

    tp: int = 1
    pp: int = 1

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp

    def dp(self, gpu_count: int) -> int:
        return gpu_count // self.model_parallel

    def fits_count(self, gpu_count: int) -> bool:
        return gpu_count % self.model_parallel == 0

    def layers_per_stage(self, spec: ModelSpec) -> int:
        return math.ceil(spec.layers / self.pp)

    def bubble(self, micro_batches: int) -> float:
        """Idle fraction added to the ideal step: (p - 1) / m."""
        return (self.pp - 1) / micro_batches

    def describe(self) -> str:
        return f"TP{self.tp} x PP{self.pp}"


DATA_PARALLEL = Layout()


def check_layout(layout: Layout, spec: ModelSpec, gpu_count: int, gpus_per_node: int | None = None) -> None:
    """ValueError when `layout` cannot run `spec` on `gpu_count` GPUs (of nodes of `gpus_per_node`)."""
    if not layout.fits_count(gpu_count):
        raise ValueError(
            f"{layout.describe()} needs a multiple of {layout.model_parallel} GPUs, not {gpu_count}"
        )
    if layout.pp > spec.layers:
        raise ValueError(f"PP{layout.pp} exceeds the model's {spec.layers} layers")
    if spec.heads % layout.tp or (spec.kv_heads % layout.tp and layout.tp % spec.kv_heads):
        raise ValueError(f"TP{layout.tp} does not divide the {spec.heads} attention heads")
    if gpus_per_node is not None and layout.tp > gpus_per_node:
        raise ValueError(f"TP{layout.tp} spans more than one node of {gpus_per_node} GPUs")


def candidate_layouts(spec: ModelSpec, gpu_count: int, gpus_per_node: int) -> list[Layout]:
    """Model-parallel layouts for `gpu_count` GPUs in the order the planner tries them: TP
    doubling inside a node first (2, 4, ... up to the node), then, at the widest TP, pipeline
    stages doubling across nodes. Layouts the model or count cannot take are skipped."""
    ladder = [Layout(tp, 1) for tp in _DEGREES[1:] if tp <= min(gpus_per_node, gpu_count)]
    widest = max((layout.tp for layout in ladder if _runs(layout, spec, gpu_count, gpus_per_node)), default=1)
    ladder += [Layout(widest, pp) for pp in _DEGREES[1:] if widest * pp <= gpu_count]
    return [layout for layout in ladder if _runs(layout, spec, gpu_count, gpus_per_node)]


def _runs(layout: Layout, spec: ModelSpec, gpu_count: int, gpus_per_node: int) -> bool:
    try:
        check_layout(layout, spec, gpu_count, gpus_per_node)
    except ValueError:
        return False
    return True


def stage_share(spec: ModelSpec, layout: Layout, first: bool) -> float:
    """Share of the model's parameters one GPU of the first (or last) stage holds: its layers
    and the embedding (first) or LM head (last; with tied embeddings and PP a copy of the
    embedding), split over TP (Megatron splits the vocabulary too)."""
    layers = layout.layers_per_stage(spec) * spec.decoder_params / spec.layers
    if layout.pp == 1:
        table = spec.embedding_params + spec.lm_head_params
    elif first:
        table = spec.embedding_params
    else:
        table = spec.lm_head_params or spec.embedding_params
    return (layers + table) / layout.tp / spec.params


def scaled_states(states: StateBytes, share: float) -> StateBytes:
    """The states of one model-parallel shard holding `share` of the parameters (the gathered
    units stay whole: only the data-parallel engines gather them)."""
    return replace(
        states,
        weights=states.weights * share,
        gradients=states.gradients * share,
        optimizer=states.optimizer * share,
        fp32_gradient_bytes=states.fp32_gradient_bytes * share,
        replicated_weights=states.replicated_weights * share,
        trainable_params=round(states.trainable_params * share),
    )


def stage_shards(
    states: StateBytes,
    costs: LayerCosts,
    plan: ActivationPlan,
    spec: ModelSpec,
    layout: Layout,
    grad_accum: int,
    virtual: int,
) -> tuple[Shard, ...]:
    """The shard of one GPU of the first pipeline stage, then of the last (only the first without
    a pipeline), with `virtual` chunks per GPU: what its memory adds up, whatever the number of
    data-parallel replicas. `costs` are one layer's activations under the layout's TP."""
    p, layers = layout.pp, layout.layers_per_stage(spec)
    # Interleaving holds (1 + (p - 1)/(p v)) times the 1F1B first stage's micro-batches
    # (Korthikanti §4.2.3).
    in_flight = min(p, grad_accum) * (1 + (p - 1) / (p * virtual) if virtual > 1 else 1)
    return tuple(
        (
            scaled_states(states, stage_share(spec, layout, first)),
            stage_activations(costs, plan, layers, in_flight if first else 1, has_loss=not first or p == 1),
        )
        for first in ((True, False) if p > 1 else (True,))
    )


def compute_share(spec: ModelSpec, layout: Layout) -> float:
    """Share of a micro-batch's matmul FLOPs on one GPU of the busiest stage (the last, which
    also runs the LM head), over TP."""
    head = spec.vocab * spec.hidden
    layers = (spec.active_matmul_params_per_token - head) * layout.layers_per_stage(spec) / spec.layers
    return (layers + head) / spec.active_matmul_params_per_token / layout.tp
