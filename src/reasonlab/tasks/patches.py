"""Pieces shared by the continuous-input tasks of the FPT study (docs/papers.md §4): bit memory,
bit XOR and images reach the model as `Batch.features` rows, one row per token, while `tokens`
only says which positions are real (1) or padding (0). Also the de-duplicated split every
generated task of that family uses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import Batch, Vocab

PATCH = "[PATCH]"
PATCH_VOCAB = Vocab((Vocab.PAD, PATCH))
"""Vocabulary of a continuous-input task: id 1 marks a real position, id 0 padding."""


def feature_batch(features: np.ndarray, label_pos: np.ndarray, labels: np.ndarray,
                  label_sub: np.ndarray | None = None,
                  meta: dict[str, np.ndarray] | None = None) -> Batch:
    """A Batch of continuous inputs: features [B, T, d_input]; every slot in the loss."""
    B, T, _ = features.shape
    return Batch(
        tokens=torch.full((B, T), PATCH_VOCAB.id(PATCH), dtype=torch.long),
        label_pos=torch.from_numpy(np.array(label_pos, dtype=np.int64)),
        labels=torch.from_numpy(np.array(labels, dtype=np.int64)),
        loss_mask=torch.ones(labels.shape, dtype=torch.bool),
        meta={k: torch.from_numpy(np.array(v, dtype=np.int64))
              for k, v in (meta or {}).items()},
        features=torch.from_numpy(np.array(features, dtype=np.float32)),
        label_sub=(None if label_sub is None
                   else torch.from_numpy(np.array(label_sub, dtype=np.int64))),
    )


def row_keys(batch: Batch) -> list[bytes]:
    """One hashable key per example: its token ids and, when present, its feature rows."""
    tokens = batch.tokens.numpy()
    feats = None if batch.features is None else batch.features.numpy()
    return [tokens[i].tobytes() + (b"" if feats is None else feats[i].tobytes())
            for i in range(len(batch))]


def distinct_splits(draw: Callable[[int], Batch], n_train: int, n_test: int, what: str,
                    max_rounds: int = 50) -> tuple[Batch, Batch]:
    """Draw until n_train + n_test distinct examples exist; the first n_train are the training
    set and the rest the test set, so no test example equals a training one."""
    need = n_train + n_test
    seen: set[bytes] = set()
    kept: list[Batch] = []
    for _ in range(max_rounds):
        have = len(seen)
        if have >= need:
            break
        batch = draw(need - have)
        fresh = []
        for i, key in enumerate(row_keys(batch)):
            if key not in seen and len(seen) < need:
                seen.add(key)
                fresh.append(i)
        kept.append(batch[torch.tensor(fresh, dtype=torch.long)])
    if len(seen) < need:
        raise ConfigError(f"{what}: could not draw {need} distinct examples (got {len(seen)}); "
                          "lower n_train / n_test or enlarge the task")
    data = Batch.cat(kept)
    return data[:n_train], data[n_train:]
