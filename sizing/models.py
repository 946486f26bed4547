"""Model names -> shapes: presets from `data/models.csv`, bare sizes ("7B") mapped onto them,
and Hugging Face config.json files read offline (`sizing/hf_config.py`).

The shape type and its parameter counts live in `sizing/shapes.py`; presets are the fast path.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from sizing import hf_config
from sizing.shapes import Linear, ModelSpec

__all__ = ["Linear", "ModelSpec", "model_key", "presets", "resolve"]

MODELS_PATH = Path(__file__).with_name("data") / "models.csv"

# A bare size within this factor of a representative preset uses that preset as is;
# further away, the nearest preset's layer count is scaled to the asked size.
_SAME_SIZE_TOLERANCE = 0.10
# A bare size past 100T parameters (fifty times the largest model announced, ~2T) is a typo
# (`100000000B` was sized as a model of 1e17 parameters).
MAX_PARAMS = 1e14
_BARE_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bm])\s*$", re.IGNORECASE)
_SIZE_IN_NAME = re.compile(r"(\d+(?:\.\d+)?)b$")
_SUFFIXES = ("instruct", "chat", "hf", "base")


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
    outside_layers = nearest.params - nearest.decoder_params
    layers = max(1, round((params - outside_layers) / nearest.layer_params))
    return replace(nearest, preset=f"{nearest.preset} scaled to {layers} layers", layers=layers)


def resolve(name: str | ModelSpec) -> ModelSpec:
    """The shape for a preset name or alias ("Llama-2-7b-hf", "meta-llama/Llama-3.1-8B") or a
    bare size ("7B", "1.5b", "500M"); a shape already read from a config.json is itself. Raises
    ValueError for anything else, a config.json path included: the edge reads that file
    (`config.model_files`, the one reader of a user's files) and passes its shape."""
    if isinstance(name, ModelSpec):
        return name
    if hf_config.looks_like_path(name):
        raise ValueError(
            f"{name!r} is a config.json: gpuplan reads it where it is named (gpuplan size --model, "
            "gpuplan plans --model, a job's model), not in a list of models such as GPUPLAN_MODELS"
        )
    bare = _BARE_SIZE.match(name)
    if bare:
        value = float(bare.group(1)) * (1e9 if bare.group(2).lower() == "b" else 1e6)
        if not 0 < value <= MAX_PARAMS:
            raise ValueError(
                f"model size must be more than 0 and at most {MAX_PARAMS / 1e12:g}T, got {name!r}"
            )
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
