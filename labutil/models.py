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

import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources

from . import validate

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
    published_params: float = 0.0
    train_tokens: float = 0.0
    source: str = ""

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
        validate.choice("norm", self.norm, NORMS)
        validate.positive("published_params", self.published_params, allow_zero=True)
        validate.positive("train_tokens", self.train_tokens, allow_zero=True)

    # -- shapes ----------------------------------------------------------------------------
    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

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
        h, kv = self.hidden, self.kv_dim
        n = 2 * h * h + 2 * h * kv
        if self.bias:
            n += 2 * h + 2 * kv
        return n

    def mlp_params_per_layer(self) -> int:
        h, f = self.hidden, self.ffn_hidden
        mats = 3 if self.gated_mlp else 2
        n = mats * h * f
        if self.bias:
            n += (2 if self.gated_mlp else 1) * f + h
        return n

    def _norm_params(self) -> int:
        return self.hidden * (2 if self.norm == "layernorm" else 1)

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
        return self.layers * self.params_per_layer() + self.embedding_params() + self._norm_params()

    def non_embedding_params(self) -> int:
        """Parameters in the transformer layers (Kaplan et al. 2020's N)."""
        return self.layers * self.params_per_layer()


_FIELDS = {f.name for f in fields(TransformerSpec)}


@lru_cache(maxsize=None)
def _presets() -> dict[str, TransformerSpec]:
    text = resources.files("labutil").joinpath("data", "models.toml").read_text(encoding="utf-8")
    out = {}
    for name, entry in tomllib.loads(text).items():
        extra = set(entry) - _FIELDS
        if extra:
            raise ValueError(f"models.toml entry {name!r} has unknown fields {sorted(extra)}")
        if not entry.get("source"):
            raise ValueError(f"models.toml entry {name!r} has no source")
        out[name] = TransformerSpec(name=name, **entry)
    return out


def transformer_names() -> list[str]:
    """Names of the model presets, in catalog order."""
    return list(_presets())


def transformer(name: str) -> TransformerSpec:
    """The preset ``name`` (case-insensitive), e.g. ``transformer("llama3-70b")``.

    Unknown names raise KeyError listing the closest preset names.
    """
    table = _presets()
    if isinstance(name, str):
        key = name.strip().lower()
        if key in table:
            return table[key]
    raise validate.unknown_name("transformer model", name, table)
