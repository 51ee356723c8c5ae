"""Renamed config fields: configs and run folders written under the old names load to the same
config under the new ones and keep their run ids (the ids below were computed by the code before
the renames), and checkpoints of the MLP baseline's first layout load into today's."""

import pytest
import torch
import torch.nn.functional as F

from reasonlab.errors import ConfigError
from reasonlab.model import MODELS, ModelConfig
from reasonlab.train.config import TrainConfig, config_id

SYMBOLS = {"name": "templates", "preset": "same_different", "n_train_symbols": 20,
           "n_val_symbols": 4, "n_test_symbols": 4}
STEPS = {"steps": 2, "eval_every": 2, "ckpt_every": 2}
CORPUS = {"name": "mlm", "corpus": "nesting", "words": 200, "seq_len": 16, "corpus_tokens": 5000}
OLD_RUN = {"task": CORPUS, "model": {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 32,
                                     "norm": "post_no_embed_ln"},
           "n_train": 64, "n_test": 32, **STEPS}
GLOSS = {"name": "gloss_class", "words": 200, "seq_len": 16}

# (old config, the same config under the new names, its id before the renames)
CASES = {
    "mlp baseline, name prefixes": (
        {"task": SYMBOLS, "model": {"arch": {"name": "mlp", "equality": True}, "d_model": 8,
                                    "d_mlp": 8, "n_layers": 2, "norm": "pre",
                                    "normalization": "rmsnorm"},
         "train_only": ["head."], "steps": 3, "eval_every": 3, "ckpt_every": 3},
        {"task": SYMBOLS, "model": {"arch": {"name": "mlp_baseline", "equality": True},
                                    "d_model": 8, "d_mlp": 8, "n_layers": 2,
                                    "norm_position": "pre", "norm_layer": "rmsnorm"},
         "trainable": {"prefixes": ["head."]}, "steps": 3, "eval_every": 3, "ckpt_every": 3},
        "0bd34ed58229"),
    "checkpoint, groups": (
        {"task": {"name": "bit_xor"}, "model": {"arch": "fpt", "n_layers": 1},
         "pretrained": "all-minilm-l6-v2", "train": "fpt"},
        {"task": {"name": "bit_xor"}, "model": {"arch": "fpt", "n_layers": 1},
         "init_from": "all-minilm-l6-v2", "trainable": "fpt"},
        "03522a09699b"),
    "pretraining run": (
        {"task": GLOSS, "model": {}, "pretrain": OLD_RUN, **STEPS},
        {"task": GLOSS, "model": {}, "init_from": {
            **OLD_RUN, "model": {**{k: v for k, v in OLD_RUN["model"].items() if k != "norm"},
                                 "norm_position": "post_no_embed_ln"}}, **STEPS},
        # renewed once (was af448945db94): gloss_class's test split lost the rows equal to
        # training rows (Task.held_out_revised), which no renaming undoes
        "022be1c58e60"),
}


@pytest.mark.parametrize("case", CASES)
def test_old_names_load_to_the_new_config_and_keep_the_run_id(case):
    old, new, old_id = CASES[case]
    a, b = TrainConfig.build(old), TrainConfig.build(new)
    assert a == b and config_id(a) == config_id(b) == old_id
    dump = b.model_dump(mode="json")
    assert TrainConfig.build(dump) == b  # a new config.json reads back
    for key in ("norm", "normalization", "pretrained", "pretrain", "train", "train_only"):
        assert key not in dump and key not in dump["model"]


def test_old_and_new_names_together_are_an_error():
    with pytest.raises(ConfigError, match="norm .*and norm_position are both set"):
        ModelConfig.build(vocab_size=5, n_classes=2, max_seq_len=4, norm="pre",
                          norm_position="pre")
    with pytest.raises(ConfigError, match="pretrained and init_from are all set"):
        TrainConfig.build({"task": GLOSS, "model": {}, "pretrained": "all-minilm-l6-v2",
                           "init_from": "all-minilm-l6-v2"})


def test_init_from_and_trainable_say_what_they_hold():
    run = TrainConfig.build(CASES["pretraining run"][1])
    assert run.init_run is not None and run.init_checkpoint is None
    assert run.init_run.model.norm_position == "post_no_embed_ln"
    ckpt = TrainConfig.build(CASES["checkpoint, groups"][1])
    assert ckpt.init_checkpoint == "all-minilm-l6-v2" and ckpt.init_run is None
    assert ckpt.trainable.groups == ["input", "output", "positions", "added_positions",
                                     "norms"]  # the preset (a model has one position group)
    with pytest.raises(ConfigError, match="unknown freeze preset"):
        TrainConfig.build({**CASES["checkpoint, groups"][1], "trainable": "head."})


def _old_mlp_forward(sd, tokens, n_hidden):
    """The first layout's forward pass, written out: W_E [vocab, d] of every position,
    concatenated into net = [Linear, ReLU] * n_hidden + [Linear]."""
    x = F.embedding(tokens, sd["W_E"]).flatten(1)
    for i in range(n_hidden):
        x = F.relu(F.linear(x, sd[f"net.{2 * i}.weight"], sd[f"net.{2 * i}.bias"]))
    return F.linear(x, sd[f"net.{2 * n_hidden}.weight"], sd[f"net.{2 * n_hidden}.bias"])


def test_a_checkpoint_of_the_first_mlp_layout_loads():
    c = ModelConfig.build(vocab_size=7, n_classes=3, max_seq_len=4, d_model=5, n_heads=1, d_mlp=6,
                          n_layers=3, act="relu", arch="mlp_baseline")
    g = torch.Generator().manual_seed(0)
    T, d, h = 4, 5, 6
    shapes = {"W_E": (7, d), "net.0.weight": (h, T * d), "net.0.bias": (h,),
              "net.2.weight": (h, h), "net.2.bias": (h,), "net.4.weight": (h, h),
              "net.4.bias": (h,), "net.6.weight": (3, h), "net.6.bias": (3,)}
    old = {k: torch.randn(*s, generator=g) for k, s in shapes.items()}
    model = MODELS["mlp_baseline"](c)
    model.load_state_dict(dict(old), strict=True)
    tokens = torch.randint(0, 7, (5, T), generator=g)
    out = model(tokens, label_pos=torch.zeros(5, 1, dtype=torch.long))
    torch.testing.assert_close(out[:, 0], _old_mlp_forward(old, tokens, 3))
    model.load_state_dict(model.state_dict(), strict=True)  # today's layout is left alone


def test_old_positions_group_means_both_position_groups_and_keeps_its_id():
    """Before FPT's added table had a group of its own, "positions" named whichever table the
    model had: an old list loads as both, and hashes as before; the backbone's own table alone
    (new) never shares an old id."""
    old = {"task": {"name": "bit_xor"}, "model": {"arch": "fpt", "n_layers": 1},
           "pretrained": "smollm2-135m", "train": ["output", "positions"]}
    a = TrainConfig.build(old)
    assert a.trainable.groups == ["output", "positions", "added_positions"]
    b = TrainConfig.build({**{k: v for k, v in old.items() if k not in ("pretrained", "train")},
                           "init_from": "smollm2-135m", "trainable": "output_positions"})
    own = TrainConfig.build({**{k: v for k, v in old.items() if k not in ("pretrained", "train")},
                             "init_from": "smollm2-135m", "trainable": ["output", "positions"]})
    assert config_id(a) == config_id(b) != config_id(own)
