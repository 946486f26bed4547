"""A model's shape from its Hugging Face `config.json`, read offline from a file.

Dense and mixture-of-experts decoders: Llama, Mistral, Qwen2/3, Gemma, GPT-2-style, Mixtral,
Qwen2/3-MoE and DeepSeek-V2/V3 (multi-head latent attention, shared experts, leading dense
layers). Key names follow the transformers configuration classes
(`src/transformers/models/<type>/configuration_<type>.py`); where a key is absent, the class's
default is used and the shape's `fields_read` says so. Total parameters size the memory, the
active ones (experts at k of E) the FLOPs.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from sizing.shapes import ModelSpec

# Model types whose MLP is two matrices (up, down) with GeLU; every other type is gated
# (gate, up, down: SwiGLU, or GeGLU for Gemma, which costs the same).
_UNGATED = frozenset(
    {"gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom", "falcon", "phi", "starcoder2"}
)
# Types whose configuration class ties the embeddings when the key is absent (GPT-2, Gemma);
# LlamaConfig, MistralConfig, Qwen2Config, MixtralConfig, DeepseekV3Config default to untied.
_TIED_BY_DEFAULT = frozenset({"gpt2", "gemma", "gemma2", "gemma3_text"})
_QKV_BIAS = frozenset({"qwen2", "qwen2_moe"})  # Qwen2 projections carry q, k, v biases
_QK_NORM = frozenset({"qwen3", "qwen3_moe"})  # Qwen3's per-head q_norm and k_norm


class _Reader:
    """Reads keys from a config dict, recording what each value came from."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.read: list[str] = []

    def first(self, *keys: str, default: Any = None, required: bool = False, optional: bool = False) -> Any:
        """The first key present; else `default`, noted as used unless the key is `optional`
        (a feature the model simply does not have, such as shared experts)."""
        for key in keys:
            value = self.config.get(key)
            if value is not None:
                self.read.append(f"{key}={value}")
                return value
        if required:
            raise KeyError(keys[0])
        if default is not None and not optional:
            self.read.append(f"{keys[0]} absent: {default}")
        return default


def looks_like_path(name: str) -> bool:
    """A config.json file name, or a folder that holds one."""
    path = Path(name)
    return name.strip().lower().endswith(".json") or (path.is_dir() and (path / "config.json").is_file())


def load(name: str) -> ModelSpec:
    """The shape in the config.json at `name` (a file or a folder holding config.json).
    Raises ValueError with one clear line for a missing file, bad JSON or a missing key."""
    path = Path(name)
    if path.is_dir():
        path = path / "config.json"
    try:
        stat = path.stat()
    except OSError as exc:
        raise ValueError(f"cannot read model config {name!r}: {exc.strerror or exc}") from exc
    return _load(str(path.resolve()), stat.st_mtime_ns, stat.st_size, name)


@cache
def _load(path: str, _mtime_ns: int, _size: int, name: str) -> ModelSpec:
    """Read once per file version (path, modification time, size); `name` is what the user wrote."""
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON config ({exc})") from exc
    if not isinstance(config, dict):
        raise ValueError(f"{path}: a config.json holds one JSON object")
    try:
        return from_dict(config, source=name)
    except KeyError as exc:
        raise ValueError(f"{path}: no {exc.args[0]!r} (or an equivalent key) in the config") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from exc


def from_dict(config: dict[str, Any], source: str = "config.json") -> ModelSpec:
    """The shape a config dict describes; raises KeyError naming a missing required key."""
    outer = config
    if isinstance(config.get("text_config"), dict):  # multimodal: the language model's part
        config = {**config["text_config"], "model_type": config["text_config"].get("model_type", "")}
    r = _Reader(config)
    model_type = str(r.first("model_type", default="", optional=True) or "")
    layers = int(r.first("num_hidden_layers", "n_layer", "num_layers", required=True))
    hidden = int(r.first("hidden_size", "n_embd", "d_model", required=True))
    heads = int(r.first("num_attention_heads", "n_head", required=True))
    kv_heads = int(r.first("num_key_value_heads", "multi_query_group_num", default=heads))
    head_dim = int(r.first("head_dim", default=0, optional=True) or 0)
    vocab = int(r.first("vocab_size", "padded_vocab_size", required=True))
    dense_ffn = int(r.first("intermediate_size", "n_inner", "ffn_hidden_size", default=4 * hidden))
    tied = bool(r.first("tie_word_embeddings", default=model_type in _TIED_BY_DEFAULT))
    experts = int(
        r.first("num_local_experts", "num_experts", "n_routed_experts", default=1, optional=True) or 1
    )
    shape: dict[str, Any] = {}
    if experts > 1:
        shape = _moe(r, layers, dense_ffn, experts)
    gpt2 = model_type == "gpt2"
    bias = "all" if gpt2 else "qkv" if model_type in _QKV_BIAS else "none"
    if not gpt2 and bool(r.first("attention_bias", default=False, optional=True)):
        bias = "qkv"  # q, k, v (and o) biases: o's h is left out, negligible
    dropout = gpt2 and float(r.first("resid_pdrop", default=0.1)) > 0
    kv_lora_rank = int(r.first("kv_lora_rank", default=0, optional=True) or 0)
    mla: dict[str, int] = {}
    if kv_lora_rank:
        mla = {
            "kv_lora_rank": kv_lora_rank,
            "q_lora_rank": int(r.first("q_lora_rank", default=0) or 0),
            "qk_nope_dim": int(r.first("qk_nope_head_dim", required=True)),
            "qk_rope_dim": int(r.first("qk_rope_head_dim", required=True)),
            "v_head_dim": int(r.first("v_head_dim", required=True)),
        }
    architecture = ", ".join(outer.get("architectures") or []) or model_type or "unknown architecture"
    spec = ModelSpec(
        preset=source,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        ffn=int(shape.pop("ffn", dense_ffn)),
        vocab=vocab,
        tied_embeddings=tied,
        mlp="gelu" if model_type in _UNGATED else "swiglu",
        bias=bias,
        learned_positions=int(r.first("n_positions", default=0)) if gpt2 else 0,
        dropout=dropout,
        head_dim=head_dim,
        qk_norm=model_type in _QK_NORM,
        source=f"config.json of {architecture}",
        **shape,
        **mla,
        fields_read=tuple(r.read),
    )
    if spec.layers < 1 or spec.hidden < 1 or spec.heads < 1 or spec.vocab < 1:
        raise ValueError("layers, hidden size, heads and vocabulary must be positive")
    if not spec.head_dim and spec.hidden % spec.heads:
        raise ValueError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    return spec


def _moe(r: _Reader, layers: int, dense_ffn: int, experts: int) -> dict[str, Any]:
    """Routed experts, shared experts and dense layers of a MoE config."""
    per_token = int(r.first("num_experts_per_tok", "num_experts_per_token", "moe_topk", required=True))
    expert_ffn = int(r.first("moe_intermediate_size", default=dense_ffn))
    shared = int(r.first("shared_expert_intermediate_size", default=0, optional=True) or 0)
    if not shared:
        shared = int(r.first("n_shared_experts", default=0, optional=True) or 0) * expert_ffn
    dense = int(r.first("first_k_dense_replace", default=0, optional=True) or 0)
    if not dense:
        # Qwen-MoE: every decoder_sparse_step-th layer is sparse, mlp_only_layers are dense.
        step = int(r.first("decoder_sparse_step", default=1) or 1)
        only_mlp = set(r.first("mlp_only_layers", default=[], optional=True) or [])
        sparse = [i for i in range(layers) if i not in only_mlp and (i + 1) % step == 0]
        dense = layers - len(sparse)
    return {
        "ffn": expert_ffn,
        "experts": experts,
        "experts_per_token": per_token,
        "shared_ffn": shared,
        "dense_layers": dense,
        "dense_ffn": dense_ffn if dense else 0,
    }
