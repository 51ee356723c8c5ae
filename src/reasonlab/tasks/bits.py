"""Bit memory and bit XOR, the two bit tasks of "Pretrained Transformers As Universal
Computation Engines" (Lu, Grover, Abbeel, Mordatch 2021; docs/papers.md §4, §5.4).

Bit memory, the paper's definition (section "Evaluation tasks - 1. Bit memory"):

    "Input: concatenation of 5 bitstrings of length 1000 split into 20 tokens of dimension 50
    each; a 6th bitstring which is created by taking a random one of the previous 5 and
    randomly masking 50% of the bits. Output: recreation of the masked bitstring"

As the authors' code: bits are -1 / +1, a masked query bit is 0, each query bit is kept with
probability 1 - p_mask (their `randint(0, 2)`: p_mask = 0.5), and the output is read from the
query's own tokens, the last n_bits / patch of the sequence, each carrying `patch` binary
outputs (`outputs_per_token`). One labelled slot per query bit: label_pos = its patch's token,
label_sub = its place in the patch, label 1 for +1 and 0 for -1 (their `ids[y > 0] = 1`).
meta["masked"] is 1 where the query bit was zeroed. Copying the visible query bits and guessing
the masked ones already scores 1/2 + 1/2 * 1/2 = 75% on all bits, so only the accuracy on masked
bits (acc_by_masked[1]) measures recall.

Bit XOR (section "Evaluation tasks - 2. Bit XOR"):

    "Input: concatenation of 2 bitstrings of length 5. Output: a bitstring of length 5 which is
    the XOR of the 2 input bitstrings"

As the authors' code: bits 0 / 1, one bit per token (patch 1), and output bit j read from the
j-th token of the last string (their model reads the last n_bits tokens).

Splits. The authors draw fresh random batches for training and testing, so for XOR (only
2^10 = 1024 inputs) the test inputs were mostly seen in training. `test_inputs="held_out"`
(default) partitions the inputs: no test input is a training input, which the project's split
protocol asks; "fresh" draws both sets independently, as the authors. For bit memory the two
coincide in practice (2^5000 patterns); its splits are de-duplicated all the same.

Readable text: bits as `+`/`-` (memory; `?` = masked) or `0`/`1` (XOR), patches separated by a
space, strings by ` | `. `solve` answers from that text alone.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Split, Task, TaskConfig
from reasonlab.tasks.patches import PATCH_VOCAB, distinct_splits, feature_batch

MEMORY_CHARS = {-1: "-", 0: "?", 1: "+"}


def _chunks(s: str, size: int) -> str:
    return " ".join(s[i:i + size] for i in range(0, len(s), size))


class BitMemoryConfig(TaskConfig):
    """Bit memory (FPT §"Evaluation tasks - 1"). Defaults are the paper's: 5 x 1000 bits,
    patches of 50, half the query bits masked."""

    name: Literal["bit_memory"] = "bit_memory"
    n_bits: int = Field(1000, gt=0)
    """Bits per pattern (the paper: 1000)."""
    n_patterns: int = Field(5, ge=1)
    """Patterns to memorise before the query (the paper: 5)."""
    patch: int = Field(50, gt=0)
    """Bits per token, input and output alike (the paper: 50 -> 20 tokens per pattern)."""
    p_mask: float = Field(0.5, ge=0, lt=1)
    """Probability that a query bit is zeroed (the paper: 0.5)."""

    @model_validator(mode="after")
    def _patches_tile(self) -> BitMemoryConfig:
        if self.n_bits % self.patch:
            raise ValueError(f"n_bits={self.n_bits} is not a multiple of patch={self.patch}")
        return self


@TASKS.register("bit_memory")
class BitMemoryTask(Task):
    """Recall one of n_patterns stored bit patterns from a half-masked copy."""

    Config = BitMemoryConfig
    vocab = PATCH_VOCAB

    def __init__(self, config: BitMemoryConfig):
        self.config = config
        self.patches = config.n_bits // config.patch  # tokens per pattern
        self.d_input = config.patch
        self.outputs_per_token = config.patch

    @property
    def n_classes(self) -> int:
        return 2

    @property
    def seq_len(self) -> int:
        return (self.config.n_patterns + 1) * self.patches

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        """n fresh examples; both splits are drawn alike (2^5000 patterns)."""
        c = self.config
        bits = 2 * rng.integers(0, 2, size=(n, c.n_patterns, c.n_bits)) - 1  # [n, K, N] +-1
        query = rng.integers(0, c.n_patterns, size=n)  # [n] which pattern is recalled
        target = bits[np.arange(n), query]  # [n, N]
        masked = rng.random((n, c.n_bits)) < c.p_mask  # [n, N]
        seq = np.concatenate([bits, np.where(masked, 0, target)[:, None]], axis=1)
        features = seq.reshape(n, self.seq_len, c.patch)  # [n, T, patch], row-major patches
        j = np.arange(c.n_bits)
        first = c.n_patterns * self.patches  # the query's first token
        return feature_batch(
            features,
            label_pos=np.broadcast_to(first + j // c.patch, (n, c.n_bits)),
            labels=(target > 0),
            label_sub=np.broadcast_to(j % c.patch, (n, c.n_bits)),
            meta={"masked": masked},
        )

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        return distinct_splits(lambda k: self.sample(rng, k), n_train, n_test, "bit_memory")

    def attention_targets(self, batch: Batch) -> torch.Tensor:
        """[B, q_pos, k_pos] bool: the keys a query token needs, for the attention maps of the
        slides ("GPT-2 - first layer attention for bit memory"): the query string's patch j
        needs patch j of every stored pattern (position k * patches + j); other queries none."""
        T, P = self.seq_len, self.patches
        first = self.config.n_patterns * P
        q = torch.arange(T)[:, None]
        k = torch.arange(T)[None, :]
        need = (q >= first) & (k < first) & (k % P == (q - first) % P)  # [T, T]
        return need[None].expand(len(batch), T, T)

    # ------------------------------------------------------------------ text

    def _strings(self, batch: Batch, i: int) -> np.ndarray:
        """[n_patterns + 1, n_bits] values -1 / 0 / +1 of example i."""
        assert batch.features is not None
        return batch.features[i].reshape(self.config.n_patterns + 1, -1).round().long().numpy()

    def render(self, batch: Batch, i: int) -> str:
        rows = self._strings(batch, i)
        names = [str(k + 1) for k in range(self.config.n_patterns)] + ["Q"]
        return " | ".join(f"{name}: " + _chunks("".join(MEMORY_CHARS[int(v)] for v in row),
                                                 self.config.patch)
                          for name, row in zip(names, rows))

    def solve(self, text: str) -> dict[str, str]:
        """The stored pattern that agrees with every visible query bit; a ParseError when none
        or several different ones do (the text then does not determine the answer)."""
        parts = [p.partition(":") for p in text.split("|")]
        rows = {name.strip(): "".join(bits.split()) for name, _, bits in parts}
        query = rows.pop("Q", None)
        if query is None or not rows or any(len(r) != len(query) for r in rows.values()):
            raise ParseError(f"expected `1: ... | ... | Q: ...` of equal lengths, got {text!r}")
        fits = {r for r in rows.values()
                if all(q == "?" or q == b for q, b in zip(query, r))}
        if len(fits) != 1:
            raise ParseError(f"{len(fits)} stored patterns fit the query's visible bits")
        return {"bits": fits.pop()}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        bits = "".join("+" if y else "-" for y in batch.labels[i].tolist())
        return {"text": self.render(batch, i), "labels": {"bits": bits},
                "masked_bits": int(batch.meta["masked"][i].sum())}


class BitXorConfig(TaskConfig):
    """Bit XOR (FPT §"Evaluation tasks - 2"): two 5-bit strings, one bit per token."""

    name: Literal["bit_xor"] = "bit_xor"
    n_bits: int = Field(5, gt=0, le=10)
    """Bits per string (the paper: 5)."""
    test_inputs: Literal["held_out", "fresh"] = "held_out"
    """held_out: training and test inputs are disjoint (a random partition of the 4^n_bits
    inputs); fresh: both drawn independently, as the authors' code (test inputs mostly seen)."""


@TASKS.register("bit_xor")
class BitXorTask(Task):
    """Elementwise XOR of two bit strings, one bit per token."""

    Config = BitXorConfig
    vocab = PATCH_VOCAB
    d_input = 1
    outputs_per_token = 1

    def __init__(self, config: BitXorConfig):
        self.config = config

    @property
    def n_classes(self) -> int:
        return 2

    @property
    def seq_len(self) -> int:
        return 2 * self.config.n_bits

    def _batch(self, bits: np.ndarray) -> Batch:
        """bits [B, 2, n] 0/1 -> Batch; output bit j sits on token n + j (the second string)."""
        B, _, n = bits.shape
        return feature_batch(bits.reshape(B, 2 * n, 1),
                             label_pos=np.broadcast_to(n + np.arange(n), (B, n)),
                             labels=bits[:, 0] ^ bits[:, 1])

    def attention_targets(self, batch: Batch) -> torch.Tensor:
        """[B, q_pos, k_pos] bool: the keys a query token needs. The authors' demo notebook
        (universal_computation, demo.ipynb, "Visualizing attention map") reads FPT's first
        layer, mean over heads, and finds "two consistent diagonal lines for output tokens
        5-9 ... denoting each position of either string": output token n + j needs bit j of
        each string (positions j and n + j); the first string's tokens need none."""
        n = self.config.n_bits
        T = 2 * n
        q = torch.arange(T)[:, None]
        k = torch.arange(T)[None, :]
        need = (q >= n) & ((k == q - n) | (k == q))  # [T, T]
        return need[None].expand(len(batch), T, T)

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        """n i.i.d. inputs, either split alike (the held-out partition is `splits`')."""
        return self._batch(rng.integers(0, 2, size=(n, 2, self.config.n_bits)))

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        if self.config.test_inputs == "fresh":
            return self.sample(rng, n_train), self.sample(rng, n_test)
        n = self.config.n_bits
        total = 4**n
        if n_train + n_test > total:
            raise ConfigError(f"bit_xor: n_train + n_test = {n_train + n_test} exceeds the "
                              f"{total} distinct inputs of 2 x {n} bits; lower them or set "
                              "task.test_inputs=fresh")
        codes = rng.permutation(total)[: n_train + n_test]  # distinct inputs as integers
        bits = (codes[:, None] >> np.arange(2 * n)[::-1]) & 1  # [B, 2n] most significant first
        data = self._batch(bits.reshape(-1, 2, n))
        return data[:n_train], data[n_train:]

    def overlap(self) -> str | None:
        """test_inputs="fresh" keeps the authors' protocol, whose test inputs repeat training
        ones (tasks/disjoint.py leaves them in)."""
        if self.config.test_inputs != "fresh":
            return None
        return ("test_inputs='fresh' draws training and test inputs independently, as the FPT "
                "authors' code does (Lu et al. 2021, universal_computation's bit XOR; "
                "docs/papers.md): of 2^10 inputs, most test inputs are training ones")

    def render(self, batch: Batch, i: int) -> str:
        assert batch.features is not None
        bits = "".join(str(int(v)) for v in batch.features[i, :, 0].round().tolist())
        n = self.config.n_bits
        return f"{bits[:n]} | {bits[n:]}"

    def solve(self, text: str) -> dict[str, str]:
        a, sep, b = (s.strip() for s in text.partition("|"))
        if not sep or len(a) != len(b) or not set(a + b) <= {"0", "1"}:
            raise ParseError(f"expected two equal-length 0/1 strings `a | b`, got {text!r}")
        return {"xor": "".join("1" if x != y else "0" for x, y in zip(a, b))}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        return {"text": self.render(batch, i),
                "labels": {"xor": "".join(str(int(y)) for y in batch.labels[i].tolist())}}
