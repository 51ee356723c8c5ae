"""Anchor task: generator vs the independent text solver, split rules, held-out pairs, errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks import build_task
from reasonlab.tasks.anchors import AnchorsTask


def task(**kw) -> AnchorsTask:
    return build_task({"name": "anchors", **kw})


def check_against_solver(t: AnchorsTask, batch) -> None:
    for i in range(len(batch)):
        text = t.render(batch, i)
        assert t.parse(text) == batch.tokens[i].tolist(), text
        assert t.solve(text) == t.labels_text(batch, i), text


def values(t: AnchorsTask, batch) -> np.ndarray:
    """Token ids -> the numbers they denote, via the vocabulary strings."""
    return np.array([[int(w) for w in t.vocab.decode(row)] for row in batch.tokens])


def key_positions(t: AnchorsTask, vals: np.ndarray) -> np.ndarray:
    """Position of the key, found from the numbers alone (the item before the two anchors)."""
    anchor = vals <= t.config.n_anchors
    first = anchor.argmax(1)
    assert (anchor.sum(1) == 2).all() and (anchor[np.arange(len(vals)), first + 1]).all()
    return first - 1


@pytest.mark.parametrize("split", ["train", "test"])
def test_generator_agrees_with_solver(split):
    t = task()
    b = t.sample(np.random.default_rng(0), 3000, split,
                 pair_ids=np.arange(3000) % 16 if split == "test" else None)
    check_against_solver(t, b)


@settings(max_examples=25, deadline=None)
@given(seq_len=st.integers(4, 12), n_anchors=st.integers(1, 5), lo=st.integers(6, 30),
       width=st.integers(12, 80), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_generator_agrees_with_solver_any_config(seq_len, n_anchors, lo, width, seed, data):
    shifts = data.draw(st.lists(st.integers(-9, 9), min_size=n_anchors, max_size=n_anchors))
    pairs = [(a, b) for a in range(1, n_anchors + 1) for b in range(1, n_anchors + 1)]
    chosen = data.draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs) - 1))
    n_custom = data.draw(st.integers(0, len(chosen)))
    custom = [{"pair": p, "shift": data.draw(st.integers(-12, 12))} for p in chosen[:n_custom]]
    try:
        t = task(seq_len=seq_len, item_lo=lo, item_hi=lo + width, shifts=shifts, custom=custom,
                 held_out=chosen[n_custom:])
    except ConfigError:
        return  # e.g. a residue with no item; covered by test_bad_configs
    rng = np.random.default_rng(seed)
    check_against_solver(t, t.sample(rng, 60, "train"))
    check_against_solver(t, t.sample(rng, 60, "test", pair_ids=np.arange(60) % len(pairs)))


def test_paper_preset_targets_by_hand():
    t = task()
    assert t.solve("50 3 4 21 22 23 24 25 26") == {"answer": "44", "pair": "3 4",
                                                   "status": "custom"}
    assert t.solve("21 50 4 3 22 23 24 25 26") == {"answer": "40", "pair": "4 3",
                                                   "status": "held-out"}
    assert t.solve("21 22 23 24 25 26 50 1 2") == {"answer": "56", "pair": "1 2",
                                                   "status": "compositional"}
    hid = t.pair_id(4, 3)
    assert t.heldout_ids == (hid,)
    assert t.inferential_shift[hid] == -10 and t.symmetric_shift(hid) == -6
    assert t.target_lo == 20 - 16 and t.target_hi == 99 + 10 and t.n_classes == 106
    with pytest.raises(ParseError):
        t.solve("21 3 4 22 1 23 24 25 26")  # three anchors
    with pytest.raises(ParseError):
        t.parse("21 3 4 22 10 23 24 25 26")  # 10 is neither anchor nor item


def test_layout_and_meta():
    t = task()
    b = t.sample(np.random.default_rng(1), 2000)
    vals = values(t, b)
    kp = key_positions(t, vals)
    assert (b.label_pos == 8).all() and b.labels.shape == (2000, 1)
    assert (b.meta["key_pos"][:, 0].numpy() == kp).all()
    a1, a2 = vals[np.arange(2000), kp + 1], vals[np.arange(2000), kp + 2]
    assert (b.meta["pair"][:, 0].numpy() == (a1 - 1) * 4 + a2 - 1).all()
    items = np.delete(vals, np.stack([kp + 1, kp + 2], 1) + 9 * np.arange(2000)[:, None])
    assert items.min() >= 20 and items.max() <= 99
    assert set(np.unique(kp)) == set(range(7))  # every key position occurs
    assert int(b.labels.min()) >= 0 and int(b.labels.max()) < t.n_classes


def test_heldout_pairs_never_in_training():
    t = task(held_out=[[4, 3], [2, 2]])
    b = t.sample(np.random.default_rng(2), 20000)
    vals = values(t, b)
    kp = key_positions(t, vals)
    r = np.arange(len(vals))
    seen = set(zip(vals[r, kp + 1].tolist(), vals[r, kp + 2].tolist()))
    assert (4, 3) not in seen and (2, 2) not in seen and len(seen) == 14
    assert b.loss_mask.all()
    train, test = t.splits(np.random.default_rng(3), 5000, 1600)
    pair = test.meta["pair"][:, 0]
    held = torch.tensor([t.pair_id(4, 3), t.pair_id(2, 2)])
    is_held = torch.isin(pair, held)
    assert torch.bincount(pair, minlength=16).tolist() == [100] * 16  # equal shares
    assert (test.loss_mask[:, 0] == ~is_held).all()
    assert not torch.isin(train.meta["pair"], held).any()


def test_position_value_split():
    """Training: no item x at a position p < 7 with x mod 7 == p. Test: the key sits at
    x mod 7 == its position, other items obey the training rule; so train and test are
    disjoint as token sequences."""
    t = task()
    train, test = t.splits(np.random.default_rng(4), 20000, 3200)
    pos = np.arange(9)[None, :]
    tv, sv = values(t, train), values(t, test)
    item = tv >= 20
    assert not (item & (tv % 7 == pos)).any()
    kp = key_positions(t, sv)
    r = np.arange(len(sv))
    assert (sv[r, kp] % 7 == kp).all()
    others = (sv >= 20) & (pos != kp[:, None])
    assert not (others & (sv % 7 == pos)).any()
    # every (key position, residue) combination that training forbids is what test uses
    assert {(p, k % 7) for p, k in zip(kp, sv[r, kp])} == {(p, p) for p in range(7)}
    assert not {tuple(x) for x in train.tokens.tolist()} & {tuple(x) for x in test.tokens.tolist()}


def test_authors_split_options():
    """The authors' predecessor code (anchor_function_pub data.py:181
    `generate_mod_list(args.data_min, args.data_max, args.seq_len-1)`; data.py:33-35 noise
    items `random.randint(data_min, data_max)` for every position, in training and test):
    the split binds the key only, mod seq_len-1 = 8. Training keys never sit at x mod 8 == p,
    test keys always do, noise items fill every residue at every position."""
    t = task(split_modulus="seq_len_minus_1", noise_split=False)
    assert t.m == 8
    train, test = t.splits(np.random.default_rng(6), 20000, 3200)
    for b, want in ((train, False), (test, True)):
        v = values(t, b)
        kp = key_positions(t, v)
        r = np.arange(len(v))
        assert ((v[r, kp] % 8 == kp) == want).all()
        assert set(kp.tolist()) == set(range(7))
        noise = (v >= 20) & (np.arange(9)[None, :] != kp[:, None])
        # unrestricted noise: items at x mod 8 == p appear at every position p < 8
        hit = {p for p in range(8) if (noise[:, p] & (v[:, p] % 8 == p)).any()}
        assert hit == set(range(8))
    check_against_solver(t, test)
    # the default keeps the old draws bitwise (same run ids, same data)
    a = task().splits(np.random.default_rng(7), 50, 16)
    b = task(split_modulus="key_positions", noise_split=True).splits(
        np.random.default_rng(7), 50, 16)
    assert all(torch.equal(x.tokens, y.tokens) for x, y in zip(a, b))


def test_sampling_is_seeded():
    t = task()
    a = t.splits(np.random.default_rng(5), 100, 32)
    b = t.splits(np.random.default_rng(5), 100, 32)
    assert all(torch.equal(x.tokens, y.tokens) and torch.equal(x.labels, y.labels)
               for x, y in zip(a, b))


@pytest.mark.parametrize("bad, field", [
    (dict(item_lo=3), "item_lo"),
    (dict(item_lo=50, item_hi=40), "item_hi"),
    (dict(held_out=[[5, 1]]), "outside"),
    (dict(held_out=[[3, 4]]), "twice"),
    (dict(custom=[{"pair": [1, 1], "shift": 2}], held_out=[[1, 1]]), "twice"),
    (dict(shifts=[]), "shifts"),
    (dict(shifts=[1], held_out=[[1, 1]], custom=[]), "no pair to train"),
    (dict(item_lo=20, item_hi=22), "mod 7"),
    (dict(seq_len=2), "seq_len"),
    (dict(colour="red"), "unknown key"),
])
def test_bad_configs(bad, field):
    with pytest.raises(ConfigError, match=field):
        task(**bad)
