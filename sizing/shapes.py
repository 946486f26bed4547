"""Decoder-only transformer shapes: the weight matrices of each kind of layer, and parameter
counts derived from them, never typed in.

A shape is what the memory and FLOP formulas need: layers, hidden size, heads, KV heads, FFN
width, vocabulary, tied embeddings, MLP kind, biases, and for mixture-of-experts models the
routed experts, shared experts and leading dense layers; DeepSeek's multi-head latent attention
(MLA) by its low-rank widths. Layers come in groups (`LayerGroup`): the routed-expert layers and,
for models such as DeepSeek-V3, a few dense layers before them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Linear:
    """One kind of weight matrix in a decoder layer: `count` matrices of d_in x d_out."""

    name: str  # the Hugging Face module name, as LoRA target lists use it
    d_in: int
    d_out: int
    count: int = 1  # routed experts per layer for MoE expert matrices
    routed: bool = False  # a token multiplies through experts_per_token of the count

    @property
    def params(self) -> int:
        return self.d_in * self.d_out * self.count


@dataclass(frozen=True)
class LayerGroup:
    """`count` identical decoder layers. `ffn` is the MLP width one token runs through per
    routed expert (or of the dense MLP); `routed` how many experts a token uses (1 when dense);
    `shared_ffn` the width of always-on shared experts."""

    count: int
    linears: tuple[Linear, ...]
    other_params: int  # norms and biases
    ffn: int
    routed: int
    shared_ffn: int

    @cached_property
    def linear_params(self) -> int:
        return sum(linear.params for linear in self.linears)

    @property
    def params(self) -> int:
        return self.linear_params + self.other_params

    @cached_property
    def active_linear_params(self) -> int:
        """Weights one token multiplies through in this layer (routed experts at k of E)."""
        return sum(
            linear.d_in * linear.d_out * (self.routed if linear.routed else linear.count)
            for linear in self.linears
        )


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer shape. `preset` names the shape used ("llama-2-7b", "llama-3.2-1b
    scaled to 20 layers", or a config.json path); `fields_read` the config.json keys it came from.

    `head_dim` 0 means hidden / heads. MoE: `experts` routed experts of width `ffn`, each token
    using `experts_per_token`; `shared_ffn` total width of shared experts (Qwen2-MoE, DeepSeek);
    `dense_layers` leading layers with a dense MLP of width `dense_ffn` (DeepSeek's
    first_k_dense_replace). MLA: `kv_lora_rank` > 0, with `q_lora_rank` (0: a plain q_proj),
    `qk_nope_dim`, `qk_rope_dim` and `v_head_dim` per head.
    """

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
    head_dim: int = 0
    qk_norm: bool = False  # Qwen3's per-head RMSNorm on q and k
    shared_ffn: int = 0
    dense_layers: int = 0
    dense_ffn: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    fields_read: tuple[str, ...] = ()
    # Hugging Face's modelling code multiplies every token through every expert (Llama4TextMoe's
    # Llama4TextExperts: hidden_states.repeat over the experts, one bmm), where others run a
    # token through its experts_per_token only.
    experts_run_dense: bool = False
    # The block: "sequential" (a norm before attention, another before the MLP), "parallel"
    # (GPT-NeoX's use_parallel_residual: both norms read the same input, attention and MLP add to
    # it together) or "parallel-shared" (phi, GPT-J: one norm feeds both); LayerNorm rather than
    # RMSNorm; rotary embedding on `rotary_fraction` of each head (phi's partial_rotary_factor,
    # GPT-NeoX's rotary_pct, GPT-J's rotary_dim / head_dim).
    block: str = "sequential"
    layer_norm: bool = False
    rotary_fraction: float = 1.0

    @property
    def norms_per_layer(self) -> int:
        return 1 if self.block == "parallel-shared" else 2

    @property
    def rms_norm(self) -> bool:
        """RMSNorm (Llama and its descendants); GPT-2-style models (biases everywhere) and the
        LayerNorm blocks above use nn.LayerNorm, one native kernel."""
        return self.bias != "all" and not self.layer_norm

    @property
    def per_head_dim(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def q_dim(self) -> int:
        """Width of Q (and K) over all heads."""
        if self.mla:
            return self.heads * (self.qk_nope_dim + self.qk_rope_dim)
        return self.heads * self.per_head_dim

    @property
    def kv_dim(self) -> int:
        """Width of K (and V) as stored for attention: KV heads x head dim (all heads for MLA)."""
        return self.q_dim if self.mla else self.kv_heads * self.per_head_dim

    @property
    def v_dim(self) -> int:
        return self.heads * self.v_head_dim if self.mla else self.kv_dim

    @property
    def attention_out_dim(self) -> int:
        """Input width of the output projection (heads x value head dim)."""
        return self.heads * self.v_head_dim if self.mla else self.q_dim

    @cached_property
    def attention_linears(self) -> tuple[Linear, ...]:
        h = self.hidden
        if not self.mla:
            return (
                Linear("q_proj", h, self.q_dim),
                Linear("k_proj", h, self.kv_dim),
                Linear("v_proj", h, self.kv_dim),
                Linear("o_proj", self.q_dim, h),
            )
        q: tuple[Linear, ...] = (
            (Linear("q_a_proj", h, self.q_lora_rank), Linear("q_b_proj", self.q_lora_rank, self.q_dim))
            if self.q_lora_rank
            else (Linear("q_proj", h, self.q_dim),)
        )
        kv_b_out = self.heads * (self.qk_nope_dim + self.v_head_dim)
        return (
            *q,
            Linear("kv_a_proj_with_mqa", h, self.kv_lora_rank + self.qk_rope_dim),
            Linear("kv_b_proj", self.kv_lora_rank, kv_b_out),
            Linear("o_proj", self.attention_out_dim, h),
        )

    def _mlp(self, width: int, count: int, routed: bool) -> tuple[Linear, ...]:
        h = self.hidden
        if self.mlp == "swiglu":
            return (
                Linear("gate_proj", h, width, count, routed),
                Linear("up_proj", h, width, count, routed),
                Linear("down_proj", width, h, count, routed),
            )
        return (Linear("up_proj", h, width, count, routed), Linear("down_proj", width, h, count, routed))

    @property
    def _norm_params(self) -> int:
        # RMSNorm has a weight; LayerNorm a weight and a bias.
        return self.hidden if self.rms_norm else 2 * self.hidden

    def _other_params(self, ffn_total: int) -> int:
        h, kv = self.hidden, self.kv_dim
        biases = {"none": 0, "qkv": self.q_dim + 2 * kv, "all": self.q_dim + 2 * kv + h + ffn_total + h}
        norms = self.norms_per_layer * self._norm_params + (2 * self.per_head_dim if self.qk_norm else 0)
        if self.mla:
            norms += self.q_lora_rank + self.kv_lora_rank  # q_a_layernorm, kv_a_layernorm
        return norms + biases[self.bias]

    @cached_property
    def layer_groups(self) -> tuple[LayerGroup, ...]:
        """Dense leading layers first (if any), then the main (routed-expert or dense) layers."""
        h = self.hidden
        groups = []
        if self.dense_layers:
            groups.append(
                LayerGroup(
                    count=self.dense_layers,
                    linears=self.attention_linears + self._mlp(self.dense_ffn, 1, False),
                    other_params=self._other_params(self.dense_ffn),
                    ffn=self.dense_ffn,
                    routed=1,
                    shared_ffn=0,
                )
            )
        if self.experts > 1:
            mlp = self._mlp(self.ffn, self.experts, True)
            if self.shared_ffn:
                mlp += tuple(
                    Linear(f"shared_expert.{linear.name}", linear.d_in, linear.d_out)
                    for linear in self._mlp(self.shared_ffn, 1, False)
                )
            mlp += (Linear("router", h, self.experts),)
            ffn_total = self.experts * self.ffn + self.shared_ffn
        else:
            mlp, ffn_total = self._mlp(self.ffn, 1, False), self.ffn
        groups.append(
            LayerGroup(
                count=self.layers - self.dense_layers,
                linears=self.attention_linears + mlp,
                other_params=self._other_params(ffn_total),
                ffn=self.ffn,
                routed=self.experts_per_token if self.experts > 1 else 1,
                shared_ffn=self.shared_ffn,
            )
        )
        return tuple(groups)

    @property
    def main_group(self) -> LayerGroup:
        """The last (and largest) group: the layers freeze-tuning trains first."""
        return self.layer_groups[-1]

    @cached_property
    def decoder_linear_params(self) -> int:
        return sum(group.count * group.linear_params for group in self.layer_groups)

    @cached_property
    def decoder_params(self) -> int:
        return sum(group.count * group.params for group in self.layer_groups)

    @property
    def layer_params(self) -> int:
        """Parameters of one main-group decoder layer."""
        return self.main_group.params

    @property
    def embedding_params(self) -> int:
        return (self.vocab + self.learned_positions) * self.hidden

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @cached_property
    def params(self) -> int:
        """All parameters, embeddings included (what the weights occupy)."""
        return self.embedding_params + self.lm_head_params + self.decoder_params + self._norm_params

    @cached_property
    def active_matmul_params_per_token(self) -> int:
        """Weights one token multiplies through: every layer's active linears plus the output
        projection (done even when tied). Embedding lookups do no matmul."""
        layers = sum(group.count * group.active_linear_params for group in self.layer_groups)
        return layers + self.vocab * self.hidden

    @property
    def active_params(self) -> int:
        """Parameters a token uses (active matmul weights plus its embedding row's table share:
        the number MoE model cards quote as "activated")."""
        return self.active_matmul_params_per_token + self.embedding_params

    @property
    def largest_layer_params(self) -> int:
        return max(group.params for group in self.layer_groups)

    @property
    def largest_unit_params(self) -> int:
        """The biggest block FSDP gathers at once: a decoder layer or the embedding/LM head."""
        return max(self.largest_layer_params, self.embedding_params, self.lm_head_params)

    @property
    def largest_linear_params(self) -> int:
        """The largest single weight matrix (one expert's, for MoE)."""
        return max(linear.d_in * linear.d_out for group in self.layer_groups for linear in group.linears)

    @property
    def largest_module_params(self) -> int:
        """The biggest module DeepSpeed ZeRO-3 gathers at once: one nn.Linear (all experts of an
        expert matrix when they are one fused parameter) or the embedding/LM head."""
        module = max(linear.params for group in self.layer_groups for linear in group.linears)
        return max(module, self.embedding_params, self.lm_head_params)
