"""The seed article's sizing claims beside our estimate, with the difference explained.

The article (shared/seed, "大模型训练GPU租赁方案：不同显存显卡的适用场景与成本测算") sizes
mixed-precision training at 3-4x the parameter count in GB and recommends GPUs per model
size; `data/article.csv` holds each claim with its quote.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sizing.catalog import find_gpu
from sizing.planner import DEFAULT_GPU_COUNTS, Sizing, prepare
from sizing.setup import TrainingSetup

ARTICLE_PATH = Path(__file__).with_name("data") / "article.csv"
ARTICLE_TITLE = "大模型训练GPU租赁方案:不同显存显卡的适用场景与成本测算"
# The article's size classes are 7B, 13B, 30B and 70B; a model within this factor of one
# (in either direction) gets that class's figures.
_SIZE_CLASS_TOLERANCE = 1.25
# Which article figure speaks to each of our methods: its rule is for mixed-precision
# (16-bit) full training; its one fine-tuning figure is for LoRA.
_ARTICLE_METHOD = {"full": "full", "full-bf16": "full", "lora": "lora", "qlora": "lora"}


@dataclass(frozen=True)
class Claim:
    """One statement of the article: memory in GB (high None = "or more")."""

    claim: str  # "rule" (GB per billion parameters) or "size" (for one size class)
    size_b: float | None
    method: str
    memory_gb_low: float
    memory_gb_high: float | None
    gpu_model: str | None
    gpu_count: int | None
    quote: str


@dataclass(frozen=True)
class GpuCheck:
    """An article GPU recommendation checked by our model."""

    gpu_model: str
    article_gpu_count: int
    fits: bool  # at the article's count
    per_gpu_memory_gb: float  # at the article's count, smallest fitting (or least) ZeRO stage
    usable_memory_gb: float
    zero_stage: int
    our_gpu_count: int | None  # smallest count that fits, None if none up to 64
    quote: str


@dataclass(frozen=True)
class Comparison:
    """The article's figures and ours for one model and method. GB are 1e9 bytes."""

    model: str
    model_preset: str
    params: int
    method: str
    rule_gb: tuple[float, float] | None  # the 3-4x rule, for full methods
    size_claim: Claim | None  # the size-class figure, when one applies
    ours_gb: float
    gpu_checks: tuple[GpuCheck, ...]
    explanation: tuple[str, ...]


@cache
def claims() -> tuple[Claim, ...]:
    """Every claim in `data/article.csv`, in file order."""
    with ARTICLE_PATH.open(newline="", encoding="utf-8") as handle:
        return tuple(
            Claim(
                claim=row["claim"],
                size_b=float(row["size_b"]) if row["size_b"] else None,
                method=row["method"],
                memory_gb_low=float(row["memory_gb_low"]),
                memory_gb_high=float(row["memory_gb_high"]) if row["memory_gb_high"] else None,
                gpu_model=row["gpu_model"] or None,
                gpu_count=int(row["gpu_count"]) if row["gpu_count"] else None,
                quote=row["quote"],
            )
            for row in csv.DictReader(handle)
        )


def _size_claims(params_b: float, article_method: str) -> list[Claim]:
    sized = [c for c in claims() if c.claim == "size" and c.method == article_method and c.size_b]
    sizes = {c.size_b for c in sized if c.size_b is not None}
    if not sizes:
        return []
    nearest = min(sizes, key=lambda size: abs(math.log(params_b / size)))
    if max(params_b / nearest, nearest / params_b) > _SIZE_CLASS_TOLERANCE:
        return []
    return [c for c in sized if c.size_b == nearest]


def _check(sizing: Sizing, claim: Claim) -> GpuCheck:
    assert claim.gpu_model is not None and claim.gpu_count is not None  # size claims name GPUs
    gpu = find_gpu(claim.gpu_model)
    at_article = sizing.requirement(gpu, claim.gpu_count)
    ours = next((count for count in DEFAULT_GPU_COUNTS if sizing.requirement(gpu, count).fits), None)
    return GpuCheck(
        gpu_model=gpu.gpu_model,
        article_gpu_count=claim.gpu_count,
        fits=at_article.fits,
        per_gpu_memory_gb=at_article.per_gpu_memory_gb,
        usable_memory_gb=at_article.usable_memory_gb,
        zero_stage=at_article.zero_stage,
        our_gpu_count=ours,
        quote=claim.quote,
    )


def _explain(sizing: Sizing, rule_gb: tuple[float, float] | None, size_claim: Claim | None) -> list[str]:
    params_b = sizing.spec.params / 1e9
    replica = sizing.replica
    per_param = {k: v / params_b for k, v in replica.as_dict().items()}  # GB per 1e9 params = B/param
    states_b = per_param["weights"] + per_param["gradients"] + per_param["optimizer"]
    lines = []
    if rule_gb:
        lines.append(
            f"The article's rule (3-4x the parameters) gives {rule_gb[0]:.0f}-{rule_gb[1]:.0f} GB for "
            f"{params_b:.2f}B parameters: 3-4 bytes per parameter in all."
        )
    if size_claim:
        low, high = size_claim.memory_gb_low, size_claim.memory_gb_high
        figure = f"about {low:.0f}" if high == low else f"{low:.0f}-{high:.0f}" if high else f"{low:.0f}+"
        lines.append(
            f"Its figure for the {size_claim.size_b:.0f}B class is {figure} GB "
            f"({size_claim.memory_gb_low / params_b:.1f} bytes per parameter at the low end)."
        )
    lines.append(
        f"Ours is {replica.total:.1f} GB ({replica.total / params_b:.1f} bytes per parameter): model states "
        f"{states_b:.1f} B/param (weights {per_param['weights']:.1f}, "
        f"gradients {per_param['gradients']:.1f}, optimizer {per_param['optimizer']:.1f}), "
        f"activations {replica.activations:.1f} GB, overhead {replica.overhead:.1f} GB."
    )
    if sizing.method in ("full", "full-bf16"):
        sixteen_bit = per_param["weights"] + per_param["gradients"]
        lora = sizing.for_method("lora").replica
        lines.append(
            "3-4 bytes per parameter is what 16-bit weights and gradients alone take "
            f"({sixteen_bit:.0f} B/param). "
            f"AdamW also keeps {per_param['optimizer']:.0f} B/param of optimizer state "
            + (
                "(fp32 master weights, momentum and variance), "
                if sizing.method == "full"
                else "(bf16 moments), "
            )
            + f"{replica.optimizer / replica.total:.0%} of our total, which the rule leaves out. The rule's "
            f"figure is close to what LoRA needs: {lora.total:.1f} GB by ours."
        )
    elif sizing.method in ("lora", "qlora") and size_claim:
        lora = sizing.for_method("lora").replica
        try:
            qlora = sizing.for_method("qlora").replica
        except ValueError:  # the framework has no QLoRA
            return lines
        lines.append(
            f"LoRA keeps the frozen base in 16-bit, {lora.weights:.1f} GB of weights alone, so plain "
            f"LoRA needs {lora.total:.1f} GB by ours; the article's {size_claim.memory_gb_low:.0f} GB "
            "matches 4-bit QLoRA "
            f"({qlora.total:.1f} GB by ours)."
        )
    return lines


def compare(model: str, method: str, setup: TrainingSetup | None = None) -> Comparison:
    """The article's figures for this model and method next to ours (see module doc)."""
    return compare_sizing(prepare(model, method, setup))


def compare_sizing(sizing: Sizing) -> Comparison:
    """`compare` for an already prepared sizing (the CLI prepares once)."""
    model, method = sizing.model, sizing.method
    params_b = sizing.spec.params / 1e9
    article_method = _ARTICLE_METHOD.get(method)
    rule = next((c for c in claims() if c.claim == "rule" and c.method == article_method), None)
    rule_gb = None
    if rule is not None and rule.memory_gb_high is not None:
        rule_gb = (rule.memory_gb_low * params_b, rule.memory_gb_high * params_b)
    sized = _size_claims(params_b, article_method) if article_method else []
    size_claim = sized[0] if sized else None
    checks = tuple(_check(sizing, claim) for claim in sized)
    explanation = _explain(sizing, rule_gb, size_claim)
    if not rule_gb and not size_claim:
        explanation.insert(0, f"The article gives no figure for {method} at {params_b:.0f}B.")
    for check in checks:
        ours = f"{check.our_gpu_count}" if check.our_gpu_count else "more than 64"
        verdict = "fits" if check.fits else "does not fit"
        explanation.append(
            f"Article: {check.article_gpu_count} x {check.gpu_model}. Ours: {verdict} "
            f"({check.per_gpu_memory_gb:.1f} of {check.usable_memory_gb:.1f} GB per GPU, "
            f"ZeRO-{check.zero_stage}); "
            f"we need {ours}."
        )
    return Comparison(
        model=model,
        model_preset=sizing.spec.preset,
        params=sizing.spec.params,
        method=method,
        rule_gb=rule_gb,
        size_claim=size_claim,
        ours_gb=sizing.replica.total,
        gpu_checks=checks,
        explanation=tuple(explanation),
    )
