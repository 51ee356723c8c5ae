"""The MLP baseline's two inputs (model/mlp_baseline.py; Boix-Adsera et al. 2024, §3) against naive
references, and what separates them on unseen symbols:

  - one-hot tokens into position-specific first-layer weights (the theorem's setting, the
    authors' TemplateMatchingMLP): an nn.Linear on the concatenated one-hot string; training on
    seen symbols never touches an unseen symbol's columns, and those columns are independent
    across positions, so relabelling an unseen symbol at one position only is a symmetry of
    training (the paper's permutation argument);
  - one embedding table for every position: a repeated symbol puts the same vector in two
    slots of the first layer's input, whatever the symbol.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from reasonlab.model import MODELS, ModelConfig
from reasonlab.studies.kit.base import merge
from reasonlab.studies.symbols.common import mlp_arm, recipe
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.init_stages import build_model
from reasonlab.train.loop import train

VOCAB, SEQ = 13, 5


def mlp(input: str, equality: bool = False, act: str = "relu", seed: int = 0):
    c = ModelConfig.build(dict(vocab_size=VOCAB, n_classes=3, max_seq_len=SEQ, d_model=6, n_heads=2,
                               d_mlp=10, n_layers=2, act=act, init="torch_default",
                               arch={"name": "mlp_baseline", "input": input, "equality": equality}))
    return MODELS["mlp_baseline"](c, generator=torch.Generator().manual_seed(seed)).double()


def label_pos(batch: int) -> torch.Tensor:
    return torch.zeros(batch, 1, dtype=torch.long)


@pytest.mark.parametrize("equality", [False, True])
@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_one_hot_mlp_is_a_linear_on_the_concatenated_one_hot_string(equality, act):
    m = mlp("one_hot", equality, act)
    t = torch.randint(0, VOCAB, (6, SEQ - 1), generator=torch.Generator().manual_seed(1))
    t[0, 1] = t[0, 2]  # a repeat, so X X^T is not the identity
    got = m(t, label_pos(6))
    # the reference: nn.Linear layers on [one_hot(x_1) .. one_hot(x_T), [x_i == x_j]_ij]
    first = torch.nn.Linear(m.input.linear.in_features, 10).double()
    first.load_state_dict(m.input.linear.state_dict())
    lins = [first] + [mod for mod in m.net if isinstance(mod, torch.nn.Linear)]
    padded = F.pad(t, (0, 1))
    x = F.one_hot(padded, VOCAB).flatten(1).double()  # [batch, SEQ * VOCAB]
    if equality:
        x = torch.cat([x, (padded[:, :, None] == padded[:, None, :]).flatten(1).double()], 1)
    h = x
    for j, lin in enumerate(lins):
        h = lin(h)
        if j < len(lins) - 1:
            h = F.relu(h) if act == "relu" else F.gelu(h)
    torch.testing.assert_close(got[:, 0], h)
    # the gather and the matrix product also have the same gradient
    got.square().sum().backward()
    h.square().sum().backward()
    torch.testing.assert_close(m.input.linear.weight.grad, first.weight.grad)


def test_one_hot_init_is_the_authors_torch_default():
    # TemplateMatchingMLP's first layer is nn.Linear(vocab * T, hidden): U(+-1/sqrt(fan_in))
    w = mlp("one_hot").input.linear.weight
    bound = (SEQ * VOCAB) ** -0.5
    assert w.shape == (10, SEQ * VOCAB) and w.abs().max() <= bound
    assert w.abs().max() > 0.9 * bound


def symbols_config(input: str) -> TrainConfig:
    return TrainConfig.build(merge(recipe("smoke", preset="same_different", n_train_symbols=20,
                                          n_val_symbols=4, n_test_symbols=6),
                                   mlp_arm(input), {"n_train": 64, "steps": 20}))


def test_training_on_seen_symbols_leaves_one_hot_columns_of_unseen_symbols_at_init(tmp_path):
    c = symbols_config("one_hot")
    assert c.optim.weight_decay == 0.0  # else decay alone would move every column
    task = build_task(c.task)
    V, T = len(task.vocab), task.seq_len
    unseen = [int(s) for split in ("val", "test") for s in task.symbol_ids[split]]
    seen = [int(s) for s in task.symbol_ids["train"]]
    init = build_model(c)
    before = init.state_dict()["input.linear.weight"].clone().view(-1, T, V)  # [d_mlp, T, V]

    # the gradient of an unseen symbol's columns is exactly zero, at every position
    b = task.sample(np.random.default_rng(0), 32, "train")
    F.cross_entropy(init(b.tokens, b.label_pos)[:, 0], b.labels[:, 0]).backward()
    grad = init.input.linear.weight.grad.view(-1, T, V)
    assert torch.count_nonzero(grad[:, :, unseen]) == 0
    assert torch.count_nonzero(grad[:, :2, seen]) > 0

    train(c, tmp_path / "run", quiet=True)
    after = load_file(tmp_path / "run" / "ckpt" / "state.safetensors")
    W = after["model.input.linear.weight"].view(-1, T, V)
    assert torch.equal(W[:, :, unseen], before[:, :, unseen])  # bitwise: never touched
    assert not torch.equal(W[:, :2, seen], before[:, :2, seen])  # the seen ones trained
    # independent across positions: slots 0 and 1 hold different draws for the same symbol
    u, v = unseen[-2:]
    assert not torch.equal(W[:, 0, u], W[:, 1, u])

    # Relabelling u <-> v at position 1 only is a symmetry of training: the swapped weights
    # give the same outputs on every training example (none holds u or v), so an i.i.d. init
    # makes them as likely an outcome; and they answer "u u" exactly as the trained model
    # answers "u v". The model cannot tell same from different on unseen symbols.
    model = build_model(c)
    model.load_state_dict({k[len("model."):]: x for k, x in after.items()
                           if k.startswith("model.")})
    swapped = build_model(c)
    swapped.load_state_dict(model.state_dict())
    with torch.no_grad():
        Ws = swapped.input.linear.weight.view(-1, T, V)
        Ws[:, 1, [u, v]] = Ws[:, 1, [v, u]]
        train_batch = task.sample(np.random.default_rng(1), 64, "train")
        assert torch.equal(model(train_batch.tokens, train_batch.label_pos),
                           swapped(train_batch.tokens, train_batch.label_pos))
        out_id = int(train_batch.tokens[0, -1])
        same, diff = torch.tensor([[u, u, out_id]]), torch.tensor([[u, v, out_id]])
        assert torch.equal(swapped(same, label_pos(1)), model(diff, label_pos(1)))


def first_layer_input(m, tokens: torch.Tensor) -> torch.Tensor:
    seen: list[torch.Tensor] = []
    handle = m.input.linear.register_forward_pre_hook(lambda _, args: seen.append(args[0]))
    m(tokens, label_pos(len(tokens)))
    handle.remove()
    return seen[0]


def test_shared_table_first_layer_sees_a_repeated_symbol_twice():
    m = mlp("shared_embedding")
    d = m.config.d_model
    for u, v in [(9, 11), (12, 10)]:  # any symbols, whether training ever used them or not
        x = first_layer_input(m, torch.tensor([[u, u, 1]]))[0]
        assert torch.equal(x[:d], x[d:2 * d])  # slot 0 and slot 1: bitwise the same vector
        y = first_layer_input(m, torch.tensor([[u, v, 1]]))[0]
        assert not torch.equal(y[:d], y[d:2 * d])
    # so a first layer with opposite weights on the two slots is blind to "same" pairs and
    # only to them: equality is detectable through the shared table
    with torch.no_grad():
        lin = m.input.linear
        lin.weight.zero_()
        lin.weight[:, :d] = torch.eye(10, d, dtype=lin.weight.dtype)
        lin.weight[:, d:2 * d] = -torch.eye(10, d, dtype=lin.weight.dtype)
        h_same = lin(first_layer_input(m, torch.tensor([[9, 9, 1], [12, 12, 1]])))
        h_diff = lin(first_layer_input(m, torch.tensor([[9, 11, 1], [12, 10, 1]])))
    assert torch.equal(h_same, lin.bias.expand(2, -1))
    assert (h_diff - lin.bias).abs().amax(1).min() > 1e-3


@pytest.mark.parametrize("input", ["one_hot", "shared_embedding"])
def test_mlp_inputs_keep_every_tensor_on_the_models_device(input):
    # built and run on the meta device: a tensor made elsewhere (a CPU index or mask) would
    # fail to combine with it, as on a GPU
    c = ModelConfig.build(dict(vocab_size=VOCAB, n_classes=3, max_seq_len=SEQ, d_model=6,
                               n_heads=2, d_mlp=10, n_layers=2,
                               arch={"name": "mlp_baseline", "input": input, "equality": True}))
    with torch.device("meta"):
        m = MODELS["mlp_baseline"](c)
    out = m(torch.zeros(4, SEQ - 1, dtype=torch.long, device="meta"),
            torch.zeros(4, 1, dtype=torch.long, device="meta"))
    assert out.device.type == "meta" and out.shape == (4, 1, 3)
