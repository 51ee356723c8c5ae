"""`reasonlab attention`: a trained run's maps and scores, the pretrained model, user errors."""

import json

import numpy as np
import pytest
import torch

from reasonlab.analysis.attention import attention_patterns, head_scores, special_ids
from reasonlab.cli import main
from reasonlab.model.pretrained import MINILM
from reasonlab.runs import load_run_model
from reasonlab.tasks.base import build_task


def test_attention_of_a_run(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
                               "model": {"d_model": 16, "n_layers": 2, "n_heads": 2,
                                         "d_mlp": 32}}))
    assert main(["train", str(cfg), "steps=4", "eval_every=2", "ckpt_every=2", "n_train=64",
                 "n_test=32", "optim.lr=0.01", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    run = next((tmp_path / "o" / "runs").iterdir())
    capsys.readouterr()
    assert main(["attention", str(run), "--n", "8", "--out", str(tmp_path / "a")]) == 0
    assert "association: top heads" in capsys.readouterr().out
    saved = json.loads((tmp_path / "a" / "head_scores.json").read_text())
    # the same numbers from the trained weights, recomputed here on the same sentences
    config, model = load_run_model(run)
    task = build_task(config.task)
    batch = task.sample(np.random.default_rng(0), 8)
    want = head_scores(attention_patterns(model, batch.tokens), batch.tokens,
                       special=special_ids(task.vocab.tokens))
    for k, v in want.items():
        torch.testing.assert_close(torch.tensor(saved[k]), v)
    assert (tmp_path / "a" / "attention.png").stat().st_size > 1000


@pytest.mark.skipif(not MINILM.available(), reason=f"weights absent: {MINILM.install_hint}")
def test_attention_of_pretrained(tmp_path, capsys):
    assert main(["attention", "--pretrained", "all-minilm-l6-v2", "n_clauses=4",
                 "n_train_vars=2", "--n", "4", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "head_scores.png").exists()


def test_attention_needs_a_target(capsys):
    assert main(["attention"]) == 2
    assert "run directory" in capsys.readouterr().err


def test_attention_report_on_padded_mixed_length_sentences(tmp_path):
    from reasonlab.analysis.attention import attention_report
    from reasonlab.model import ModelConfig, Transformer

    task = build_task({"name": "lego", "n_clauses": 5, "n_train_vars": 2, "min_clauses": 2})
    cfg = ModelConfig.build(dict(vocab_size=len(task.vocab), n_classes=2,
                                 max_seq_len=task.seq_len, d_model=16, n_heads=2, d_mlp=16,
                                 n_layers=1, init_std=0.5))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    batch = task.sample(np.random.default_rng(0), 16)
    assert (batch.label_pos < 0).any()  # some sentences are padded
    scores = attention_report(model, task, tmp_path, n=16, span=5)
    # padding keys get no attention, so broadcast mass matches a recomputation without them
    p = attention_patterns(model, batch.tokens, batch.pad_mask)
    want = head_scores(p, batch.tokens, batch.pad_mask, special_ids(task.vocab.tokens))
    torch.testing.assert_close(scores["broadcast"], want["broadcast"])
    for b in range(16):  # real queries never attend to padding keys
        real = batch.pad_mask[b]
        assert p[:, b][:, :, real][..., ~real].abs().sum() == 0


def test_attention_of_an_fpt_run_on_continuous_inputs(tmp_path, capsys):
    """FPT on bit XOR (continuous inputs, model/fpt.py): the maps are drawn, the token scores
    (meaningless: every position holds the same placeholder) are left out, and task_targets --
    the mass of each output token on bit j of either string (Lu et al.'s demo notebook) -- is
    the mass recomputed here by a naive loop over the same patterns."""
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": {"name": "bit_xor"}, "trainable": "fpt",
                               "model": {"arch": "fpt", "d_model": 16, "n_layers": 2,
                                         "n_heads": 2, "d_mlp": 32}}))
    assert main(["train", str(cfg), "steps=4", "eval_every=2", "ckpt_every=2", "n_train=64",
                 "n_test=32", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    run = next((tmp_path / "o" / "runs").iterdir())
    capsys.readouterr()
    assert main(["attention", str(run), "--n", "8", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "task_targets: top heads" in out and "association" not in out
    saved = json.loads((tmp_path / "a" / "head_scores.json").read_text())
    config, model = load_run_model(run)
    batch = build_task(config.task).sample(np.random.default_rng(0), 8)
    p = attention_patterns(model, batch.tokens, features=batch.features)  # [L, B, H, 10, 10]
    want = torch.zeros(2, 2)
    for q in range(5, 10):  # output token 5 + j reads bits j and 5 + j
        want += (p[:, :, :, q, q - 5] + p[:, :, :, q, q]).mean(1) / 5
    torch.testing.assert_close(torch.tensor(saved["task_targets"]), want)
    assert (tmp_path / "a" / "attention.png").stat().st_size > 1000
