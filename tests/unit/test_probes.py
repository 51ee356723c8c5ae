"""Probes recover a planted linear feature, sit at chance on shuffled labels; diagonal score."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.analysis.probes import (diagonal_score, for_loop_map, probe_layers, probe_model,
                                       slot_features)
from reasonlab.model import ModelConfig, Transformer
from reasonlab.tasks.base import Batch

N, P, D, C = 400, 3, 6, 3


def planted(seed: int) -> tuple[torch.Tensor, Batch]:
    """Layer 0: noise independent of the label. Layer 1: label = argmax(x @ M), linear."""
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(D, C, generator=torch.Generator().manual_seed(99))  # same rule for both
    noise = torch.randn(N, P, D, generator=g)
    x1 = torch.randn(N, P, D, generator=g)
    labels = (x1 @ M).argmax(-1)  # [N, P]
    batch = Batch(tokens=torch.zeros(N, 8, dtype=torch.long),
                  label_pos=torch.arange(P).expand(N, P).clone(), labels=labels,
                  loss_mask=torch.ones(N, P, dtype=torch.bool),
                  meta={"depth": torch.arange(P).expand(N, P).clone()})
    return torch.stack([noise, x1]), batch


def test_probe_recovers_planted_feature_and_shuffled_is_chance():
    xtr, tr = planted(0)
    xte, te = planted(1)
    r = probe_layers(xtr, tr, xte, te, C)
    assert r.acc.shape == (2, P)
    assert (r.acc[1] > 0.95).all(), r.acc
    # 400 test slots per depth: chance +- 0.1 is about 4 standard errors
    assert np.abs(r.acc[0] - 1 / C).max() < 0.1, r.acc
    assert np.abs(r.acc_shuffled - 1 / C).max() < 0.1, r.acc_shuffled
    assert abs(r.chance - 1 / C) < 0.1


def test_probe_reads_the_right_positions_of_a_real_model():
    """Label = parity of the token id at the slot: readable from the embeddings (layer 0)."""
    cfg = ModelConfig.build(dict(vocab_size=8, n_classes=2, max_seq_len=10, d_model=16,
                                 n_heads=2, d_mlp=16, n_layers=2, init_std=0.5))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():  # no positions: layer 0 is then one of 8 points, linearly separable
        model.W_pos.zero_()

    def data(seed):
        g = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, 8, (300, 10), generator=g)
        pos = torch.stack([torch.randperm(10, generator=g)[:2] for _ in range(300)])
        return Batch(tokens=tokens, label_pos=pos, labels=tokens.gather(1, pos) % 2,
                     loss_mask=torch.ones(300, 2, dtype=torch.bool),
                     meta={"depth": torch.tensor([0, 1]).expand(300, 2).clone()})

    tr, te = data(0), data(1)
    feats = slot_features(model, tr)
    assert feats.shape == (3, 300, 2, 16)
    # layer 0 at slot (i, k) is the LayerNormed embedding of the token there
    emb = torch.nn.functional.layer_norm(model.W_E[tr.tokens] + model.W_pos[:10], (16,),
                                         model.ln_embed.weight, model.ln_embed.bias, eps=1e-12)
    torch.testing.assert_close(feats[0], emb.gather(1, tr.label_pos[..., None].expand(-1, -1, 16)))
    r = probe_model(model, tr, te, n_classes=2)
    assert (r.acc[0] == 1).all(), r.acc


def test_diagonal_score_by_hand():
    ideal = np.array([[0.5, 0.5], [1.0, 0.5], [1.0, 1.0]])  # 2 layers, 2 depths, chance 0.5
    assert diagonal_score(ideal, 0.5) == 1.0
    np.testing.assert_array_equal(for_loop_map(2, 2), [[0, 0], [1, 0], [1, 1]])
    assert diagonal_score(np.ones((3, 2)), 0.5) == pytest.approx(0.5)  # 3 of 6 cells off by 1
    # normalised [[.5, 0], [0, 0], [1, 1]] vs ideal: |diff| .5 + 1 = 1.5 over 6 cells
    assert diagonal_score(np.array([[0.75, 0.5], [0.5, 0.5], [1, 1]]), 0.5) == pytest.approx(0.75)
    # depths beyond the L layers are left out: chance everywhere scores 0.5, not ~0.9
    assert diagonal_score(np.full((3, 12), 0.5), 0.5) == pytest.approx(0.5)


def test_for_loop_on_supervised_depths_scores_the_same_with_and_without_extrapolation():
    """A 12-layer for-loop on #0-#5 (issue 18): the default score counts extrapolation to #6-#7
    as 'more diagonal'; the supervised-depth score does not, the extrapolated one does."""
    from reasonlab.analysis.probes import split_diagonal

    L, chance = 12, 0.5
    layer, depth = np.arange(L + 1)[:, None], np.arange(12)[None, :]

    def loop(resolved):  # depth d known after d + 1 layers, for d < resolved; chance elsewhere
        return np.where((layer >= depth + 1) & (depth < resolved), 1.0, chance)

    plain, extrap = loop(6), loop(8)
    # the old summary: 21 and 10 wrong cells of 13 x 12
    assert diagonal_score(plain, chance) == pytest.approx(1 - 21 / 156)  # 0.865
    assert diagonal_score(extrap, chance) == pytest.approx(1 - 10 / 156)  # 0.936
    sup_plain, ext_plain = split_diagonal(plain, chance, 6)
    sup_extrap, ext_extrap = split_diagonal(extrap, chance, 6)
    assert sup_plain == sup_extrap == 1.0
    # #6-#11 (the depths a 12-layer loop reaches): 21 of 78 cells wrong, then 10
    assert ext_plain == pytest.approx(1 - 21 / 78)
    assert ext_extrap == pytest.approx(1 - 10 / 78)
    # a 6-layer model (cpu scale) reaches no depth beyond #5: no extrapolated score
    assert np.isnan(split_diagonal(loop(6)[:7], chance, 6)[1])
    assert diagonal_score(plain, chance, []) != diagonal_score(plain, chance, [])  # NaN
