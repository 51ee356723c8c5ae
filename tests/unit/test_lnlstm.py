"""The authors' LayerNorm LSTM (kzl/universal-computation models/lstm.py), checked against a
transcription of their cell's arithmetic step by step (their gate order, their LayerNorm
places)."""

from __future__ import annotations

import torch

from reasonlab.model import ModelConfig
from reasonlab.model.freeze import apply_groups, resolve_groups
from reasonlab.model.lstm import LNLSTM


def model(dropout=0.0, d=8, layers=3):
    c = ModelConfig.build({"arch": "lnlstm", "d_model": d, "n_layers": layers, "vocab_size": 5,
                           "n_classes": 3, "max_seq_len": 6, "d_input": 4,
                           "dropout": dropout})
    return LNLSTM(c, torch.Generator().manual_seed(0))


def their_ln(x, ln):  # LayerNorm.forward of the authors' file, with the biased variance
    # (theirs: torch.var's unbiased one; ours nn.LayerNorm's biased one, model/lstm.py)
    var = x.var(1, keepdim=True, unbiased=False)
    return ln.weight * (x - x.mean(1, keepdim=True)) / torch.sqrt(var + 1e-6) + ln.bias


def their_cell(cell, x, h, c):  # LayerNormLSTM.forward, cln=False, ln_preact=True
    d = cell.d
    preact = their_ln(cell.i2h(x), cell.ln_i2h) + their_ln(cell.h2h(h), cell.ln_h2h)
    gates = preact[:, : 3 * d].sigmoid()
    g = preact[:, 3 * d:].tanh()
    i, f, o = gates[:, :d], gates[:, d: 2 * d], gates[:, -d:]
    c = their_ln(c * f + i * g, cell.ln_cell)
    h = o * c.tanh()
    return h, c


def test_matches_the_authors_cell_step_by_step():
    m = model().eval()
    feats = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(1))
    x = m.input(torch.ones(2, 6, dtype=torch.long), feats)
    for cell in m.cells:
        h = c = torch.zeros(2, cell.d)
        outs = []
        for t in range(6):
            h, c = their_cell(cell, x[:, t], h, c)
            outs.append(h)
        ref = torch.stack(outs, 1)
        torch.testing.assert_close(cell(x), ref)
        x = cell(x)
    pos = torch.tensor([[5], [5]])
    torch.testing.assert_close(m(torch.ones(2, 6, dtype=torch.long), pos, features=feats),
                               m.readout(x, pos, None))


def test_frozen_random_lstm_trains_the_norms_only_inside_the_recurrence():
    m = model()
    counts = apply_groups(m, resolve_groups("fpt"))
    trained = {n for n, p in m.named_parameters() if p.requires_grad}
    assert all(".ln_" in n or n.startswith(("input.", "readout.")) for n in trained)
    assert "cells.2.ln_cell.weight" in trained and "cells.0.i2h.weight" not in trained
    assert counts["recurrent"] == 3 * 2 * (8 * 32 + 32) and counts["norms"] == 3 * 2 * (
        2 * 32 + 8)


def test_reads_only_the_past_and_dropout_acts_in_training_only():
    m = model(dropout=0.5)
    feats = torch.randn(1, 6, 4)
    changed = feats.clone()
    changed[:, 4:] += 1
    pos = torch.tensor([[3]])
    m.eval()
    ones = torch.ones(1, 6, dtype=torch.long)
    assert torch.equal(m(ones, pos, features=feats), m(ones, pos, features=changed))
    assert torch.equal(m(ones, pos, features=feats), m(ones, pos, features=feats))
    m.train()
    assert not torch.equal(m(ones, pos, features=feats), m(ones, pos, features=feats))


def test_the_lstm_trains_under_bf16_autocast():
    """fpt-lstm at dtype=bf16 (auto's choice on a GPU): the LayerNorm LSTM's step and
    gradients under autocast, here the CPU's, are finite and near its fp32 ones."""
    m = model()
    feats = torch.randn(3, 6, 4, generator=torch.Generator().manual_seed(1))
    pos = torch.full((3, 1), 5)
    tokens = torch.ones(3, 6, dtype=torch.long)
    want = m(tokens, pos, features=feats)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = m(tokens, pos, features=feats)
    got.float().sum().backward()
    assert all(p.grad is not None and p.grad.isfinite().all() for p in m.parameters())
    torch.testing.assert_close(got.float(), want, atol=0.1, rtol=0.1)
