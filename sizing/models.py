"""Model shapes: presets from `data/models.csv` and bare sizes ("7B") mapped onto them.

A shape is what the memory and FLOP formulas need (layers, hidden size, heads, KV heads,
FFN width, vocabulary, tied embeddings, MLP kind, biases, experts); parameter counts are
derived from it, never typed in.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, replace
from functools import cache, cached_property
from pathlib import Path

MODELS_PATH = Path(__file__).with_name("data") / "models.csv"

# A bare size within this factor of a representative preset uses that preset as is;
# further away, the nearest preset's layer count is scaled to the asked size.
_SAME_SIZE_TOLERANCE = 0.10
_BARE_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bm])\s*$", re.IGNORECASE)
_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)b$")
_SUFFIXES = ("instruct", "chat", "hf", "base")


@dataclass(frozen=True)
class Linear:
    """One kind of weight matrix in a decoder layer: `count` matrices of d_in x d_out."""

    name: str  # the Hugging Face module name, as LoRA target lists use it
    d_in: int
    d_out: int
    count: int = 1  # experts per layer for MoE expert matrices

    @property
    def params(self) -> int:
        return self.d_in * self.d_out * self.count


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer shape. `preset` names the shape used ("llama-2-7b", or
    "llama-3.2-1b scaled to 20 layers" for a bare size no preset is close to)."""

    preset: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int  # intermediate width of one MLP (one expert for MoE)
    vocab: int
    tied_embeddings: bool
    mlp: str  # "swiglu" (gate, up, down) or "gelu" (up, down)
    bias: str  # "none", "qkv" (Qwen2) or "all" (GPT-2)
    learned_positions: int  # rows of a learned position embedding, 0 for RoPE
    dropout: bool  # dropout layers in the block (GPT-2), which store masks
    experts: int = 1
    experts_per_token: int = 1
    source: str = ""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @cached_property
    def layer_linears(self) -> tuple[Linear, ...]:
        h, f, e = self.hidden, self.ffn, self.experts
        attention = (
            Linear("q_proj", h, h),
            Linear("k_proj", h, self.kv_dim),
            Linear("v_proj", h, self.kv_dim),
            Linear("o_proj", h, h),
        )
        mlp: tuple[Linear, ...]
        if self.mlp == "swiglu":
            mlp = (Linear("gate_proj", h, f, e), Linear("up_proj", h, f, e), Linear("down_proj", f, h, e))
        else:
            mlp = (Linear("up_proj", h, f, e), Linear("down_proj", f, h, e))
        router = (Linear("router", h, e),) if e > 1 else ()
        return attention + mlp + router

    @property
    def _norm_params(self) -> int:
        # RMSNorm has a weight; LayerNorm (GPT-2, bias == "all") a weight and a bias.
        return 2 * self.hidden if self.bias == "all" else self.hidden

    @cached_property
    def layer_other_params(self) -> int:
        """Norms and biases of one decoder layer."""
        h, kv, f = self.hidden, self.kv_dim, self.ffn
        biases = {"none": 0, "qkv": h + 2 * kv, "all": h + 2 * kv + h + self.experts * (f + h)}[self.bias]
        return 2 * self._norm_params + biases

    @cached_property
    def layer_linear_params(self) -> int:
        return sum(linear.params for linear in self.layer_linears)

    @property
    def layer_params(self) -> int:
        return self.layer_linear_params + self.layer_other_params

    @property
    def embedding_params(self) -> int:
        return (self.vocab + self.learned_positions) * self.hidden

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @cached_property
    def params(self) -> int:
        """All parameters, embeddings included (what the weights occupy)."""
        return (
            self.embedding_params
            + self.lm_head_params
            + self.layers * self.layer_params
            + self._norm_params  # final norm
        )

    @cached_property
    def active_matmul_params_per_token(self) -> int:
        """Weights one token multiplies through: every layer's active linears plus the
        output projection (done even when tied). Embedding lookups do no matmul."""
        experts_ratio = self.experts_per_token / self.experts
        per_layer = sum(
            linear.params * (experts_ratio if linear.count > 1 else 1.0) for linear in self.layer_linears
        )
        return round(self.layers * per_layer) + self.vocab * self.hidden

    @property
    def largest_unit_params(self) -> int:
        """The biggest block ZeRO-3/FSDP gathers at once: a decoder layer or the embedding."""
        return max(self.layer_params, self.embedding_params, self.lm_head_params)

    @property
    def largest_linear_params(self) -> int:
        return max(linear.d_in * linear.d_out for linear in self.layer_linears)


def _parse_bool(value: str) -> bool:
    return value.strip().lower() == "true"


def model_key(name: str) -> str:
    """Forgiving form of a model name: no organisation prefix, case, spaces, dashes or dots."""
    name = name.strip().lower().rsplit("/", 1)[-1]
    return re.sub(r"[\s\-_.]+", "", name)


@dataclass(frozen=True)
class _Preset:
    spec: ModelSpec
    aliases: tuple[str, ...]
    representative: bool


@cache
def _presets() -> tuple[_Preset, ...]:
    presets = []
    with MODELS_PATH.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            spec = ModelSpec(
                preset=row["preset"],
                layers=int(row["layers"]),
                hidden=int(row["hidden"]),
                heads=int(row["heads"]),
                kv_heads=int(row["kv_heads"]),
                ffn=int(row["ffn"]),
                vocab=int(row["vocab"]),
                tied_embeddings=_parse_bool(row["tied_embeddings"]),
                mlp=row["mlp"],
                bias=row["bias"],
                learned_positions=int(row["learned_positions"]),
                dropout=_parse_bool(row["dropout"]),
                experts=int(row["experts"]),
                experts_per_token=int(row["experts_per_token"]),
                source=row["source"],
            )
            aliases = tuple(a for a in row["aliases"].split(";") if a)
            presets.append(_Preset(spec, aliases, _parse_bool(row["representative"])))
    return tuple(presets)


@cache
def _by_key() -> dict[str, ModelSpec]:
    by_key: dict[str, ModelSpec] = {}
    for preset in _presets():
        for name in (preset.spec.preset, *preset.aliases):
            key = model_key(name)
            if key in by_key and by_key[key] is not preset.spec:
                raise ValueError(f"{MODELS_PATH.name}: name {name!r} used by two presets")
            by_key[key] = preset.spec
    return by_key


def presets() -> list[ModelSpec]:
    """Every preset shape, in file order."""
    return [preset.spec for preset in _presets()]


def _nominal_b(spec: ModelSpec) -> float | None:
    match = _SIZE_IN_NAME.search(spec.preset)
    return float(match.group(1)) if match else None


def _for_size(params: float) -> ModelSpec:
    representatives = [p.spec for p in _presets() if p.representative]
    for spec in representatives:
        if _nominal_b(spec) == params / 1e9:
            return spec
    nearest = min(representatives, key=lambda spec: abs(math.log(spec.params / params)))
    if abs(nearest.params / params - 1) <= _SAME_SIZE_TOLERANCE:
        return nearest
    outside_layers = nearest.params - nearest.layers * nearest.layer_params
    layers = max(1, round((params - outside_layers) / nearest.layer_params))
    return replace(nearest, preset=f"{nearest.preset} scaled to {layers} layers", layers=layers)


def resolve(name: str) -> ModelSpec:
    """The shape for a preset name or alias ("Llama-2-7b-hf", "meta-llama/Llama-3.1-8B") or a
    bare size ("7B", "1.5b", "500M"). Raises ValueError for anything else."""
    bare = _BARE_SIZE.match(name)
    if bare:
        value = float(bare.group(1)) * (1e9 if bare.group(2).lower() == "b" else 1e6)
        if value <= 0:
            raise ValueError(f"model size must be positive, got {name!r}")
        return _for_size(value)
    by_key = _by_key()
    key = model_key(name)
    while key not in by_key:
        stripped = next((key.removesuffix(s) for s in _SUFFIXES if key.endswith(s)), key)
        if stripped == key:
            known = ", ".join(p.spec.preset for p in _presets())
            raise ValueError(f"unknown model {name!r}: give a size such as 7B or one of {known}")
        key = stripped
    return by_key[key]
