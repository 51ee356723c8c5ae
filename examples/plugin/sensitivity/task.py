"""The task `bit_function`: n random bits, one label, a Boolean function of all of them: their
majority (1 when more than half are 1) or their parity (their sum mod 2). The label is read at
a [CLS] token before the bits. Registered in reasonlab's TASKS like a task of its own."""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.errors import ParseError
from reasonlab.tasks.base import TASKS, Batch, Split, Task, TaskConfig, Vocab
from reasonlab.tasks.patches import distinct_splits

CLS = "[CLS]"
VOCAB = Vocab((Vocab.PAD, CLS, "0", "1"))


class BitFunctionConfig(TaskConfig):
    name: Literal["bit_function"] = "bit_function"
    n_bits: int = Field(9, gt=0)
    """Bits per example (odd for the majority, so that there is no tie)."""
    function: Literal["majority", "parity"] = "majority"

    @model_validator(mode="after")
    def _no_tie(self) -> BitFunctionConfig:
        if self.function == "majority" and self.n_bits % 2 == 0:
            raise ValueError(f"the majority of n_bits={self.n_bits} bits can tie; use an odd n")
        return self


def answer(bits: np.ndarray, function: str) -> np.ndarray:
    """The label of each row of bits [n, n_bits]."""
    ones = bits.sum(axis=-1)
    return (2 * ones > bits.shape[-1]) if function == "majority" else ones % 2


@TASKS.register("bit_function")
class BitFunctionTask(Task):
    Config = BitFunctionConfig
    vocab = VOCAB

    def __init__(self, config: BitFunctionConfig):
        self.config = config

    @property
    def n_classes(self) -> int:
        return 2

    @property
    def seq_len(self) -> int:
        return self.config.n_bits + 1

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        bits = rng.integers(0, 2, size=(n, self.config.n_bits))  # [n, n_bits]
        tokens = np.concatenate([np.full((n, 1), VOCAB.id(CLS)), bits + VOCAB.id("0")], axis=1)
        labels = answer(bits, self.config.function).astype(np.int64)[:, None]  # [n, 1]
        return Batch(tokens=torch.from_numpy(tokens.astype(np.int64)),
                     label_pos=torch.zeros((n, 1), dtype=torch.long),
                     labels=torch.from_numpy(labels),
                     loss_mask=torch.ones((n, 1), dtype=torch.bool))

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        return distinct_splits(lambda k: self.sample(rng, k), n_train, n_test, "bit_function")

    def render(self, batch: Batch, i: int) -> str:
        bits = "".join(VOCAB.decode(batch.tokens[i, 1:]))
        return f"{bits} {self.config.function}={int(batch.labels[i, 0])}"

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        text = self.render(batch, i)
        return {"text": text.split()[0], "labels": {self.config.function: text[-1]}}

    def solve(self, text: str) -> dict[str, str]:
        bits = text.split()[0]
        if not bits or set(bits) - {"0", "1"}:
            raise ParseError(f"expected a string of 0s and 1s, got {bits!r}")
        row = np.array([[int(b) for b in bits]])
        return {self.config.function: str(int(answer(row, self.config.function)[0]))}
