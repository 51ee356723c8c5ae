"""Independent random streams of a run, each seeded by (seed, purpose, ...) (docs/design.md §3
Determinism): changing how one stream is used never shifts another."""

from __future__ import annotations

import numpy as np
import torch

# Purposes for seeding independent random streams from one run seed.
DATA, INIT, ORDER, DEPTH, MIMIC = 1, 2, 3, 4, 5


def seeds(seed: int, purpose: int, *more: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, purpose, *more])


def torch_generator(seq: np.random.SeedSequence) -> torch.Generator:
    return torch.Generator().manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] >> 1))
