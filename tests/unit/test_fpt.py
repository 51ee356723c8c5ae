"""The FPT model, freeze policies and the LSTM baseline (Lu et al. 2021; docs/papers.md §4)."""

from __future__ import annotations

import json

import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, Transformer, run_with_cache
from reasonlab.model.fpt import FPT, ReadOut
from reasonlab.model.freeze import FPT as FPT_GROUPS
from reasonlab.model.freeze import GROUPS, PRESETS, apply_groups, resolve_groups
from reasonlab.model.gguf import SMOLLM2_ARCH
from reasonlab.model.lstm import LNLSTM
from reasonlab.model.pretrained import MINILM

BERT_SMALL = dict(d_model=32, n_layers=2, n_heads=4, d_mlp=64, norm_position="post")
LLAMA_SMALL = {**SMOLLM2_ARCH, "d_model": 48, "n_layers": 2, "n_heads": 6, "n_kv_heads": 2,
               "d_mlp": 64}


def cfg(fields: dict, **kw) -> ModelConfig:
    return ModelConfig.build({**fields, "arch": "fpt", "vocab_size": 7, "n_classes": 3,
                              "max_seq_len": 12, **kw})


@pytest.mark.parametrize("arch", [BERT_SMALL, LLAMA_SMALL], ids=["bert", "llama"])
def test_every_parameter_in_exactly_one_group(arch):
    model = FPT(cfg(arch, d_input=5), torch.Generator().manual_seed(0))
    groups = {n: model.param_group(n) for n, _ in model.named_parameters()}
    assert set(groups.values()) == set(GROUPS) - {"added_positions" if arch is BERT_SMALL
                                                  else "positions", "recurrent"}  # recurrent:
    # an LSTM's group
    assert groups["input.proj.weight"] == "input" and groups["readout.head.bias"] == "output"
    assert groups["backbone.layers.1.attn.qkv.weight"] == "attention"
    assert groups["backbone.layers.0.mlp.fc_out.weight"] == "mlp"
    assert groups["backbone.layers.0.ln2.weight"] == "norms"
    assert groups["backbone.W_E"] == "embeddings"
    if arch is BERT_SMALL:  # the backbone's own table; a rotary one gets a new table
        assert groups["backbone.W_pos"] == "positions" and "added_positions" not in groups.values()
    else:
        assert groups["W_pos"] == "added_positions" and "positions" not in groups.values()
    counts = apply_groups(model, resolve_groups("fpt"))
    assert counts["total"] == sum(p.numel() for p in model.parameters())
    assert counts["trained"] == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert counts["trained"] == sum(counts[g] for g in FPT_GROUPS)


def test_rotary_backbone_gets_zero_positions_learned_backbone_keeps_its_own():
    llama = FPT(cfg(LLAMA_SMALL), torch.Generator().manual_seed(0))
    assert llama.W_pos is not None and torch.equal(llama.W_pos, torch.zeros(12, 48))
    bert = FPT(cfg(BERT_SMALL), torch.Generator().manual_seed(0))
    assert bert.W_pos is None and bert.positions() is bert.backbone.W_pos


@pytest.mark.parametrize("arch", [BERT_SMALL, LLAMA_SMALL], ids=["bert", "llama"])
def test_fpt_runs_the_backbone_unchanged(arch):
    """With the input embedding set to the backbone's W_E (and zero added positions for the
    rotary one), FPT's hidden states are the plain Transformer's on the same tokens."""
    fpt = FPT(cfg(arch), torch.Generator().manual_seed(0)).eval()
    ref = Transformer(cfg(arch, arch="transformer"), torch.Generator().manual_seed(1)).eval()
    missing, _ = ref.load_state_dict(
        {k.removeprefix("backbone."): v for k, v in fpt.state_dict().items()
         if k.startswith("backbone.")}, strict=False)
    assert set(missing) <= {"head.weight", "head.bias"}
    with torch.no_grad():
        fpt.input.W_in.copy_(fpt.backbone.W_E)
    tokens = torch.randint(1, 7, (3, 12))
    pad = torch.ones(3, 12, dtype=torch.bool)
    pad[1, 8:] = False
    _, want = run_with_cache(ref, tokens, pad_mask=pad, names_filter="hook_final")
    _, got = run_with_cache(fpt, tokens, pad_mask=pad, names_filter="backbone.hook_final")
    assert torch.allclose(got["backbone.hook_final"], want["hook_final"], atol=1e-6)


@pytest.mark.parametrize("arch", [BERT_SMALL, LLAMA_SMALL], ids=["bert", "llama"])
def test_last_block_at_the_read_positions_only_gives_the_full_computation(arch):
    """FPT runs its last block at label_pos only (Transformer.run_layers' rows): logits and
    gradients equal those of the full computation, which a hook on that block forces --
    padding, several read positions per row and a padded slot (-1) included."""
    model = FPT(cfg(arch, d_input=3), torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(1)
    tokens, x = torch.zeros(5, 12, dtype=torch.long), torch.randn(5, 12, 3, generator=g)
    pad = torch.ones(5, 12, dtype=torch.bool)
    pad[0, 8:] = pad[2, 5:] = False
    label_pos = torch.tensor([[7, 3], [11, 10], [4, -1], [0, 1], [11, 5]])
    calls = []

    def run() -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        logits = model(tokens, label_pos, pad, features=x)  # [5, 2, 3]
        logits.square().sum().backward()
        return logits.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    fast, fast_grads = run()
    handle = model.backbone.blocks[1].hook_mlp_out.add_hook(lambda t, hook: calls.append(t.shape))
    full, full_grads = run()
    handle.remove()
    assert calls == [torch.Size([5, 12, model.config.d_model])]  # the hook saw every position
    assert fast.shape == (5, 2, 3) and torch.allclose(fast, full, atol=1e-5)
    assert len(fast_grads) == len(full_grads)
    for a, b in zip(fast_grads, full_grads):
        assert torch.allclose(a, b, atol=1e-5)


def test_readout_picks_each_slots_group():
    c = cfg(BERT_SMALL, outputs_per_token=4)
    head = ReadOut(c, torch.Generator().manual_seed(0))
    x = torch.randn(2, 5, 32)
    label_pos = torch.tensor([[4, 4, 3], [0, 2, 2]])
    label_sub = torch.tensor([[0, 3, 1], [2, 2, 0]])
    got = head(x, label_pos, label_sub)  # [2, 3, n_classes]
    for b in range(2):
        for p in range(3):
            full = head.head(x[b, label_pos[b, p]]).view(4, 3)  # [k, n_classes]
            assert torch.allclose(got[b, p], full[label_sub[b, p]], atol=1e-6)


def test_presets_and_bad_groups():
    assert resolve_groups("fpt") == ["input", "output", "positions", "added_positions", "norms"]
    assert resolve_groups(["output", "input", "output"]) == ["input", "output"]
    assert resolve_groups("full") == list(GROUPS)
    assert set(PRESETS) >= {"fpt", "output_only", "input_output", "full", "fpt_attention",
                            "fpt_mlp"}
    with pytest.raises(ConfigError, match="unknown freeze preset"):
        resolve_groups("frozen")
    with pytest.raises(ConfigError, match="drawn from"):
        resolve_groups(["layernorm"])


def _config(**over):
    from reasonlab.train.config import TrainConfig

    base = dict(task={"name": "bit_xor"}, model={**BERT_SMALL, "arch": "fpt"}, trainable="fpt",
                optim={"weight_decay": 0.0, "schedule": "constant"}, n_train=256, n_test=64,
                batch_size=8, steps=6, eval_every=3, ckpt_every=3)
    return TrainConfig.build({**base, **over})


def test_frozen_parameters_get_no_gradient_and_no_optimizer_state():
    from reasonlab.train.loop import build_model, make_autocast, make_data, train_step
    from reasonlab.train.optim import make_optimizer

    config = _config()
    assert config.trainable.groups == ["input", "output", "positions", "added_positions", "norms"]
    model = build_model(config)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = make_optimizer(model, config.optim)
    train_set, _ = make_data(config)
    for step in range(2):
        train_step(config, model, opt, train_set, step, 1e-3,
                   make_autocast(config, torch.device("cpu")))
    state = {id(p) for p in opt.state}
    for n, p in model.named_parameters():
        trained = model.param_group(n) in config.trainable.groups
        assert p.requires_grad == trained and (id(p) in state) == trained, n
        if not trained:
            assert p.grad is None and torch.equal(p, before[n]), n
    assert not torch.equal(model.readout.head.weight, before["readout.head.weight"])
    assert not torch.equal(model.backbone.layers[0].ln1.weight,
                           before["backbone.layers.0.ln1.weight"])


def test_train_groups_need_a_model_with_groups():
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import build_model

    task = {"name": "lego", "n_clauses": 4, "n_train_vars": 2}
    c = TrainConfig.build({"task": task, "model": {"d_model": 32, "n_heads": 2},
                           "trainable": "fpt"})
    with pytest.raises(ConfigError, match="no parameter groups"):
        build_model(c)
    with pytest.raises(ConfigError, match="train and train_only are all set"):  # old names
        TrainConfig.build({"task": task, "model": {}, "train": "fpt", "train_only": ["head."]})
    with pytest.raises(ConfigError, match="train and trainable are all set"):
        TrainConfig.build({"task": task, "model": {}, "train": "fpt", "trainable": "full"})


def test_continuous_task_needs_fpt_or_lstm():
    from reasonlab.train.config import TrainConfig

    with pytest.raises(ConfigError, match="does not read"):
        TrainConfig.build({"task": {"name": "bit_xor"}, "model": {"d_model": 32}})


def test_fpt_run_resumes_bitwise_and_reports_parameter_counts(tmp_path, monkeypatch):
    from reasonlab.train import loop

    config = _config()
    full = loop.train(config, tmp_path / "full", quiet=True)
    assert full["params_trained"] < full["params_total"]

    class Killed(Exception):
        pass

    real, calls = loop.slot_loss, {"n": 0}

    def dying(*args):
        calls["n"] += 1
        if calls["n"] == 5:
            raise Killed
        return real(*args)

    monkeypatch.setattr(loop, "slot_loss", dying)
    with pytest.raises(Killed):
        loop.train(config, tmp_path / "resumed", quiet=True)
    monkeypatch.setattr(loop, "slot_loss", real)
    assert loop.train(config, tmp_path / "resumed", quiet=True) == full
    lines = [json.loads(x) for x in (tmp_path / "resumed" / "metrics.jsonl").read_text()
             .splitlines()]
    assert [x["step"] for x in lines] == [3, 6]


def test_lstm_reads_only_the_past():
    c = ModelConfig.build({"arch": "lnlstm", "d_model": 16, "n_layers": 3, "vocab_size": 7,
                           "n_classes": 3, "max_seq_len": 10})
    model = LNLSTM(c, torch.Generator().manual_seed(0))
    tokens = torch.randint(1, 7, (2, 10))
    changed = tokens.clone()
    changed[:, 6:] = (changed[:, 6:] % 6) + 1
    pos = torch.tensor([[5], [5]])
    assert torch.equal(model(tokens, pos), model(changed, pos))
    assert not torch.equal(model(tokens, pos + 4), model(changed, pos + 4))
    # per layer: i2h and h2h (4d x d weights, 4d biases), the LayerNorms on both (4d gains
    # and biases each) and on the cell (d each)
    assert sum(p.numel() for p in model.cells.parameters()) == 3 * (
        2 * (4 * 16 * 16 + 4 * 16) + 2 * 2 * 4 * 16 + 2 * 16)


@pytest.mark.skipif(not MINILM.available(), reason=f"install: {MINILM.install_hint}")
def test_pretrained_fpt_loads_the_backbone_only():
    from reasonlab.train.loop import build_model

    config = _config(model={"arch": "fpt"}, init_from="all-minilm-l6-v2")
    model = build_model(config)
    sd = MINILM.state_dict()
    assert torch.equal(model.backbone.layers[5].mlp.fc_in.weight,
                       sd["encoder.layer.5.intermediate.dense.weight"])
    assert torch.equal(model.backbone.W_pos[:3], (sd["embeddings.position_embeddings.weight"]
                       + sd["embeddings.token_type_embeddings.weight"][0])[:3])
