"""Composite anchor functions (Zhang et al. 2024, "Initialization is Critical to Whether
Transformers Fit Composite Functions by Reasoning or Memorizing", arXiv 2405.05409, §2-3).

A sequence of `seq_len` items holds a key x at position p, followed immediately by two anchors
a1 a2 at positions p+1 and p+2; every other position holds a noise item. Keys and noise items
are integers in [item_lo, item_hi] (20..99); anchors are the integers 1..n_anchors. Anchor a
stands for the primitive g(x; a) = x + shifts[a-1] (the paper: +5, +1, -2, -8). The target is
the composition g(g(x; a1); a2) = x + shifts[a1-1] + shifts[a2-1], except for

  - custom pairs, trained with a given non-compositional shift (the paper: (3,4) -> x-6), and
  - held-out pairs, never trained (the paper: (4,3)). On a held-out pair the *inferential*
    answer composes the primitives ((4,3): x-10) and the *symmetric* answer copies what the
    mirrored pair (a2, a1) is trained to ((3,4): x-6).

Train/test split by value and position (docs/papers.md §3 Anchor functions; the paper's text in
papers/ is only the abstract, so this is our reading, stated here): positions are 0-based and
the key may sit at p in 0..seq_len-3, which is exactly m = seq_len-2 positions; that is why the rule is mod m:
every key value x has exactly one "test position" x mod m. In TRAINING no item (key or noise)
sits at a position p with x mod m == p (positions >= m never match). At TEST the key sits at
its test position (x mod m == p) and the noise items follow the training rule, so the only
thing a test sequence has never shown is that key value at that position. Train and test are
therefore disjoint by construction. Every test sequence (seen or held-out pair) uses the test
placement.

Two options follow the predecessor code of the same authors (`anchor_function_pub`, data.py;
docs/papers.md): `split_modulus="seq_len_minus_1"` splits by x mod (seq_len-1) instead of
mod (seq_len-2) (then a value with x mod (seq_len-1) == seq_len-2 has no test position and is a
training key everywhere), and `noise_split=False` draws noise items from the whole item range
in training and test alike, the rule then binding the key only. Either way the test key sits at
a (value, position) no training key ever takes, so the held-out thing is still the key's
placement.

Output: one classification slot at the last position (label_pos = seq_len-1, which a causal
decoder reads out; §3). Classes are the target values target_lo..target_hi, where the range
covers every target a trained pair or a held-out pair's inferential/symmetric answer can take;
class index = value - target_lo. No modulo is applied (targets may leave the item range).

Batch layout: label_pos/labels/loss_mask [B, 1]; labels of a held-out pair are its
inferential target, and its loss_mask is False (so `acc_supervised` is the seen-pair accuracy
and `acc_by_pair[held-out id]` the inferential fraction). meta: "pair" [B, 1] pair id
(a1-1)*n_anchors + (a2-1), "key_pos" [B, 1] the key's position.

Readable text: the items and anchors as decimal numbers separated by spaces, e.g.
`37 81 20 3 4 55 62 90 21`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.config import StrictModel
from reasonlab.errors import ParseError
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab

Pair = tuple[int, int]


class CustomTarget(StrictModel):
    """A pair trained with a non-compositional target x + shift."""

    pair: tuple[int, int]
    """The anchors (a1, a2), 1-based."""
    shift: int
    """Its target is key + shift (the paper: (3,4) -> -6)."""


class AnchorsConfig(TaskConfig):
    """Composite anchor task. Defaults are the paper's setting (§3)."""

    name: Literal["anchors"] = "anchors"
    seq_len: int = Field(9, ge=3)
    """Sequence length n; the key sits at 0..n-3 and the split works mod n-2."""
    item_lo: int = Field(20, ge=1)
    """Smallest key/noise item (must exceed the number of anchors)."""
    item_hi: int = Field(99, ge=1)
    """Largest key/noise item."""
    shifts: list[int] = [5, 1, -2, -8]
    """Primitive of anchor a (a = 1..len(shifts)): g(x; a) = x + shifts[a-1]."""
    custom: list[CustomTarget] = [CustomTarget(pair=(3, 4), shift=-6)]
    """Pairs trained with a given non-compositional target."""
    held_out: list[tuple[int, int]] = [(4, 3)]
    """Pairs never trained; tested for inferential vs symmetric answers."""
    split_modulus: Literal["key_positions", "seq_len_minus_1"] = "key_positions"
    """Modulus m of the value/position split: "key_positions" m = seq_len-2, the number of
    key positions (every value has one test position); "seq_len_minus_1" m = seq_len-1, as
    the authors' predecessor code (data.py: `generate_mod_list(..., args.seq_len-1)`)."""
    noise_split: bool = True
    """Noise items obey the training rule too (x mod m != p). False: noise items are drawn
    from the whole range, in training and test, as in the authors' code (only the key is
    split)."""

    @model_validator(mode="after")
    def _check(self) -> AnchorsConfig:
        k = len(self.shifts)
        if k < 1:
            raise ValueError("shifts: give at least one primitive shift")
        if self.item_lo <= k:
            raise ValueError(f"item_lo={self.item_lo} must exceed the number of anchors ({k}) "
                             "so that items and anchors are distinct tokens")
        if self.item_hi < self.item_lo:
            raise ValueError(f"item_hi={self.item_hi} < item_lo={self.item_lo}")
        pairs = [tuple(c.pair) for c in self.custom] + [tuple(p) for p in self.held_out]
        for a, b in pairs:
            if not (1 <= a <= k and 1 <= b <= k):
                raise ValueError(f"pair ({a},{b}) names an anchor outside 1..{k}")
        if len(set(pairs)) != len(pairs):
            raise ValueError("a pair is listed twice in custom/held_out; list each pair once")
        if len(self.held_out) >= k * k:
            raise ValueError("held_out leaves no pair to train; hold out fewer pairs")
        m = self.modulus
        values = np.arange(self.item_lo, self.item_hi + 1)
        for p in range(self.seq_len - 2):  # every key position needs test and training keys
            if not (values % m == p).any():
                raise ValueError(f"no item in {self.item_lo}..{self.item_hi} has value mod {m} "
                                 f"== {p}, so position {p} has no test key; widen the item range")
            if not (values % m != p).any():
                raise ValueError(f"every item is = {p} mod {m}: position {p} has no training "
                                 "key; widen the item range")
        return self

    @property
    def n_anchors(self) -> int:
        return len(self.shifts)

    @property
    def modulus(self) -> int:
        """m of the split rule x mod m == p (see `split_modulus`)."""
        return self.seq_len - (2 if self.split_modulus == "key_positions" else 1)


@TASKS.register("anchors")
class AnchorsTask(Task):
    """Composite anchor sequences: vectorised generator, text <-> tokens, reference solver."""

    Config = AnchorsConfig

    def __init__(self, config: AnchorsConfig):
        self.config = config
        c = config
        k, m = c.n_anchors, c.modulus
        self.m = m  # split modulus
        self.n_key_pos = c.seq_len - 2  # the key sits at 0..seq_len-3
        self.anchors = tuple(range(1, k + 1))
        self.items = tuple(range(c.item_lo, c.item_hi + 1))
        self.vocab = Vocab((Vocab.PAD, *map(str, self.anchors), *map(str, self.items)))
        # pair id -> (a1, a2), shift of the trained target (None when held out)
        self.pairs: tuple[Pair, ...] = tuple((a, b) for a in self.anchors for b in self.anchors)
        custom = {tuple(t.pair): t.shift for t in c.custom}
        held = {tuple(p) for p in c.held_out}
        sh = c.shifts
        self.inferential_shift = np.array([sh[a - 1] + sh[b - 1] for a, b in self.pairs])
        self.trained_shift = np.array([custom.get(p, s) for p, s in
                                       zip(self.pairs, self.inferential_shift.tolist())])
        self.heldout_mask = np.array([p in held for p in self.pairs])
        self.heldout_ids = tuple(int(i) for i in np.flatnonzero(self.heldout_mask))
        self.trained_ids = np.flatnonzero(~self.heldout_mask)
        shifts = list(self.inferential_shift) + list(self.trained_shift)
        self.target_lo = c.item_lo + min(shifts)
        self.target_hi = c.item_hi + max(shifts)

        # Per-position tables of allowed values for vectorised draws: row q lists the items
        # allowed at position q, padded; count[q] says how many are valid (docs/papers.md §3
        # Anchor functions, the split).
        items = np.array(self.items)
        pos = np.arange(c.seq_len)
        allowed_train = (items[None, :] % m) != pos[:, None]  # [seq_len, n_items]
        self._train_table, self._train_count = _tables(items, allowed_train)
        noise = allowed_train if c.noise_split else np.ones_like(allowed_train)
        self._noise_table, self._noise_count = _tables(items, noise)
        allowed_test = (items[None, :] % m) == pos[:self.n_key_pos, None]  # [key pos, items]
        self._test_table, self._test_count = _tables(items, allowed_test)

    # ------------------------------------------------------------------ shapes and targets

    @property
    def n_classes(self) -> int:
        return self.target_hi - self.target_lo + 1

    def class_names(self) -> tuple[str, ...]:
        """Class c is the target value c + target_lo (the answer `labels_text` writes)."""
        return tuple(str(c + self.target_lo) for c in range(self.n_classes))

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    def pair_id(self, a1: int, a2: int) -> int:
        return (a1 - 1) * self.config.n_anchors + (a2 - 1)

    def symmetric_shift(self, pair_id: int) -> int | None:
        """What the mirrored pair (a2, a1) is trained to map to; None if it is held out too."""
        a, b = self.pairs[pair_id]
        mirror = self.pair_id(b, a)
        return None if self.heldout_mask[mirror] else int(self.trained_shift[mirror])

    # ------------------------------------------------------------------ generation

    def sample(self, rng: np.random.Generator, n: int, split: Literal["train", "test"] = "train",
               pair_ids: np.ndarray | None = None) -> Batch:
        """n sequences, vectorised over the batch (no Python loop per example).

        split "train": trained pairs, training placement. split "test": test placement, pairs
        `pair_ids` [n] if given, else uniform over the trained pairs.
        """
        c = self.config
        T = c.seq_len
        if pair_ids is None:
            pair_ids = self.trained_ids[rng.integers(0, len(self.trained_ids), size=n)]
        pair_ids = np.asarray(pair_ids, dtype=np.int64)
        key_pos = rng.integers(0, self.n_key_pos, size=n)  # [n] in 0..seq_len-3
        # noise everywhere first (training rule at every position unless noise_split=False),
        # then key and anchors
        u = rng.random((n, T))  # [n, T]
        idx = np.floor(u * self._noise_count[None, :]).astype(np.int64)
        tokens = self._noise_table[np.arange(T)[None, :], idx]  # [n, T] item values
        table, count = ((self._train_table, self._train_count) if split == "train"
                        else (self._test_table, self._test_count))
        uk = rng.random(n)
        key = table[key_pos, np.floor(uk * count[key_pos]).astype(np.int64)]  # [n]
        rows = np.arange(n)
        tokens[rows, key_pos] = key
        a1 = pair_ids // c.n_anchors + 1
        a2 = pair_ids % c.n_anchors + 1
        tokens[rows, key_pos + 1] = a1
        tokens[rows, key_pos + 2] = a2
        held = self.heldout_mask[pair_ids]
        shift = np.where(held, self.inferential_shift[pair_ids], self.trained_shift[pair_ids])
        labels = key + shift - self.target_lo  # [n] class index
        # value -> token id: anchors 1..k are ids 1..k; item v is id k + 1 + (v - item_lo)
        ids = np.where(tokens <= c.n_anchors, tokens, tokens - c.item_lo + c.n_anchors + 1)
        return Batch(
            tokens=torch.from_numpy(ids.astype(np.int64)),
            label_pos=torch.full((n, 1), T - 1, dtype=torch.long),
            labels=torch.from_numpy(labels.astype(np.int64)[:, None]),
            loss_mask=torch.from_numpy(~held[:, None]),
            pad_mask=None,
            meta={"pair": torch.from_numpy(pair_ids[:, None].copy()),
                  "key_pos": torch.from_numpy(key_pos[:, None].astype(np.int64))},
        )

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """Training set (trained pairs, training placement) and a test set of n_test sequences
        with test placement, the pairs (seen and held-out alike) in equal shares (round robin,
        so each of the n_anchors^2 pairs gets n_test / n_anchors^2 examples up to one).

        Disjoint by construction: a test key sits where no training item ever sits.
        """
        train = self.sample(rng, n_train, "train")
        pair_ids = np.arange(n_test) % len(self.pairs)
        return train, self.sample(rng, n_test, "test", pair_ids=pair_ids)

    # ------------------------------------------------------------------ text

    def render(self, batch: Batch, i: int) -> str:
        """Sequence i as its numbers separated by spaces."""
        return " ".join(self.vocab.decode(batch.tokens[i]))

    def parse(self, text: str) -> list[int]:
        """Token ids of a sequence in the readable form (inverse of `render`)."""
        words = text.split()
        if len(words) != self.config.seq_len:
            raise ParseError(f"expected {self.config.seq_len} numbers, got {len(words)}")
        try:
            return [self.vocab.id(w) for w in words]
        except KeyError as e:
            raise ParseError(f"{e.args[0]!r} is neither an anchor nor an item") from None

    def solve(self, text: str) -> dict[str, str]:
        """Reference answer from the text alone, written independently of `sample`.

        Finds the only two adjacent anchors, reads the key before them and applies the rule of
        that pair (custom shift, else the composition of the primitives, applied one by one).
        """
        c = self.config
        nums = [int(w) for w in text.split()]
        is_anchor = [1 <= v <= c.n_anchors for v in nums]
        starts = [i for i in range(1, len(nums) - 1) if is_anchor[i] and is_anchor[i + 1]]
        if len(starts) != 1 or sum(is_anchor) != 2:
            raise ParseError(f"{text!r}: expected exactly one pair of adjacent anchors")
        i = starts[0]
        key, a1, a2 = nums[i - 1], nums[i], nums[i + 1]
        custom = {(t.pair[0], t.pair[1]): t.shift for t in c.custom}
        held = [(p[0], p[1]) for p in c.held_out]
        if (a1, a2) in custom:
            answer, status = key + custom[(a1, a2)], "custom"
        else:
            value = key
            for a in (a1, a2):  # g(g(x; a1); a2)
                value = value + c.shifts[a - 1]
            answer = value
            status = "held-out" if (a1, a2) in held else "compositional"
        return {"answer": str(answer), "pair": f"{a1} {a2}", "status": status}

    def labels_text(self, batch: Batch, i: int) -> dict[str, str]:
        """The generator's answer for sequence i, in the form `solve` returns."""
        pid = int(batch.meta["pair"][i, 0])
        a1, a2 = self.pairs[pid]
        if self.heldout_mask[pid]:
            status = "held-out"
        elif (a1, a2) in {tuple(t.pair) for t in self.config.custom}:
            status = "custom"
        else:
            status = "compositional"
        return {"answer": str(int(batch.labels[i, 0]) + self.target_lo), "pair": f"{a1} {a2}",
                "status": status}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        """Sequence i as a JSON-ready record: text, answer (as `labels`), pair and key position."""
        lab = self.labels_text(batch, i)
        return {"text": self.render(batch, i), "labels": {"answer": lab["answer"]},
                "pair": lab["pair"], "status": lab["status"],
                "key_pos": int(batch.meta["key_pos"][i, 0])}


def _tables(items: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of allowed item values, left-aligned and padded with the row's first value."""
    count = allowed.sum(1)  # [rows]
    table = np.zeros(allowed.shape, dtype=np.int64)
    for q in range(allowed.shape[0]):  # once per position at construction, not per example
        vals = items[allowed[q]]
        table[q, : len(vals)] = vals
        table[q, len(vals):] = vals[0] if len(vals) else 0
    return table, count
