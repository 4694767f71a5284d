"""Transformer presets: parameter counts reproduce the published model sizes."""

import math

import pytest
from hypothesis import given, strategies as st

from labutil import models
from labutil.models import TransformerSpec, transformer, transformer_names

# Published sizes (model cards / papers, see the `source` of each preset in labutil/data/models.toml).
PUBLISHED = {
    "gpt3-175b": (175.0e9, 0.005),    # Brown et al. 2020, Table 2.1 ("175.0B"); exact count 174.6B
    "llama2-7b": (6.74e9, 0.001),     # Llama 2 model card
    "llama2-13b": (13.0e9, 0.002),
    "llama2-70b": (69.0e9, 0.001),
    "llama3-8b": (8.03e9, 0.001),     # Llama 3 model card
    "llama3-70b": (70.6e9, 0.001),
    "llama3-405b": (405.9e9, 0.001),  # Llama 3.1 405B model card
    "megatron-gpt-175b": (174.6e9, 0.001),  # Narayanan et al. 2021, Table 1
    "megatron-gpt-1t": (1008.0e9, 0.001),   # Narayanan et al. 2021, Table 1
}


def test_required_presets_exist():
    names = transformer_names()
    for n in ["gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"]:
        assert n in names


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_params_match_published(name):
    expected, rtol = PUBLISHED[name]
    spec = transformer(name)
    assert spec.params() == pytest.approx(expected, rel=rtol)
    assert spec.published_params == pytest.approx(expected, rel=rtol)
    assert spec.source


def test_published_configs():
    # Llama 3 Herd of Models, Table 3; Llama 2 Table 1 / config.json; GPT-3 Table 2.1.
    l3 = transformer("llama3-405b")
    assert (l3.layers, l3.hidden, l3.heads, l3.kv_heads, l3.ffn_hidden, l3.vocab, l3.seq_len) == \
        (126, 16384, 128, 8, 53248, 128256, 8192)
    assert transformer("llama2-70b").kv_heads == 8 and transformer("llama2-13b").kv_heads == 40
    assert transformer("llama3-8b").gqa_group == 4
    g = transformer("gpt3-175b")
    assert (g.vocab, g.seq_len, g.gated_mlp, g.tied_embeddings) == (50257, 2048, False, True)
    assert {transformer(n).vocab for n in ("llama2-7b", "llama2-13b", "llama2-70b")} == {32000}
    assert {transformer(n).vocab for n in ("llama3-8b", "llama3-70b", "llama3-405b")} == {128256}


def test_llama2_7b_by_hand():
    # 32 layers x (4 h^2 attention + 3 h ffn MLP + 2 h norms) + 2 V h + h
    h, f, v = 4096, 11008, 32000
    assert transformer("llama2-7b").params() == 32 * (4 * h * h + 3 * h * f + 2 * h) + 2 * v * h + h


def test_gpt_layout_matches_megatron_formula():
    # Narayanan et al. 2021 §5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h))
    s = transformer("megatron-gpt-1t")
    l, h, v, seq = s.layers, s.hidden, s.vocab, s.seq_len
    formula = 12 * l * h * h * (1 + 13 / (12 * h) + (v + seq) / (12 * l * h))
    assert s.params() == pytest.approx(formula, rel=1e-4)


def test_case_insensitive_lookup_and_unknown_name():
    assert transformer("LLaMA3-70B") is transformer("llama3-70b")
    with pytest.raises(KeyError, match="llama3-70b"):
        transformer("llama3-7b")
    with pytest.raises(KeyError):
        transformer(70)


@pytest.mark.parametrize("kwargs, word", [
    (dict(heads=32, kv_heads=5), "kv_heads"),
    (dict(heads=30, kv_heads=30), "divisible by heads"),
    (dict(layers=0), "layers"),
    (dict(vocab=-1), "vocab"),
    (dict(ffn_hidden=1.5), "ffn_hidden"),
    (dict(norm="batchnorm"), "norm"),
])
def test_bad_specs_raise(kwargs, word):
    base = dict(layers=2, hidden=256, heads=8, kv_heads=8, ffn_hidden=512, vocab=1000, seq_len=128)
    base.update(kwargs)
    with pytest.raises(ValueError, match=word):
        TransformerSpec(**base)


@given(layers=st.integers(1, 64), heads_pow=st.integers(0, 5), head_dim=st.sampled_from([32, 64, 128]),
       group_pow=st.integers(0, 3), ffn_mult=st.integers(1, 8), vocab=st.integers(100, 200_000))
def test_params_monotone_in_layers_and_gqa_saves(layers, heads_pow, head_dim, group_pow, ffn_mult, vocab):
    heads = 2 ** heads_pow * 8
    group = min(2 ** group_pow, heads)
    hidden = heads * head_dim
    mha = TransformerSpec(layers, hidden, heads, heads, ffn_mult * hidden, vocab, 2048)
    gqa = TransformerSpec(layers, hidden, heads, heads // group, ffn_mult * hidden, vocab, 2048)
    deeper = TransformerSpec(layers + 1, hidden, heads, heads, ffn_mult * hidden, vocab, 2048)
    assert deeper.params() - mha.params() == mha.params_per_layer()
    # GQA removes exactly 2 h (h - kv_dim) weights per layer
    assert mha.params() - gqa.params() == layers * 2 * hidden * (hidden - hidden // group)
    assert mha.non_embedding_params() < mha.params()
    assert isinstance(mha.params(), int) and not math.isnan(mha.params())


def test_presets_are_frozen():
    with pytest.raises(Exception):
        transformer("llama2-7b").layers = 1  # type: ignore[misc]
    assert models.NORMS == ("rmsnorm", "layernorm")


def test_moe_presets_total_and_active():
    # Mixtral of Experts (arXiv:2401.04088): 46.7B total, 12.9B active; DeepSeek-V3: 671B / 37B.
    mix = transformer("mixtral-8x7b")
    assert (mix.num_experts, mix.experts_per_token, mix.moe_ffn_hidden) == (8, 2, 14336)
    assert mix.params() == pytest.approx(46.7e9, rel=0.002)
    assert mix.active_params() == pytest.approx(12.9e9, rel=0.005)
    ds = transformer("deepseek-v3")
    assert ds.is_mla and ds.head_dim == 128 and ds.moe_layers == 58
    assert ds.params() == pytest.approx(671e9, rel=0.002)
    # 37B activated; the report's 36.6B excludes the input embedding (a lookup)
    assert ds.active_params() - ds.vocab * ds.hidden == pytest.approx(36.6e9, rel=0.01)
    assert ds.expert_params_total() > 0.97 * ds.params()
    dense = transformer("llama3-70b")
    assert dense.active_params() == dense.params() and dense.expert_params_total() == 0


def test_moe_spec_validation():
    base = dict(layers=4, hidden=256, heads=4, kv_heads=4, ffn_hidden=512, vocab=1000, seq_len=128)
    with pytest.raises(ValueError, match="experts_per_token"):
        TransformerSpec(**base, num_experts=4, experts_per_token=5, moe_ffn_hidden=64)
    with pytest.raises(ValueError, match="moe_ffn_hidden"):
        TransformerSpec(**base, num_experts=4, experts_per_token=1)
    with pytest.raises(ValueError, match="num_experts"):
        TransformerSpec(**base, experts_per_token=2)
    with pytest.raises(ValueError, match="dense_layers"):
        TransformerSpec(**base, num_experts=4, experts_per_token=1, moe_ffn_hidden=64, dense_layers=4)
