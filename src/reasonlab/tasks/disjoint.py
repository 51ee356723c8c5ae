"""Held-out examples that equal a training example are left out (docs/design.md §2: a task's
splits are disjoint), whatever the task: `train/loop.draw_splits` applies it to every run's
test and validation splits, and so to every export of them.

An example is its model input: its token row, its continuous features (FPT's patches) and the
positions it is read at. Two tasks leaked without it: `gloss_class`, whose distinct glosses can
encode to one token row (out-of-vocabulary words, cut at seq_len), and the validation split of
tasks drawn i.i.d. (`templates`, `corpus_lm`), carved from the training draw. A task whose
paper draws its splits with overlap says so with its source (`Task.overlap`), and keeps it.
"""

from __future__ import annotations

import numpy as np
import torch

from reasonlab.tasks.base import Batch

_CHUNK = 1 << 16  # rows hashed at a time: memory only


def overlap(task: object) -> str | None:
    """Why the task's held-out examples may equal training ones (its paper's protocol, with
    the source), or None: they may not."""
    why = getattr(task, "overlap", None)
    return why() if callable(why) else None


def _inputs(b: Batch) -> list[torch.Tensor]:
    return [t for t in (b.tokens, b.features, b.label_pos) if t is not None]


def _row_bytes(b: Batch, lo: int, hi: int) -> np.ndarray:
    """[hi - lo, W] uint64: the rows' inputs as bytes, padded to whole words."""
    parts = [t[lo:hi].contiguous().numpy().reshape(hi - lo, -1).view(np.uint8)
             for t in _inputs(b)]
    raw = np.concatenate(parts, axis=1)
    pad = -raw.shape[1] % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((hi - lo, pad), np.uint8)], axis=1)
    return raw.view(np.uint64)


def _hashes(b: Batch) -> np.ndarray:
    """A 64-bit hash per row (a random linear map of its words, mod 2^64): candidates only,
    confirmed byte for byte by `seen`."""
    n = len(b)
    out = np.empty(n, dtype=np.uint64)
    for lo in range(0, n, _CHUNK):
        words = _row_bytes(b, lo, min(n, lo + _CHUNK))
        mult = np.random.default_rng(57).integers(1, 2**63, size=words.shape[1],
                                                  dtype=np.uint64) | np.uint64(1)
        with np.errstate(over="ignore"):
            out[lo:lo + len(words)] = (words * mult).sum(axis=1, dtype=np.uint64)
    return out


def seen(train: Batch, held: Batch) -> np.ndarray:
    """[len(held)] bool: the held-out rows whose inputs equal those of a training row."""
    if len(held) == 0 or len(train) == 0:
        return np.zeros(len(held), dtype=bool)
    h_train, h_held = _hashes(train), _hashes(held)
    candidates = np.flatnonzero(np.isin(h_held, h_train))
    out = np.zeros(len(held), dtype=bool)
    if len(candidates) == 0:
        return out
    rows: dict[int, set[bytes]] = {}
    for i in np.flatnonzero(np.isin(h_train, h_held[candidates])):
        rows.setdefault(int(h_train[i]), set()).add(_row_bytes(train, i, i + 1).tobytes())
    for i in candidates:
        out[i] = _row_bytes(held, i, i + 1).tobytes() in rows.get(int(h_held[i]), ())
    return out


def without_seen(train: Batch, held: Batch) -> Batch:
    """`held` less its rows equal to a training row (the same object when there are none, so
    a task that never repeats draws exactly what it drew before)."""
    hit = seen(train, held)
    if not hit.any():
        return held
    return held[torch.from_numpy(np.flatnonzero(~hit))]
