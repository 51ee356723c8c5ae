"""Mechanism analysis on constructed representations whose answers are known."""

import numpy as np
import torch

from reasonlab.analysis.anchor_mechanism import (
    additivity, cosine_matrix, pca_2d, readout_attention, shift_order_correlation)
from reasonlab.model import ModelConfig, Transformer
from reasonlab.tasks import build_task

T = build_task({"name": "anchors"})
RNG = np.random.default_rng(0)
U, V, C = RNG.normal(size=(4, 8)), RNG.normal(size=(4, 8)), RNG.normal(size=8)


def reps(held_like_mirror: bool) -> np.ndarray:
    r = np.stack([C + U[a - 1] + V[b - 1] for a, b in T.pairs])  # exactly additive
    r[T.pair_id(3, 4)] += 3 * RNG.normal(size=8)  # the custom pair is not additive
    if held_like_mirror:
        r[T.pair_id(4, 3)] = r[T.pair_id(3, 4)]
    return r


def test_additive_representations():
    a = additivity(T, reps(False))
    assert a["r2_fit"] > 1 - 1e-9 and a["heldout_resid"] < 1e-6


def test_symmetric_representations():
    a = additivity(T, reps(True))
    assert a["r2_fit"] > 1 - 1e-9 and a["cos_to_mirror"] > 1 - 1e-9 and a["heldout_resid"] > 0.5


def test_embedding_geometry_helpers():
    s = np.array(T.config.shifts, dtype=float)
    arc = np.stack([np.cos(0.2 * s), np.sin(0.2 * s)], 1)  # angle 0.2 * shift: cos(0.2 |ds|)
    cos = cosine_matrix(arc)
    assert np.allclose(cos, np.cos(0.2 * np.abs(s[:, None] - s[None, :])))
    assert shift_order_correlation(T, cos) > 1 - 1e-9
    assert shift_order_correlation(T, -cos) < -1 + 1e-9
    line = np.outer(s, np.ones(3)) + np.array([20.0, 0, 0])
    proj, var = pca_2d(line)
    assert var[0] > 0.999 and np.allclose(np.abs(proj[:, 0]), np.sqrt(3) * np.abs(s - s.mean()))


def test_readout_attention_is_a_distribution():
    cfg = ModelConfig.build(vocab_size=len(T.vocab), n_classes=T.n_classes, max_seq_len=9,
                            d_model=16, n_heads=1, d_head=8, d_mlp=32, n_layers=2, causal=True,
                            init="rate", init_gamma=0.3)
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0)).eval()
    _, test = T.splits(np.random.default_rng(1), 10, 64)
    att = readout_attention(model, test)
    assert att.shape == (2, 4) and np.allclose(att.sum(1), 1) and (att >= -1e-9).all()
