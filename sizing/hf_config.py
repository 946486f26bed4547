"""A model's shape from its Hugging Face `config.json`: the file's text, parsed and checked.

Dense and mixture-of-experts decoders: Llama, Mistral, Qwen2/3, Gemma, GPT-2-style, Mixtral,
Qwen2/3-MoE and DeepSeek-V2/V3 (multi-head latent attention, shared experts, leading dense
layers). Key names follow the transformers configuration classes
(`src/transformers/models/<type>/configuration_<type>.py`); where a key is absent, the class's
default is used and the shape's `fields_read` says so. Total parameters size the memory, the
active ones (experts at k of E) the FLOPs.

The file itself is read by the edge with the one reader of a user's files
(`config.model_files`, on `config.user_files`): this package reads no file a user names. Every
value the shape is built from is checked (`intermediate_size: -11008` was planned, with
negative parameters and a total of $0): sizes are whole numbers of at least 1 (a few of at least
0), flags are true or false, the activation is one transformers knows, KV heads divide the
heads, a token's experts are among the experts; a problem names its key, in one line.
"""

from __future__ import annotations

import json
import math
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
# Blocks of parallel attention and MLP with nn.LayerNorm and partial rotary (transformers'
# modeling_phi.py PhiDecoderLayer and modeling_gptj.py GPTJBlock: one input_layernorm / ln_1
# feeds both; modeling_gpt_neox.py GPTNeoXLayer with use_parallel_residual: two norms of the same
# input). Phi and GPT-NeoX carry biases in every linear, GPT-J in its MLP only.
_PARALLEL_SHARED = frozenset({"phi", "gptj"})
_ALL_BIASES = frozenset({"phi", "gpt_neox"})
# Llama4TextMoe (src/transformers/models/llama4/modeling_llama4.py) runs all experts on all tokens
_DENSE_EXPERTS = frozenset({"llama4", "llama4_text"})


# A dimension PyTorch indexes with a 32-bit int at most; no model's is near it.
MAX_DIMENSION = 2**31 - 1
# Activation names transformers' `ACT2CLS` knows (src/transformers/activations.py): what
# `hidden_act`, `hidden_activation` (Gemma) or `activation_function` (GPT-2) may say.
ACTIVATIONS = frozenset(
    {
        "gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
        "gelu_python_tanh", "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear",
        "mish", "quick_gelu", "relu", "relu2", "relu6", "sigmoid", "silu", "sqrtsoftplus",
        "swish", "tanh", "prelu", "xielu",
    }
)  # fmt: skip


class _Reader:
    """Reads keys from a config dict, checking each value and recording what it came from."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.read: list[str] = []

    def first(self, *keys: str, default: Any = None, required: bool = False, optional: bool = False) -> Any:
        """The first key present; else `default`, noted as used unless the key is `optional`
        (a feature the model simply does not have, such as shared experts)."""
        return self._found(keys, default, required, optional)[1]

    def _found(self, keys: tuple[str, ...], default: Any, required: bool, optional: bool) -> tuple[str, Any]:
        for key in keys:
            value = self.config.get(key)
            if value is not None:
                self.read.append(f"{key}={value}")
                return key, value
        if required:
            raise KeyError(keys[0])
        if default is not None and not optional:
            self.read.append(f"{keys[0]} absent: {default}")
        return keys[0], default

    def whole(
        self,
        *keys: str,
        default: int | None = None,
        required: bool = False,
        optional: bool = False,
        low: int = 1,
    ) -> int:
        """A whole number from `low` to MAX_DIMENSION (an absent optional key: `default`)."""
        key, value = self._found(keys, default, required, optional)
        if value is None:
            return 0
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            value = int(value)  # 4096.0, as some exporters write it
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_DIMENSION:
            raise ValueError(f"{key} must be a whole number from {low} to {MAX_DIMENSION:,}, got {value!r}")
        return value

    def flag(self, *keys: str, default: bool, optional: bool = False) -> bool:
        key, value = self._found(keys, default, False, optional)
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false, got {value!r}")
        return value

    def fraction(self, key: str, default: float) -> float:
        key, value = self._found((key,), default, False, False)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"{key} must be a number from 0 to 1, got {value!r}")
        return float(value)

    def name(self, *keys: str, known: frozenset[str] | None = None) -> str:
        key, value = self._found(keys, "", False, True)
        if not isinstance(value, str):
            raise ValueError(f"{key} must be a name, got {value!r}")
        if known is not None and value and value not in known:
            raise ValueError(
                f"{key} {value!r} is not an activation transformers knows (silu, gelu, gelu_new, ...)"
            )
        return value


def looks_like_path(name: str) -> bool:
    """A config.json file name, or a folder that holds one (whatever it is: its reader judges it)."""
    path = Path(name)
    return name.strip().lower().endswith(".json") or (path.is_dir() and (path / "config.json").exists())


def parse(text: str, source: str = "config.json") -> ModelSpec:
    """The shape in config.json `text`; `source` names the file (and becomes the shape's name).
    Raises ValueError with one clear line: not JSON, not one object, a key missing or wrong."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not JSON ({exc})") from exc
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply to be a config.json") from None
    if not isinstance(config, dict):
        raise ValueError(f"{source}: a config.json holds one JSON object")
    try:
        return from_dict(config, source=source)
    except KeyError as exc:
        raise ValueError(f"{source}: no {exc.args[0]!r} (or an equivalent key) in the config") from exc
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{source}: {exc}") from exc


def from_dict(config: dict[str, Any], source: str = "config.json") -> ModelSpec:
    """The shape a config dict describes; raises KeyError naming a missing required key."""
    outer = config
    if isinstance(config.get("text_config"), dict):  # multimodal: the language model's part
        config = {**config["text_config"], "model_type": config["text_config"].get("model_type", "")}
    r = _Reader(config)
    model_type = r.name("model_type")
    r.name("hidden_act", "hidden_activation", "activation_function", known=ACTIVATIONS)
    layers = r.whole("num_hidden_layers", "n_layer", "num_layers", required=True)
    hidden = r.whole("hidden_size", "n_embd", "d_model", required=True)
    heads = r.whole("num_attention_heads", "n_head", required=True)
    kv_heads = r.whole("num_key_value_heads", "multi_query_group_num", default=heads)
    if heads % kv_heads:
        raise ValueError(f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}")
    head_dim = r.whole("head_dim", default=0, optional=True, low=0)
    vocab = r.whole("vocab_size", "padded_vocab_size", required=True)
    dense_ffn = r.whole("intermediate_size", "n_inner", "ffn_hidden_size", default=4 * hidden)
    tied = r.flag("tie_word_embeddings", default=model_type in _TIED_BY_DEFAULT)
    experts = r.whole("num_local_experts", "num_experts", "n_routed_experts", default=1, optional=True)
    shape: dict[str, Any] = {}
    if experts > 1:
        shape = _moe(r, layers, dense_ffn, experts)
    gpt2 = model_type == "gpt2"
    bias = "all" if gpt2 or model_type in _ALL_BIASES else "qkv" if model_type in _QKV_BIAS else "none"
    if bias == "none" and r.flag("attention_bias", default=False, optional=True):
        bias = "qkv"  # q, k, v (and o) biases: o's h is left out, negligible
    dropout = gpt2 and r.fraction("resid_pdrop", 0.1) > 0
    if model_type == "phi":  # resid_dropout after attention and after the MLP
        dropout = r.fraction("resid_pdrop", 0.0) > 0
    block = _block(r, model_type, head_dim or hidden // heads)
    kv_lora_rank = r.whole("kv_lora_rank", default=0, optional=True, low=0)
    mla: dict[str, Any] = {}
    if kv_lora_rank:
        mla = {
            "kv_lora_rank": kv_lora_rank,
            "q_lora_rank": r.whole("q_lora_rank", default=0, low=0),
            "qk_nope_dim": r.whole("qk_nope_head_dim", required=True),
            "qk_rope_dim": r.whole("qk_rope_head_dim", required=True),
            "v_head_dim": r.whole("v_head_dim", required=True),
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
        learned_positions=r.whole("n_positions", default=0, low=0) if gpt2 else 0,
        dropout=dropout,
        head_dim=head_dim,
        qk_norm=model_type in _QK_NORM,
        experts_run_dense=experts > 1 and model_type in _DENSE_EXPERTS,
        **block,
        source=f"config.json of {architecture}",
        **shape,
        **mla,
        fields_read=tuple(r.read),
    )
    if not spec.head_dim and spec.hidden % spec.heads:
        raise ValueError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    return spec


def _block(r: _Reader, model_type: str, head_dim: int) -> dict[str, Any]:
    """The block's structure where it is not Llama's: parallel residual, LayerNorm, partial rotary."""
    if model_type in _PARALLEL_SHARED:
        if model_type == "gptj":  # rotary on the first rotary_dim of each head
            rotary = min(r.whole("rotary_dim", default=head_dim), head_dim) / head_dim
        else:  # PhiConfig's default 0.5
            rotary = r.fraction("partial_rotary_factor", 0.5)
        return {"block": "parallel-shared", "layer_norm": True, "rotary_fraction": rotary}
    if model_type == "gpt_neox":  # GPTNeoXConfig's defaults: parallel residual, rotary_pct 0.25
        parallel = r.flag("use_parallel_residual", default=True)
        rotary = r.fraction("rotary_pct", 0.25)
        return {
            "block": "parallel" if parallel else "sequential",
            "layer_norm": True,
            "rotary_fraction": rotary,
        }
    return {}


def _moe(r: _Reader, layers: int, dense_ffn: int, experts: int) -> dict[str, Any]:
    """Routed experts, shared experts and dense layers of a MoE config."""
    per_token = r.whole("num_experts_per_tok", "num_experts_per_token", "moe_topk", required=True)
    if per_token > experts:
        raise ValueError(f"num_experts_per_tok {per_token} is more than the {experts} experts")
    expert_ffn = r.whole("moe_intermediate_size", default=dense_ffn)
    shared = r.whole("shared_expert_intermediate_size", default=0, optional=True, low=0)
    if not shared:
        shared = r.whole("n_shared_experts", default=0, optional=True, low=0) * expert_ffn
    dense = r.whole("first_k_dense_replace", default=0, optional=True, low=0)
    if dense > layers:
        raise ValueError(f"first_k_dense_replace {dense} is more than the {layers} layers")
    if not dense:
        # Qwen-MoE: every decoder_sparse_step-th layer is sparse, mlp_only_layers are dense.
        step = r.whole("decoder_sparse_step", default=1)
        only_mlp = r.first("mlp_only_layers", default=[], optional=True) or []
        if not isinstance(only_mlp, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in only_mlp
        ):
            raise ValueError(f"mlp_only_layers must list layers from 0 to {layers - 1}, got {only_mlp!r}")
        sparse = [i for i in range(layers) if i not in set(only_mlp) and (i + 1) % step == 0]
        dense = layers - len(sparse)
    return {
        "ffn": expert_ffn,
        "experts": experts,
        "experts_per_token": per_token,
        "shared_ffn": shared,
        "dense_layers": dense,
        "dense_ffn": dense_ffn if dense else 0,
    }
