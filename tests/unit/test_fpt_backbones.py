"""FPT's two offline backbones (model/fpt.py FPT_BACKBONES): MiniLM inside FPT against
`transformers`' BertModel fed the same input embeddings, and the freeze groups of both real
backbones against what the slides and the authors' code train (Lu et al. 2021; their
universal_computation/fpt.py puts names with 'ln' / 'norm' in the layernorm group and 'wpe' /
'position_embeddings' in the positions group).

Skipped (with the reason) only when a weights package or `transformers` is absent.
"""

from __future__ import annotations

import pytest
import torch

from reasonlab.model.fpt import FPT_BACKBONES, MINILM_BACKBONE, SMOLLM2_BACKBONE, folder_backbone
from reasonlab.model.freeze import GROUPS, PRESETS, apply_groups, resolve_groups
from reasonlab.model.pretrained import MINILM, SMOLLM2
from reasonlab.train.config import TrainConfig

needs_minilm = pytest.mark.skipif(not MINILM.available(),
                                  reason=f"weights absent; install: {MINILM.install_hint}")
needs_smollm2 = pytest.mark.skipif(not SMOLLM2.available(),
                                   reason=f"weights absent; install: {SMOLLM2.install_hint}")


def backbone_of(name: str):
    """An FPT_BACKBONES entry, or a registry checkpoint as a backbone (model/fpt.py)."""
    return FPT_BACKBONES[name] if name in FPT_BACKBONES else folder_backbone(name)


def fpt_model(backbone: str, n_layers: int, task: dict | None = None, init: str = "pretrained",
              train: str = "fpt"):
    from reasonlab.train.loop import build_model

    config = TrainConfig.build({"task": task or {"name": "bit_xor"}, "trainable": train,
                                **backbone_of(backbone).fields(n_layers, init)})
    return build_model(config).eval()


@needs_minilm
def test_minilm_in_fpt_matches_transformers_bert_on_the_same_input_embeddings():
    """FPT's path (input layer -> + the checkpoint's positions (and token type 0) -> embedding
    LayerNorm -> 6 post-LN layers -> read-out) is BertModel(inputs_embeds=...) (exactly what
    the authors feed GPT-2), then our read-out at the label positions."""
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    ref = transformers.BertModel.from_pretrained(
        str(MINILM.path()), add_pooling_layer=False, attn_implementation="eager").eval()
    task = {"name": "bit_memory", "n_bits": 20, "patch": 5}  # continuous, 24 tokens, 5 outputs
    model = fpt_model("minilm", 6, task)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 24, 5, generator=g)  # [batch, seq, d_input]
    tokens = torch.zeros(3, 24, dtype=torch.long)
    label_pos = torch.tensor([[20, 23], [21, 22], [23, 20]])
    label_sub = torch.tensor([[0, 4], [2, 1], [3, 3]])
    with torch.no_grad():
        logits, cache = model.run_with_cache(tokens, label_pos, features=x, label_sub=label_sub,
                                             names_filter=["hook_input", "backbone.hook_final"])
        want = ref(inputs_embeds=cache["hook_input"]).last_hidden_state  # [3, 24, 384]
        got = cache["backbone.hook_final"]
        diff = (got - want).abs().max().item()
        print(f"max abs difference of the last hidden states: {diff:.2e}")
        assert diff < 1e-5
        assert (want - cache["hook_input"]).abs().max() > 1.0  # the layers do change it
        rows = want[torch.arange(3)[:, None], label_pos]  # [3, 2, 384]
        full = model.readout.head(rows).view(3, 2, 5, 2)
        assert torch.allclose(logits, full.gather(2, label_sub[..., None, None].expand(
            3, 2, 1, 2)).squeeze(2), atol=1e-5)


def _groups(model) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {g: set() for g in GROUPS}
    for n, _ in model.named_parameters():
        out[model.param_group(n)].add(n)
    return out


@needs_minilm
def test_minilm_groups_hold_its_layernorms_with_bias_and_its_own_position_table():
    """MiniLM as GPT-2 in the authors' code: every LayerNorm gain AND bias (embedding LayerNorm
    included: 'LayerNorm' matches their 'norm') is "norms"; its own pretrained table is
    "positions", no table is added; counted against BertModel's own parameter names."""
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    ref = transformers.BertModel.from_pretrained(str(MINILM.path()), add_pooling_layer=False)
    model = fpt_model("minilm", 6)
    groups = _groups(model)
    bert_norms = sum(p.numel() for n, p in ref.named_parameters() if "LayerNorm" in n)
    assert sum(model.get_parameter(n).numel() for n in groups["norms"]) == bert_norms
    assert {n.rsplit(".", 1)[1] for n in groups["norms"]} == {"weight", "bias"}
    assert "backbone.ln_embed.bias" in groups["norms"]
    assert groups["positions"] == {"backbone.W_pos"} and not groups["added_positions"]
    T = model.config.max_seq_len
    assert torch.equal(model.backbone.W_pos, (
        MINILM.state_dict()["embeddings.position_embeddings.weight"][:T]
        + MINILM.state_dict()["embeddings.token_type_embeddings.weight"][0]))
    bert_attn = sum(p.numel() for n, p in ref.named_parameters()
                    if ".attention.self." in n or ".attention.output.dense" in n)
    assert sum(model.get_parameter(n).numel() for n in groups["attention"]) == bert_attn
    counts = apply_groups(model, resolve_groups("fpt"))
    assert counts["trained"] == (counts["input"] + counts["output"] + bert_norms
                                 + T * 384)


@needs_smollm2
def test_smollm2_groups_hold_rmsnorm_gains_and_a_new_zero_table():
    """SmolLM2: "norms" is the RMSNorm gains (2 per layer + the final one, no bias); its
    positions are rotary, so the trained table is a NEW one, zero at step 0, in
    "added_positions", and "positions" is empty."""
    model = fpt_model("smollm2", 2)
    groups = _groups(model)
    d, T = 576, model.config.max_seq_len
    assert sorted(groups["norms"]) == ["backbone.layers.0.ln1.weight",
                                       "backbone.layers.0.ln2.weight",
                                       "backbone.layers.1.ln1.weight",
                                       "backbone.layers.1.ln2.weight",
                                       "backbone.ln_final.weight"]
    assert groups["added_positions"] == {"W_pos"} and not groups["positions"]
    assert torch.equal(model.W_pos, torch.zeros(T, d))
    counts = apply_groups(model, resolve_groups("fpt"))
    assert counts["norms"] == 5 * d and counts["added_positions"] == T * d


@needs_minilm
@needs_smollm2
@pytest.mark.parametrize("preset", ["output_only", "output_positions", "output_norms",
                                    "input_output", "fpt", "fpt_mlp", "fpt_attention", "full"])
def test_each_preset_trains_exactly_its_groups_on_both_backbones(preset):
    """The slides' columns on either offline backbone and on a GPT-2 folder (a tiny random
    one): "positions" is the backbone's own table on MiniLM and GPT-2 (its wpe, as the authors
    train it) and the added one on SmolLM2; nothing outside the preset's groups trains."""
    for name in ("smollm2", "minilm", "tiny-gpt2"):
        backbone, model = backbone_of(name), fpt_model(name, 1, train=preset)
        for n, p in model.named_parameters():
            assert p.requires_grad == (model.param_group(n) in PRESETS[preset]), (name, n)
        pos = "backbone.W_pos" if backbone.positions == "positions" else "W_pos"
        assert model.param_group(pos) == backbone.positions
        assert model.get_parameter(pos).requires_grad == (backbone.positions in PRESETS[preset])


def test_backbone_fields_build_pretrained_and_random_runs():
    """A backbone's pretrained arm names its checkpoint; its random arm is the same
    architecture with no checkpoint (the paper's "Random" row)."""
    for b in (MINILM_BACKBONE, SMOLLM2_BACKBONE):
        pre = TrainConfig.build({"task": {"name": "bit_xor"}, **b.fields(2)})
        rand = TrainConfig.build({"task": {"name": "bit_xor"}, **b.fields(2, "random")})
        assert pre.init_from == b.checkpoint and rand.init_from is None
        assert pre.model == rand.model and pre.model.n_layers == 2
        assert pre.model.positions == ("rotary" if b is SMOLLM2_BACKBONE else "learned")


@needs_minilm
def test_statistics_only_keeps_each_tensors_mean_and_std_and_nothing_else():
    """Slides, "Weight initialization": Statistics Only draws each pretrained tensor anew from
    a normal with its mean and std -- checked against the checkpoint's own tensors."""
    pre = fpt_model("minilm", 2, init="pretrained")
    stats = fpt_model("minilm", 2, init="statistics")
    sd = MINILM.state_dict()
    pairs = {"backbone.layers.1.mlp.fc_in.weight": sd["encoder.layer.1.intermediate.dense.weight"],
             "backbone.layers.0.ln2.weight": sd["encoder.layer.0.output.LayerNorm.weight"],
             "backbone.layers.0.ln1.bias": sd["encoder.layer.0.attention.output.LayerNorm.bias"]}
    for name, ref in pairs.items():
        got = stats.get_parameter(name)
        assert torch.equal(pre.get_parameter(name), ref)
        assert not torch.allclose(got, ref, atol=1e-3)
        assert abs(got.mean() - ref.mean()) < 4 * ref.std() / ref.numel() ** 0.5 + 1e-6
        assert abs(got.std() / ref.std() - 1) < 0.1
    # the trained layers FPT adds are not the checkpoint's: the same fresh init either way
    assert torch.equal(stats.readout.head.weight, pre.readout.head.weight)


@pytest.mark.parametrize("arch", ["minilm", "smollm2"])
def test_bit_pretrained_backbone_loads_into_fpt_on_another_task(tmp_path, arch):
    """Slides, "Importance of language pre-training", Bit row: a backbone pretrained (fully
    trained) on bit memory, then frozen under FPT on a task with other inputs (ListOps
    tokens): the downstream backbone is the pretraining run's final backbone, read from its
    checkpoint file; FPT's input layer, read-out and (rotary) added table are the task's own,
    fresh."""
    from safetensors.torch import load_file

    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train.loop import build_model

    small = {"d_model": 24, "n_heads": 2, **({"n_kv_heads": 1} if arch == "smollm2" else {}),
             "d_mlp": 32}
    run = dict(n_train=32, n_test=16, batch_size=4, steps=2, eval_every=2, ckpt_every=2,
               threads=1)
    bits = {"task": {"name": "bit_memory", "n_bits": 20, "patch": 5, "n_patterns": 7},
            "model": {**FPT_BACKBONES[arch].fields(1, "random")["model"], **small},
            "trainable": "full", **run}
    cfg = TrainConfig.build({"task": {"name": "listops", "min_length": 8, "max_length": 16},
                             "model": {"arch": "fpt"}, "init_from": bits, "trainable": "fpt",
                             **run})
    assert cfg.model.d_input is None and cfg.model.d_model == 24  # task's input, run's width
    execute(cfg.init_run, tmp_path, quiet=True)
    saved = {k.removeprefix("model."): v for k, v in load_file(str(
        run_dir_for(cfg.init_run, tmp_path) / "ckpt" / "state.safetensors")).items()}
    model = build_model(cfg, root=tmp_path)
    fresh = build_model(cfg.model_copy(update={"init_from": None}))
    sd = model.state_dict()
    for k, v in sd.items():
        if k.startswith("backbone.") and k != "backbone.W_E":
            want = saved[k][: v.shape[0]] if k == "backbone.W_pos" else saved[k]
            assert torch.equal(v, want), k
        else:  # input, read-out, added positions, the unread token table: not the run's
            assert torch.equal(v, fresh.state_dict()[k]), k
    assert not torch.equal(sd["backbone.layers.0.mlp.fc_in.weight"],
                           fresh.state_dict()["backbone.layers.0.mlp.fc_in.weight"])
