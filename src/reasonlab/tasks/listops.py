"""ListOps, the Long Range Arena generator (Tay et al. 2021), as used by "Pretrained
Transformers As Universal Computation Engines" (Lu et al. 2021; docs/papers.md §4, §5.4).

The FPT paper's definition (section "Evaluation tasks - 3. ListOps"):

    "Input: sequence of list operations resulting in a single digit
     [ MAX 4 3 [ MIN 2 3 ] 1 0 ]
     Output: the result of the input operations: 4"

The generator follows the benchmark's (lra_benchmarks/data/listops.py; facts only, the code is
our own): a node at depth < max_depth is a leaf with probability 0.75 (their VALUE_P = 0.25 is
the probability of an operator), always a leaf at max_depth = 10 (the root has depth 1); a leaf
is a digit 0-9 drawn uniformly; an operator is one of MIN, MAX, MED (the median, int() of
numpy's, so the floor of the mean of the two middle values for an even count), SM (sum mod 10),
uniformly, with 2..max_args = 10 arguments (uniform). The length of an expression is its token
count: an operator counts 2 (`[MAX` and `]`), a digit 1; expressions are kept when
min_length < length < max_length (500 and 2000), and the 96k / 2k / 2k splits are distinct
expressions. `LRA_LENGTHS` and `SHORT_LENGTHS` are the benchmark's and the cpu scale's bounds,
`LRA_SPLITS` its split sizes.

Two tokenisations of the same expressions:

- `lra` (default): the benchmark's input pipeline: `[MAX 4 3 [MIN 2 3 ] 1 0 ]`, every token
  kept (the fixed pipeline renames `]` to `X` for its tokenizer; that is only a spelling).
- `fpt2021`: the FPT authors' pipeline (their datasets/helpers/listops.py): a tokenizer that keeps
  only alphanumeric runs, so `[MAX` becomes `MAX` and every `]` is dropped, then truncation to
  the first 512 tokens (88% of the 500-2000 expressions are truncated). The paper's 38.4% was
  measured on this. Without the closing brackets the text no longer determines the answer, so
  `solve` refuses it.

Where the output is read (`read_at`). Default "last_token": the label sits on the last real token
and shorter sequences are padded with id 0 (masked as padding). "window_end" reproduces the FPT
authors' model, which reads the last position of the zero-padded 512-token window without an
attention mask: shorter sequences are filled to seq_len with a `[FILL]` token the model sees, and
the label sits on the last position (at the benchmark's lengths this changes the 12% of fpt2021
sequences shorter than 512).
`majority_accuracy` is the majority-class baseline (about 17% at the benchmark's lengths).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Split, Task, TaskConfig, Vocab

OPS: dict[str, Callable[[list[int]], int]] = {
    "MIN": min,
    "MAX": max,
    # the benchmark's int(np.median(.)): for an even count the floor of the middle two's mean
    "MED": lambda a: (sorted(a)[(len(a) - 1) // 2] + sorted(a)[len(a) // 2]) // 2,
    "SM": lambda a: sum(a) % 10,
}
DIGITS = tuple(str(d) for d in range(10))
OP_TOKENS = tuple(f"[{op}" for op in OPS)
CLOSE = "]"
FILL = "[FILL]"
LRA_LENGTHS = {"min_length": 500, "max_length": 2000}
"""The benchmark's bounds (exclusive): 500 < tokens < 2000."""
SHORT_LENGTHS = {"min_length": 16, "max_length": 128}
"""A short-length preset for the cpu scale, same generator: 16 < tokens < 128."""
LRA_SPLITS = {"n_train": 96_000, "n_val": 2_000, "n_test": 2_000}
"""The benchmark's split sizes (distinct expressions)."""


class ListOpsConfig(TaskConfig):
    """ListOps (LRA generator). Defaults are the benchmark's (`LRA_LENGTHS`); the cpu scale
    passes `SHORT_LENGTHS`."""

    name: Literal["listops"] = "listops"
    tokenisation: Literal["lra", "fpt2021"] = "lra"
    """lra: all tokens, brackets kept (the benchmark); fpt2021: closing brackets dropped and
    truncated to `truncate` tokens (the FPT authors' pipeline)."""
    min_length: int = Field(500, ge=0)
    """Keep expressions with more than this many tokens (brackets counted; the benchmark: 500)."""
    max_length: int = Field(2000, ge=2)
    """Keep expressions with fewer than this many tokens (the benchmark: 2000)."""
    max_depth: int = Field(10, ge=1)
    """Depth limit; the root has depth 1 and nodes at max_depth are digits (the benchmark: 10)."""
    max_args: int = Field(10, ge=2)
    """Operators take 2..max_args arguments, uniformly (the benchmark: 10)."""
    leaf_p: float = Field(0.75, gt=0, le=1)
    """Probability that a node above the depth limit is a digit (the benchmark: 1 - 0.25)."""
    truncate: int = Field(512, gt=0)
    """fpt2021: keep the first `truncate` tokens (the FPT authors: 512)."""
    read_at: Literal["last_token", "window_end"] = "last_token"
    """last_token: label on the last real token, padding masked; window_end: fill to seq_len
    with a visible [FILL] token and label the last position (the FPT authors' model)."""

    @model_validator(mode="after")
    def _lengths(self) -> ListOpsConfig:
        if self.max_length - self.min_length < 2:
            raise ValueError(f"no length lies strictly between min_length={self.min_length} "
                             f"and max_length={self.max_length}")
        return self


class _TooLong(Exception):
    """An expression outgrew max_length; it would be rejected, so its draw stops early."""


@TASKS.register("listops")
class ListOpsTask(Task):
    """Nested MIN / MAX / MED / SM expressions over digits; the answer is their value."""

    Config = ListOpsConfig

    def __init__(self, config: ListOpsConfig):
        self.config = config
        if config.tokenisation == "lra":
            words = [*OP_TOKENS, CLOSE]
        else:
            words = list(OPS)
        fill = [FILL] if config.read_at == "window_end" else []
        self.vocab = Vocab((Vocab.PAD, *words, *DIGITS, *fill))

    @property
    def n_classes(self) -> int:
        return 10

    @property
    def seq_len(self) -> int:
        longest = self.config.max_length - 1
        return longest if self.config.tokenisation == "lra" else min(longest, self.config.truncate)

    # ------------------------------------------------------------------ generation

    def _node(self, rnd: random.Random, depth: int, out: list[str]) -> int:
        """Append one subtree's tokens (benchmark form) to `out`; return its value. Uniform
        choices are int(random() * k): a third of the time of randrange, the generator's hot
        path."""
        c = self.config
        if depth >= c.max_depth or rnd.random() < c.leaf_p:
            v = int(rnd.random() * 10)
            out.append(DIGITS[v])
            return v
        k = int(rnd.random() * len(OPS))
        out.append(OP_TOKENS[k])
        n_args = 2 + int(rnd.random() * (c.max_args - 1))  # 2..max_args
        args = [self._node(rnd, depth + 1, out) for _ in range(n_args)]
        out.append(CLOSE)
        if len(out) >= c.max_length:
            raise _TooLong
        return OPS[OP_TOKENS[k][1:]](args)

    def expressions(self, rng: np.random.Generator, n: int,
                    distinct: bool = False) -> tuple[list[tuple[str, ...]], list[int]]:
        """n expressions in the benchmark's token form and their values, drawn until each
        satisfies min_length < length < max_length (distinct ones if `distinct`)."""
        # Python's generator, seeded from `rng`: one scalar draw per node, ~30x faster than
        # numpy's scalar calls, and as reproducible.
        rnd = random.Random(int(rng.integers(2**63)))
        exprs: list[tuple[str, ...]] = []
        values: list[int] = []
        seen: set[tuple[str, ...]] = set()
        lo = self.config.min_length
        while len(exprs) < n:
            out: list[str] = []
            try:
                v = self._node(rnd, 1, out)
            except _TooLong:
                continue
            expr = tuple(out)
            if len(expr) <= lo or (distinct and expr in seen):
                continue
            seen.add(expr)
            exprs.append(expr)
            values.append(v)
        return exprs, values

    def model_tokens(self, expr: tuple[str, ...]) -> list[str]:
        """An expression's tokens as the chosen pipeline feeds them to the model."""
        if self.config.tokenisation == "lra":
            return list(expr)
        return [t.lstrip("[") for t in expr if t != CLOSE][: self.config.truncate]

    def encode(self, exprs: list[tuple[str, ...]], values: list[int]) -> Batch:
        """Expressions -> Batch: tokens padded to seq_len (with 0, or [FILL] for window_end),
        label on the last token of the sequence."""
        n, T = len(exprs), self.seq_len
        window_end = self.config.read_at == "window_end"
        tokens = np.full((n, T), self.vocab.id(FILL) if window_end else 0, dtype=np.int64)
        length = np.full(n, T, dtype=np.int64)
        for i, expr in enumerate(exprs):
            ids = self.vocab.ids(self.model_tokens(expr))
            tokens[i, : len(ids)] = ids
            if not window_end:
                length[i] = len(ids)
        pad_mask = np.arange(T)[None, :] < length[:, None]
        return Batch(
            tokens=torch.from_numpy(tokens),
            label_pos=torch.from_numpy(length - 1)[:, None],
            labels=torch.tensor(values, dtype=torch.long)[:, None],
            loss_mask=torch.ones(n, 1, dtype=torch.bool),
            pad_mask=None if pad_mask.all() else torch.from_numpy(pad_mask),
        )

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        """n fresh expressions, either split alike (`splits` makes them distinct)."""
        return self.encode(*self.expressions(rng, n))

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """Distinct expressions (as the benchmark's set of trees), the first n_train for
        training: no test expression is a training one. Under fpt2021 two different
        expressions can still share their first 512 tokens, as in the authors' pipeline."""
        exprs, values = self.expressions(rng, n_train + n_test, distinct=True)
        data = self.encode(exprs, values)
        return data[:n_train], data[n_train:]

    # ------------------------------------------------------------------ text

    def render(self, batch: Batch, i: int) -> str:
        """The tokens the model reads, without padding or [FILL]."""
        words = self.vocab.decode(batch.tokens[i, : int(batch.label_pos[i, 0]) + 1])
        return " ".join(w for w in words if w != FILL)

    def solve(self, text: str) -> dict[str, str]:
        """Value of a bracketed expression, by a stack machine over its tokens."""
        if self.config.tokenisation != "lra":
            raise ParseError("fpt2021 text has no closing brackets (and may be truncated), so "
                             "it does not determine the answer; use task.tokenisation=lra")
        stack: list[tuple[str, list[int]]] = [("", [])]  # (operator, arguments so far)
        for word in text.split():
            if word.startswith("[") and word[1:] in OPS:
                stack.append((word[1:], []))
            elif word == CLOSE and len(stack) > 1 and stack[-1][1]:
                op, args = stack.pop()
                stack[-1][1].append(OPS[op](args))
            elif word in DIGITS:
                stack[-1][1].append(int(word))
            else:
                raise ParseError(f"unexpected token {word!r} in {text!r}")
        if len(stack) != 1 or len(stack[0][1]) != 1:
            raise ParseError(f"{text!r} is not one complete expression")
        return {"value": str(stack[0][1][0])}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        return {"text": self.render(batch, i),
                "labels": {"value": str(int(batch.labels[i, 0]))},
                "tokens": len(self.render(batch, i).split())}


def majority_accuracy(train: Batch, test: Batch) -> float:
    """Majority-class baseline: accuracy on `test` of always answering the class most frequent
    among `train`'s supervised labels (ListOps: about 17%, the paper's reference line)."""
    labels = train.labels[train.loss_mask]
    if labels.numel() == 0:
        raise ConfigError("majority_accuracy: the training set has no supervised label")
    majority = int(torch.bincount(labels).argmax())
    target = test.labels[test.loss_mask]
    return float((target == majority).float().mean())
