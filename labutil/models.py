"""Transformer model presets and their parameter counts.

Taught in ch04 (compute sizing: N in 6·N·D) and used by ch07 (memory), ch08 (parallelism) and
ch25 (inference). The presets live in ``labutil/data/models.toml``; every entry cites the paper
table and the published config it comes from, and ``tests/test_models.py`` checks that
``TransformerSpec.params()`` reproduces the published parameter count.

Parameter count of a decoder-only transformer (GQA, optional SwiGLU), per layer::

    attention  = h·h (Q) + 2·h·(kv_heads·h/heads) (K, V) + h·h (O)
    mlp        = 3·h·ffn (gated / SwiGLU) or 2·h·ffn (GELU MLP)
    norms      = 2·h (RMSNorm) or 2·2·h (LayerNorm with bias)
    (+ biases when ``bias``: h + 2·kv_dim + h for attention, ffn·(2 or 1) + h for the MLP)

plus the input embedding V·h, the output head V·h unless ``tied_embeddings``, learned position
embeddings s·h when ``learned_pos_emb``, and the final norm. For the GPT-3 layout this reduces to
Megatron's P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)) (Narayanan et al. 2021, §5.1).

>>> round(transformer("llama2-7b").params() / 1e9, 2)
6.74
"""

from __future__ import annotations

from dataclasses import dataclass

from . import data_files, validate

__all__ = ["NORMS", "TransformerSpec", "transformer_names", "transformer"]

NORMS = ("rmsnorm", "layernorm")


@dataclass(frozen=True)
class TransformerSpec:
    """Shape of a decoder-only transformer LM.

    layers, hidden (d_model), heads (query heads), kv_heads (KV heads; < heads means GQA),
    ffn_hidden (MLP inner size), vocab, seq_len (training context, tokens).
    """

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    name: str = "custom"
    gated_mlp: bool = True
    tied_embeddings: bool = False
    bias: bool = False
    norm: str = "rmsnorm"
    learned_pos_emb: bool = False
    alibi: bool = False           # ALiBi attention biases instead of positions (BLOOM): no rotary embedding
    dropout: bool = False         # trained with dropout (Megatron GPT: hidden and attention dropout 0.1)
    fused_qkv: bool = False       # Q, K and V projections stored as ONE weight (Megatron's query_key_value)
    published_params: float = 0.0
    train_tokens: float = 0.0
    source: str = ""
    # -- mixture of experts (0 = dense model) ------------------------------------------------
    num_experts: int = 0          # routed experts per MoE layer
    experts_per_token: int = 0    # routed experts each token visits (top-k)
    shared_experts: int = 0       # always-on experts per MoE layer (DeepSeekMoE)
    moe_ffn_hidden: int = 0       # inner size of one expert's MLP
    dense_layers: int = 0         # leading layers with a dense MLP of ffn_hidden (DeepSeek-V3: 3)
    # -- attention variants (0 = standard multi-head / GQA with head_dim = hidden // heads) -----
    attn_head_dim: int = 0        # per-head width when it is not hidden // heads
    q_lora_rank: int = 0          # MLA (DeepSeek-V2/V3): low-rank query compression
    kv_lora_rank: int = 0         # MLA: compressed KV width (> 0 switches to MLA)
    rope_head_dim: int = 0        # MLA: decoupled RoPE key/query width per head

    def __post_init__(self):
        for f in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len"):
            value = getattr(self, f)
            if not isinstance(value, int) or isinstance(value, bool):
                # accept integral floats / numpy ints, store a plain int
                object.__setattr__(self, f, validate.integer(f, value))
            elif value < 1:
                raise ValueError(f"{f} must be an integer >= 1; got {value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads must be divisible by kv_heads; got heads={self.heads}, kv_heads={self.kv_heads}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden must be divisible by heads; got hidden={self.hidden}, heads={self.heads}")
        for f in ("num_experts", "experts_per_token", "shared_experts", "moe_ffn_hidden", "dense_layers",
                  "attn_head_dim", "q_lora_rank", "kv_lora_rank", "rope_head_dim"):
            object.__setattr__(self, f, validate.integer(f, getattr(self, f), lo=0))
        if self.num_experts:
            if not 1 <= self.experts_per_token <= self.num_experts:
                raise ValueError(f"experts_per_token must be in [1, num_experts={self.num_experts}]; "
                                 f"got {self.experts_per_token}")
            if self.moe_ffn_hidden < 1:
                raise ValueError("moe_ffn_hidden must be >= 1 for a mixture-of-experts model")
            if self.dense_layers >= self.layers:
                raise ValueError(f"dense_layers must be < layers={self.layers}; got {self.dense_layers}")
        elif self.experts_per_token or self.shared_experts or self.dense_layers:
            raise ValueError("experts_per_token, shared_experts and dense_layers need num_experts >= 1")
        validate.choice("norm", self.norm, NORMS)
        validate.positive("published_params", self.published_params, allow_zero=True)
        validate.positive("train_tokens", self.train_tokens, allow_zero=True)

    # -- shapes ----------------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.attn_head_dim or self.hidden // self.heads

    @property
    def q_dim(self) -> int:
        """Width of the concatenated query heads: heads · head_dim (= hidden unless attn_head_dim is set)."""
        return self.heads * self.head_dim

    @property
    def rotary(self) -> bool:
        """Rotary position embedding applied to Q and K in every layer (Su et al. 2021; Llama, Mixtral,
        DeepSeek): neither learned absolute positions (GPT) nor ALiBi (BLOOM)."""
        return not (self.learned_pos_emb or self.alibi)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0."""
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.num_experts else 0

    @property
    def kv_dim(self) -> int:
        """Width of the K (or V) projection: kv_heads · head_dim."""
        return self.kv_heads * self.head_dim

    @property
    def gqa_group(self) -> int:
        """Query heads sharing one KV head (1 = plain multi-head attention)."""
        return self.heads // self.kv_heads

    # -- parameter counts ------------------------------------------------------------------
    def attention_params_per_layer(self) -> int:
        h, kv, q = self.hidden, self.kv_dim, self.q_dim
        if self.is_mla:
            # DeepSeek-V2 §2.1 / DeepSeek-V3 §2.1.1 (MLA): W_DQ, q-norm, W_UQ (incl. W_QR), W_DKV+W_KR,
            # kv-norm, W_UK and W_UV, output projection W_O.
            r, d = self.rope_head_dim, self.head_dim
            if self.q_lora_rank:
                n = h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.heads * (d + r)
            else:
                n = h * self.heads * (d + r)
            n += h * (self.kv_lora_rank + r) + self.kv_lora_rank + self.kv_lora_rank * self.heads * 2 * d
            return n + self.heads * d * h
        n = 2 * h * q + 2 * h * kv
        if self.bias:
            n += q + h + 2 * kv
        return n

    def mlp_params_per_layer(self) -> int:
        h, f = self.hidden, self.ffn_hidden
        mats = 3 if self.gated_mlp else 2
        n = mats * h * f
        if self.bias:
            n += (2 if self.gated_mlp else 1) * f + h
        return n

    def expert_params(self) -> int:
        """Parameters of ONE expert's MLP (moe_ffn_hidden wide; 0 for a dense model)."""
        if not self.num_experts:
            return 0
        mats = 3 if self.gated_mlp else 2
        return mats * self.hidden * self.moe_ffn_hidden

    def moe_layer_mlp_params(self, active: bool = False) -> int:
        """MLP parameters of one MoE layer: routed (all, or the top-k when ``active``) + shared + router."""
        routed = self.experts_per_token if active else self.num_experts
        return (routed + self.shared_experts) * self.expert_params() + self.num_experts * self.hidden

    def _norm_params(self) -> int:
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    def param_tensors_per_layer(self) -> int:
        """Parameter tensors (weights, biases, norm scales) of one layer, as a framework stores them.

        What a ZeRO-3 implementation that gathers tensor by tensor issues one collective for
        (``labutil.steptime``, ``zero3_fetch="tensor"``). Attention: Q, K, V (one tensor when
        ``fused_qkv``, Megatron's ``query_key_value``) and O; MLP: 3 matrices gated (w1, w2, w3), 2 otherwise;
        one bias per matrix when ``bias``; two norms with a scale (and a bias for LayerNorm). A Megatron
        GPT layer has 12, a Llama layer 9. MoE layers count every expert's matrices plus the router.
        """
        attn = 2 if self.fused_qkv else 4
        mats_mlp = 3 if self.gated_mlp else 2
        if self.is_moe:
            mats_mlp = mats_mlp * (self.num_experts + self.shared_experts) + 1
        mats = attn + mats_mlp
        norms = 2 * (2 if self.norm == "layernorm" else 1)
        return mats * (2 if self.bias else 1) + norms

    def params_per_layer(self) -> int:
        return self.attention_params_per_layer() + self.mlp_params_per_layer() + 2 * self._norm_params()

    def embedding_params(self) -> int:
        """Input embedding, untied output head and learned position embeddings."""
        n = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        if self.learned_pos_emb:
            n += self.seq_len * self.hidden
        return n

    def params(self) -> int:
        """Total parameter count (int)."""
        return self.non_embedding_params() + self.embedding_params() + self._norm_params()

    def non_embedding_params(self, active: bool = False) -> int:
        """Parameters in the transformer layers (Kaplan et al. 2020's N).

        For a mixture-of-experts model, ``active=True`` counts only the top-k routed experts (plus
        shared experts and the router) of each MoE layer: the parameters one token multiplies.
        """
        if not self.num_experts:
            return self.layers * self.params_per_layer()
        moe_layer = (self.attention_params_per_layer() + self.moe_layer_mlp_params(active)
                     + 2 * self._norm_params())
        return self.dense_layers * self.params_per_layer() + self.moe_layers * moe_layer

    def expert_params_total(self) -> int:
        """Routed-expert parameters of the whole model (what expert parallelism splits; 0 if dense)."""
        return self.moe_layers * self.num_experts * self.expert_params()

    def active_params(self) -> int:
        """Parameters used per token: all of a dense model; attention, dense MLPs, top-k routed and
        shared experts, router and embeddings of an MoE (Mixtral 8x7B: 12.9B of 46.7B)."""
        return self.non_embedding_params(active=True) + self.embedding_params() + self._norm_params()


def _presets() -> data_files.Table:
    return data_files.table("models.toml", kind="transformer model", cls=TransformerSpec)


def transformer_names() -> list[str]:
    """Names of the model presets, in catalog order."""
    return list(_presets())


def transformer(name: str) -> TransformerSpec:
    """The preset ``name`` (case-insensitive), e.g. ``transformer("llama3-70b")``.

    Unknown names raise KeyError listing the closest preset names.
    """
    return _presets()[name]
