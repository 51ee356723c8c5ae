"""Template tasks with abstract symbols (Boix-Adsera et al., ICLR 2024, §2; docs/papers.md §2
Abstract symbols).

A template is a string of wildcards and regular tokens with a label. A sample picks a template
and substitutes a symbol for each wildcard, distinct symbols for distinct wildcards. Symbols of
the train, validation and test splits come from disjoint alphabets, so test accuracy measures
generalisation to symbols never seen in training.

Labels are either *real* (a class name per template, e.g. same / different) or *symbolic*
(a wildcard of the template: the answer is the symbol substituted for it, i.e. copying).
Symbolic tasks classify over the whole vocabulary (class = token id), so a read-out tied to
the embedding can name an unseen symbol.

Readable form. Wildcards are written `$name`; a template is `tokens -> label`, e.g.

    $a = +1 ; $b = -1 ; print $a -> +1        (real label +1)
    $a $b -> $b                                (symbolic label: copy the second symbol)

A sample is rendered with its symbols (`s17` train, `v3` validation, `u5` test alphabets):
`s17 = +1 ; s4 = -1 ; print s17`. `parse(text)` gives back the token ids, and `solve(text)`
answers from the text alone: it renames the symbols in order of first appearance and looks the
resulting pattern up among the templates. That lookup is unambiguous exactly because templates
equal up to renaming wildcards are rejected (a ConfigError) when the task is built.

Token layout: the template's tokens, then the read-out token `[OUT]`, then padding to the
longest template. The label sits on `[OUT]` (label_pos = the last real position): this is the
paper's learned read-out token appended at the end of the string.
"""

from __future__ import annotations

from itertools import product
from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab

OUT = "[OUT]"
WILD = "$"
SPLITS = ("train", "val", "test")
SYMBOL_PREFIX = {"train": "s", "val": "v", "test": "u"}


class Template(StrictModel):
    """One template: `tokens` (wildcards start with `$`) and its `label`."""

    tokens: list[str] = Field(min_length=1)
    """Wildcards (`$a`) and regular tokens, in order."""
    label: str
    """A class name (real label) or one of the template's wildcards (symbolic label)."""

    @property
    def wildcards(self) -> list[str]:
        """Distinct wildcards in order of first appearance."""
        return list(dict.fromkeys(t for t in self.tokens if t.startswith(WILD)))

    @property
    def symbolic(self) -> bool:
        return self.label.startswith(WILD)

    def canonical(self) -> tuple[tuple[str, ...], str]:
        """Wildcards renamed by order of first appearance: equal iff equal up to renaming."""
        name = {w: f"{WILD}{i}" for i, w in enumerate(self.wildcards)}
        return tuple(name.get(t, t) for t in self.tokens), name.get(self.label, self.label)

    def text(self) -> str:
        return " ".join(self.tokens) + " -> " + self.label

    @classmethod
    def from_text(cls, text: str) -> Template:
        """`$a = +1 ; print $a -> +1` -> Template."""
        body, arrow, label = text.rpartition("->")
        if not arrow or not body.split() or len(label.split()) != 1:
            raise ConfigError(f"template {text!r} is not `tokens -> label`")
        return cls(tokens=body.split(), label=label.strip())


def same_different() -> list[Template]:
    """`$a $a` -> same, `$a $b` -> different (the paper's same/different task)."""
    return [Template.from_text("$a $a -> same"), Template.from_text("$a $b -> different")]


def variable_binding() -> list[Template]:
    """`$a = v1 ; $b = v2 ; print $x` -> the value bound to $x (paper §1, `a=+1; print(a)`)."""
    out = []
    for v1, v2, x in product(("+1", "-1"), ("+1", "-1"), ("$a", "$b")):
        label = v1 if x == "$a" else v2
        out.append(Template(tokens=["$a", "=", v1, ";", "$b", "=", v2, ";", "print", x],
                            label=label))
    return out


def copy_templates(length: int) -> list[Template]:
    """`$w0 .. $w{L-1} -> $w0`: copy the first of L distinct symbols (symbolic label, §5)."""
    tokens = [f"$w{i}" for i in range(length)]
    return [Template(tokens=tokens, label="$w0")]


def random_templates(rng: np.random.Generator, n_templates: int, length: int, n_wildcards: int,
                     n_regular: int, n_classes: int, symbolic: bool) -> list[Template]:
    """n_templates distinct (up to renaming) random templates of `length` positions over
    `n_wildcards` wildcards and `n_regular` regular tokens `r0..`; labels are random classes
    `c0..` (every class used when n_templates >= n_classes) or, if symbolic, a random wildcard
    of the template."""
    pool = [f"$w{i}" for i in range(n_wildcards)] + [f"r{i}" for i in range(n_regular)]
    seen: set[tuple[str, ...]] = set()
    out: list[Template] = []
    for _ in range(1000 * n_templates):
        tokens = [pool[i] for i in rng.integers(0, len(pool), size=length)]
        wild = list(dict.fromkeys(t for t in tokens if t.startswith(WILD)))
        if symbolic and not wild:
            continue
        key = Template(tokens=tokens, label="x").canonical()[0]
        if key in seen:
            continue
        seen.add(key)
        if symbolic:
            label = wild[int(rng.integers(len(wild)))]
        else:  # the first n_classes templates take each class once, then classes at random
            label = f"c{len(out) if len(out) < n_classes else int(rng.integers(n_classes))}"
        out.append(Template(tokens=tokens, label=label))
        if len(out) == n_templates:
            return out
    raise ConfigError(f"task: could not draw {n_templates} distinct templates of length {length} "
                      f"over {n_wildcards} wildcards and {n_regular} regular tokens; lower "
                      "n_templates or raise length / n_wildcards / n_regular")


class TemplatesConfig(TaskConfig):
    """Template task config: a preset (or explicit `templates`) and the symbol alphabets."""

    name: Literal["templates"] = "templates"
    preset: Literal["same_different", "variable_binding", "copy", "random"] | None = None
    """Template set: same_different, variable_binding, copy (symbolic), random; None = use
    `templates`."""
    templates: list[str] | None = None
    """Explicit templates `tokens -> label` (wildcards `$name`); exclusive with preset."""
    length: int = Field(5, gt=0)
    """copy / random presets: positions per template."""
    n_wildcards: int = Field(3, gt=0)
    """random preset: size of the wildcard pool."""
    n_regular: int = Field(2, ge=0)
    """random preset: number of regular tokens r0.."""
    n_templates: int = Field(8, gt=0)
    """random preset: number of templates."""
    n_label_classes: int = Field(2, ge=2)
    """random preset with real labels: number of classes c0.."""
    symbolic: bool = False
    """random preset: symbolic labels (a wildcard) instead of real classes."""
    template_seed: int = 0
    """random preset: seed of the template draw (fixed per task, not per run)."""
    n_train_symbols: int = Field(1000, gt=0)
    """Size of the training alphabet s0.."""
    n_val_symbols: int = Field(100, gt=0)
    """Size of the validation alphabet v0.."""
    n_test_symbols: int = Field(100, gt=0)
    """Size of the test alphabet u0.. (never seen in training)."""
    answer_classes: Literal["split_symbols", "all_tokens"] = "split_symbols"
    """Symbolic labels: the candidates of the read-out softmax. "split_symbols": training
    ranks the training symbols and evaluation the test symbols (`class_mask`).
    "all_tokens": every token in both, as the authors' tied read-out
    (`x @ to_embedding.weight.T`, experiments/models.py; docs/papers.md)."""

    @model_validator(mode="after")
    def _one_source(self) -> TemplatesConfig:
        if (self.preset is None) == (self.templates is None):
            raise ValueError("set exactly one of preset and templates")
        return self

    def template_list(self) -> list[Template]:
        if self.templates is not None:
            return [Template.from_text(t) for t in self.templates]
        if self.preset == "same_different":
            return same_different()
        if self.preset == "variable_binding":
            return variable_binding()
        if self.preset == "copy":
            return copy_templates(self.length)
        return random_templates(np.random.default_rng(self.template_seed), self.n_templates,
                                self.length, self.n_wildcards, self.n_regular,
                                self.n_label_classes, self.symbolic)


@TASKS.register("templates")
class TemplatesTask(Task):
    """Template tasks: vectorised generator, text <-> tokens, and a reference solver."""

    held_out_revised = "val"  # held-out rows equal to training rows now left out

    Config = TemplatesConfig

    def __init__(self, config: TemplatesConfig):
        self.config = config
        self.templates = config.template_list()
        check_templates(self.templates)
        self.symbolic = self.templates[0].symbolic
        if any(t.symbolic != self.symbolic for t in self.templates):
            raise ConfigError("task.templates: mix of real and symbolic labels; use one kind")
        self.max_wildcards = max(len(t.wildcards) for t in self.templates)
        sizes = {"train": config.n_train_symbols, "val": config.n_val_symbols,
                 "test": config.n_test_symbols}
        for split, n in sizes.items():
            if n < self.max_wildcards:
                raise ConfigError(f"task.n_{split}_symbols={n} is smaller than the "
                                  f"{self.max_wildcards} wildcards of a template; raise it")
        self.regular = sorted({t for tp in self.templates for t in tp.tokens
                               if not t.startswith(WILD)})
        bad = [t for t in self.regular if t in (OUT, Vocab.PAD) or _looks_like_symbol(t)]
        if bad:
            raise ConfigError(f"task.templates: regular token {bad[0]!r} clashes with a symbol "
                              "or reserved token name; rename it")
        self.symbols = {s: [f"{SYMBOL_PREFIX[s]}{i}" for i in range(n)] for s, n in sizes.items()}
        tokens = [Vocab.PAD, OUT, *self.regular, *(x for s in SPLITS for x in self.symbols[s])]
        self.vocab = Vocab(tuple(tokens))
        self.symbol_ids = {s: np.array(self.vocab.ids(v), dtype=np.int64)
                           for s, v in self.symbols.items()}
        self.classes = ([] if self.symbolic
                        else sorted({t.label for t in self.templates}))
        self._build_tables()

    def _build_tables(self) -> None:
        """Per template: regular token ids or wildcard slots, and its label, as arrays."""
        K, T = len(self.templates), self.seq_len
        # slot[k, t] = wildcard index at position t (-1 for regular tokens / padding)
        self._slot = np.full((K, T), -1, dtype=np.int64)
        self._fixed = np.zeros((K, T), dtype=np.int64)  # regular token ids, [OUT], padding
        self._length = np.zeros(K, dtype=np.int64)
        self._label = np.zeros(K, dtype=np.int64)  # class index, or wildcard index if symbolic
        for k, tp in enumerate(self.templates):
            wild = {w: i for i, w in enumerate(tp.wildcards)}
            for t, tok in enumerate(tp.tokens):
                if tok in wild:
                    self._slot[k, t] = wild[tok]
                else:
                    self._fixed[k, t] = self.vocab.id(tok)
            self._fixed[k, len(tp.tokens)] = self.vocab.id(OUT)
            self._length[k] = len(tp.tokens) + 1
            self._label[k] = wild[tp.label] if self.symbolic else self.classes.index(tp.label)

    # ------------------------------------------------------------------ shapes

    @property
    def n_classes(self) -> int:
        return len(self.vocab) if self.symbolic else len(self.classes)

    def class_names(self) -> tuple[str, ...]:
        """Symbolic labels are token ids (the answer is a symbol), real ones the classes."""
        return tuple(self.vocab.tokens) if self.symbolic else tuple(self.classes)

    def class_mask(self, split: str) -> torch.Tensor | None:
        """Symbolic labels: the answer candidates of `split`, its symbols [vocab] bool.

        Training runs its softmax over the training symbols, evaluation ranks the test
        symbols. A test symbol is never a training answer; left in the training softmax it is
        pushed down at every step, and under Adam its (tied) embedding moves by about lr per
        step whatever the gradient's size, so it would no longer be an unseen symbol with a
        random embedding, the premise of the paper's §5. Real labels: None (all classes).
        """
        if not self.symbolic or self.config.answer_classes == "all_tokens":
            return None
        mask = torch.zeros(len(self.vocab), dtype=torch.bool)
        mask[torch.from_numpy(self.symbol_ids[split])] = True
        return mask

    @property
    def seq_len(self) -> int:
        return max(len(t.tokens) for t in self.templates) + 1

    # ------------------------------------------------------------------ generation

    def sample(self, rng: np.random.Generator, n: int, split: str = "train",
               template: int | None = None) -> Batch:
        """n examples whose symbols come from `split`'s alphabet (train / val / test), from
        random templates or all from template number `template`."""
        if split not in SPLITS:
            raise ConfigError(f"split {split!r}: choose one of {', '.join(SPLITS)}")
        alphabet = self.symbol_ids[split]
        k = (rng.integers(0, len(self.templates), size=n) if template is None
             else np.full(n, template, dtype=np.int64))  # [n] template index
        sym = alphabet[distinct_draws(rng, n, self.max_wildcards, len(alphabet))]  # [n, W]
        slot = self._slot[k]  # [n, T]
        tokens = np.where(slot >= 0, np.take_along_axis(sym, slot.clip(min=0), axis=1),
                          self._fixed[k])  # [n, T]
        length = self._length[k]
        pad_mask = np.arange(self.seq_len)[None, :] < length[:, None]  # [n, T]
        label = self._label[k]
        if self.symbolic:  # the label is the token id of the symbol in the named wildcard
            label = sym[np.arange(n), label]
        return Batch(
            tokens=torch.from_numpy(tokens),
            label_pos=torch.from_numpy(length - 1)[:, None],  # [n, 1] the [OUT] token
            labels=torch.from_numpy(label)[:, None],
            loss_mask=torch.ones(n, 1, dtype=torch.bool),
            pad_mask=None if pad_mask.all() else torch.from_numpy(pad_mask),
            meta={"template": torch.from_numpy(k)[:, None]},
        )

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """i.i.d. training samples over the train alphabet (as the paper) and test samples over
        the disjoint test alphabet: no test example shares a symbol with any training one."""
        return self.sample(rng, n_train, "train"), self.sample(rng, n_test, "test")

    # ------------------------------------------------------------------ text

    def render(self, batch: Batch, i: int) -> str:
        """Example i as its tokens, without [OUT] and padding."""
        words = self.vocab.decode(batch.tokens[i, : int(batch.label_pos[i, 0])])
        return " ".join(words)

    def parse(self, text: str) -> list[int]:
        """Token ids of an example in the readable form (inverse of `render`), [OUT] appended."""
        words = text.split()
        unknown = [w for w in words if w not in self.vocab._index]  # type: ignore[attr-defined]
        if unknown or OUT in words or Vocab.PAD in words:
            raise ParseError(f"unknown or reserved token {(unknown or [OUT])[0]!r} in {text!r}")
        return self.vocab.ids(words) + [self.vocab.id(OUT)]

    def label_text(self, batch: Batch, i: int) -> str:
        y = int(batch.labels[i, 0])
        return self.vocab.tokens[y] if self.symbolic else self.classes[y]

    def solve(self, text: str) -> dict[str, str]:
        """Reference answer from the text alone: rename the symbols (every word that is not a
        regular token) by first appearance and find the template with that pattern."""
        words = text.split()
        regular = set(self.regular)
        symbols = list(dict.fromkeys(w for w in words if w not in regular))
        name = {s: f"{WILD}{i}" for i, s in enumerate(symbols)}
        pattern = tuple(name.get(w, w) for w in words)
        for tp in self.templates:
            tokens, label = tp.canonical()
            if tokens == pattern:
                if label.startswith(WILD):
                    label = symbols[int(label[1:])]
                return {"label": label}
        raise ParseError(f"{text!r} matches no template")

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        k = int(batch.meta["template"][i, 0])
        return {"text": self.render(batch, i), "labels": {"label": self.label_text(batch, i)},
                "template": self.templates[k].text()}


# ---------------------------------------------------------------------- helpers


def check_templates(templates: list[Template]) -> None:
    """Reject templates equal up to renaming wildcards, and symbolic labels not in the string."""
    seen: dict[tuple[str, ...], str] = {}
    for tp in templates:
        if tp.symbolic and tp.label not in tp.wildcards:
            raise ConfigError(f"task.templates: symbolic label {tp.label} of {tp.text()!r} is "
                              "not one of its wildcards")
        key = tp.canonical()[0]
        if key in seen:
            raise ConfigError(f"task.templates: {tp.text()!r} equals {seen[key]!r} up to "
                              "renaming wildcards; remove one")
        seen[key] = tp.text()


def _looks_like_symbol(token: str) -> bool:
    return any(token[:1] == p and token[1:].isdigit() for p in SYMBOL_PREFIX.values())


def distinct_draws(rng: np.random.Generator, n: int, k: int, size: int) -> np.ndarray:
    """[n, k] indices into range(size), distinct within each row, uniform over such rows."""
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64)
    if size <= 4 * k:  # small alphabet: a random permutation per row
        return rng.random((n, size)).argsort(axis=1)[:, :k]
    out = rng.integers(0, size, size=(n, k))
    while True:  # redraw the rows that repeat a symbol (rare when size >> k)
        s = np.sort(out, axis=1)
        bad = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not bad.any():
            return out
        out[bad] = rng.integers(0, size, size=(int(bad.sum()), k))
