"""Masked-language-model pretraining on a named word corpus (BERT's objective, Devlin et al.
2019; Zhang et al. 2022, "Unveiling Transformers with LEGO", §5 trains BERT, Hardcode and Hybrid
on it; Chiang & Lee 2020 pretrain on artificial corpora with it; docs/papers.md §1.1, §4).

BERT (Devlin et al. 2019, §3.1, "Task #1: Masked LM"): "we mask 15% of all WordPiece tokens in
each sequence at random ... If the i-th token is chosen, we replace the i-th token with (1)
the [MASK] token 80% of the time (2) a random token 10% of the time (3) the unchanged i-th
token 10% of the time. Then, T_i will be used to predict the original token with cross
entropy loss." As in the authors' `create_pretraining_data.py`, each sequence gets exactly
round(15% x its candidate tokens) predictions (at least 1) at positions drawn without
replacement; [CLS], [SEP] and padding are never chosen. Two choices of ours: [UNK] is never
chosen either (a word vocabulary leaves ~20% of the words unknown at 2k words; predicting
"unknown" is not language modelling), and the random replacement is a random word (no
special token). The masking is drawn once per example: the training set is generated once
(static masking, as in the original BERT); `n_train` sets how many masked windows it holds.

Corpus. The token stream comes from a CORPORA entry: `english` is the WordNet glosses (the
corpus the project installs, tasks/corpora.py), encoded with the word vocabulary of
tasks/words.py, glosses separated by [SEP]; the glosses are split into train / held-out
validation by `gloss_split`, so no validation gloss is trained on. The artificial corpora of
Chiang & Lee (uniform, unigram, bigram, nesting, ...; tasks/artificial.py) add entries to
CORPORA over the same vocabulary.

An example: [CLS] + a window of seq_len - 2 consecutive stream tokens (random start) + [SEP],
so every sequence has a [CLS] and at least one [SEP] for the broadcast maps of LEGO §5.
Slots: the chosen positions, in order, padded to a fixed count with label_pos -1; meta
"replaced": 0 = [MASK], 1 = random word, 2 = unchanged (evaluate() reports acc_by_replaced).
Validation loss = evaluate()'s "loss" on the test split: mean cross-entropy over the chosen
positions of held-out windows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from reasonlab.errors import ConfigError, ParseError
from reasonlab.registry import Registry
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig
from reasonlab.tasks.corpora import WORDNET_DIR, gloss_split
from reasonlab.tasks.words import CLS_ID, MASK_ID, PAD_ID, SEP_ID, UNK_ID, WordVocab


class MLMConfig(TaskConfig):
    """Masked-LM on a word corpus."""

    name: Literal["mlm"] = "mlm"
    corpus: str = "english"
    """CORPORA entry that makes the token stream."""
    words: int = Field(2000, gt=0)
    """Word types kept in the vocabulary (the most frequent); the rest read [UNK]."""
    seq_len: int = Field(64, ge=4)
    """Tokens per example, [CLS] and the closing [SEP] included."""
    mask_prob: float = Field(0.15, gt=0, lt=1)
    """Fraction of the candidate tokens chosen for prediction (BERT: 15%)."""
    mask_token_prob: float = Field(0.8, ge=0, le=1)
    """Of the chosen, the fraction shown as [MASK] (BERT: 80%)."""
    random_token_prob: float = Field(0.1, ge=0, le=1)
    """Of the chosen, the fraction shown as a random word (BERT: 10%); the rest unchanged."""
    val_fraction: float = Field(0.05, gt=0, lt=1)
    """Fraction of the documents (glosses) held out for validation."""
    split_seed: int = 0
    """Seed of the document shuffle that makes the train / validation split."""
    path: str | None = None
    """Folder of the WordNet data files; None = /usr/share/wordnet."""
    corpus_tokens: int = Field(1_000_000, ge=1000)
    """Length of the training stream of a generated (artificial) corpus; its validation
    stream has val_fraction of it (tasks/artificial.py). `english` ignores it."""


CorpusFn = Callable[[WordVocab, MLMConfig], dict[str, np.ndarray]]
CORPORA: Registry[CorpusFn] = Registry("corpus")
"""name -> fn(vocab, config) -> {"train", "test": 1-D int64 token stream over vocab}."""


@CORPORA.register("english")
def english(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
    """The WordNet glosses of each split, encoded, each followed by [SEP]."""
    split = gloss_split(config.path or WORDNET_DIR, config.val_fraction, config.split_seed)
    return {s: np.concatenate([np.append(words.encode(g), SEP_ID) for g in glosses])
            for s, glosses in split.items()}


@functools.lru_cache(maxsize=4)
def word_vocab(folder: str, size: int) -> WordVocab:
    """The WordVocab of `size` words, cached (tasks sharing a vocabulary share one)."""
    return WordVocab(folder, size)


@functools.lru_cache(maxsize=4)
def _streams(config: MLMConfig) -> dict[str, np.ndarray]:
    """The corpus streams, cached: configs, data and masks each build the task. Built on first
    use only, so a config that merely names a pretraining task (TrainConfig.init_from) never
    generates its corpus."""
    streams = CORPORA[config.corpus](word_vocab(config.path or WORDNET_DIR, config.words), config)
    for s, ids in streams.items():
        if len(ids) < config.seq_len:
            raise ConfigError(f"task.seq_len={config.seq_len} is longer than the {s} "
                              f"stream ({len(ids)} tokens); shorten it")
    return streams


SAMPLE_ROWS = 65_536
"""Windows built at a time by MLMTask.sample (memory only: the examples do not depend on it)."""


def _framed(stream: np.ndarray, start: np.ndarray, T: int) -> np.ndarray:
    """[CLS] window [SEP] for windows of T - 2 tokens at `start` [m]: [m, T] int64."""
    orig = np.full((len(start), T), SEP_ID, dtype=np.int64)
    orig[:, 0] = CLS_ID
    orig[:, 1:-1] = stream[start[:, None] + np.arange(T - 2)]
    return orig


@TASKS.register("mlm")
class MLMTask(Task):
    """Predict the chosen tokens of a window of the corpus from the corrupted window."""

    held_out_revised = "test"  # held-out rows equal to training rows now left out

    Config = MLMConfig

    def __init__(self, config: MLMConfig):
        if config.mask_token_prob + config.random_token_prob > 1:
            raise ConfigError("task.mask_token_prob + task.random_token_prob must be at most 1")
        CORPORA[config.corpus]  # an unknown corpus fails here, with the known names
        self.config = config
        self.words = word_vocab(config.path or WORDNET_DIR, config.words)
        self.vocab = self.words.vocab

    @property
    def streams(self) -> dict[str, np.ndarray]:
        """{"train", "test": 1-D token stream}, generated on first use."""
        return _streams(self.config)

    @property
    def n_classes(self) -> int:
        return len(self.vocab)

    def class_names(self) -> tuple[str, ...]:
        return tuple(self.vocab.tokens)  # a slot's label is the token id of its word

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    @property
    def n_slots(self) -> int:
        """Prediction slots per example: 15% of the seq_len - 2 window tokens, at least 1."""
        return max(1, round((self.config.seq_len - 2) * self.config.mask_prob))

    def windows(self, rng: np.random.Generator, n: int, width: int, split: str = "train"
                ) -> np.ndarray:
        """n windows of `width` consecutive tokens of the split's stream at random starts:
        [n, width] (what `reasonlab data corpus NAME` prints, unmasked)."""
        stream = self.streams[split]
        start = rng.integers(0, len(stream) - width + 1, size=n)  # [n]
        return stream[start[:, None] + np.arange(width)]

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n masked windows of the split's stream.

        Built SAMPLE_ROWS rows at a time, the random draws taken in the order and amounts of a
        single pass (window starts, the position keys of every row, then every slot's
        corruption draws), so the examples are those of building all n at once, bit for bit
        (tests/unit/test_mlm.py), while the n x seq_len float64 and int64 temporaries (about
        16 GB at 3M windows of 128) never exist whole: the peak is the tokens themselves."""
        c, T, P = self.config, self.config.seq_len, self.n_slots
        stream = self.streams[split]
        start = rng.integers(0, len(stream) - (T - 2) + 1, size=n)  # as windows() draws them
        pos = np.empty((n, P), dtype=np.int64)
        for a in range(0, n, SAMPLE_ROWS):
            orig = _framed(stream, start[a:a + SAMPLE_ROWS], T)  # [m, T]
            m = len(orig)
            cand = ~np.isin(orig, (PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID))  # [m, T]
            k = np.maximum(1, np.rint(cand.sum(1) * c.mask_prob)).astype(np.int64)
            k = np.minimum(k, cand.sum(1))  # [m]: predictions per example
            # positions without replacement: the k smallest of random keys among candidates
            keys = np.where(cand, rng.random((m, T)), np.inf)
            chosen = np.argsort(keys, axis=1, kind="stable")[:, :P]  # [m, P]
            valid = np.arange(P)[None, :] < k[:, None]  # [m, P]
            pos[a:a + m] = np.sort(np.where(valid, chosen, T), axis=1)  # invalid slots last
        valid = pos < T
        u = rng.random((n, P))
        replaced = np.where(u < c.mask_token_prob, 0,
                            np.where(u < c.mask_token_prob + c.random_token_prob, 1, 2))
        del u
        randoms = rng.choice(self.words.word_ids, size=(n, P))
        tokens = np.empty((n, T), dtype=np.int64)
        labels = np.empty((n, P), dtype=np.int64)
        for a in range(0, n, SAMPLE_ROWS):
            orig = _framed(stream, start[a:a + SAMPLE_ROWS], T)  # [m, T]
            m = len(orig)
            p, v = pos[a:a + m], valid[a:a + m]
            at = orig[np.arange(m)[:, None], np.minimum(p, T - 1)]  # [m, P]
            rows = np.nonzero(v)
            shown = np.choose(replaced[a:a + m], [np.full((m, P), MASK_ID), randoms[a:a + m],
                                                  at])
            orig[rows[0], p[rows]] = shown[rows]
            tokens[a:a + m] = orig
            labels[a:a + m] = np.where(v, at, 0)
        return Batch(tokens=torch.from_numpy(tokens),
                     label_pos=torch.from_numpy(np.where(valid, pos, -1)),
                     labels=torch.from_numpy(labels),
                     loss_mask=torch.from_numpy(valid),
                     meta={"replaced": torch.from_numpy(np.where(valid, replaced, 0))})

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """Training windows from the training documents, validation windows from the
        held-out ones."""
        return self.sample(rng, n_train, "train"), self.sample(rng, n_test, "test")

    def render(self, batch: Batch, i: int) -> str:
        """The corrupted window; each prediction slot in braces: `{[MASK]}`, `{word}`."""
        words = self.vocab.decode(batch.tokens[i])
        for p in batch.label_pos[i][batch.label_pos[i] >= 0].tolist():
            words[p] = "{" + words[p] + "}"
        return " ".join(words)

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        slots = batch.label_pos[i] >= 0
        return {"text": self.render(batch, i),
                "labels": {str(int(p)): self.vocab.tokens[int(y)] for p, y in
                           zip(batch.label_pos[i][slots], batch.labels[i][slots])}}

    def solve(self, text: str, split: str = "train") -> dict[str, str]:
        """Independent of the generator: find the window of the split's stream that agrees with
        every token of `text` outside the braces, and read the braced positions off it."""
        words = text.split(" ")
        slot = [w.startswith("{") and w.endswith("}") and len(w) > 2 for w in words]
        try:
            ids = np.asarray([self.vocab.id(w.strip("{}") if s else w)
                              for w, s in zip(words, slot)])
        except KeyError as e:
            raise ParseError(f"token {e.args[0]!r} is not in the vocabulary") from None
        stream, W = self.streams[split], len(words) - 2
        fixed = [p for p in range(1, len(words) - 1) if not slot[p]]
        starts = np.arange(len(stream) - W + 1)
        for p in fixed:  # narrow the candidate starts one known token at a time
            starts = starts[stream[starts + p - 1] == ids[p]]
        if len(starts) == 0:
            raise ParseError("no window of the corpus agrees with this text")
        s = int(starts[0])
        return {str(p): self.vocab.tokens[int(stream[s + p - 1])]
                for p in range(len(words)) if slot[p]}
