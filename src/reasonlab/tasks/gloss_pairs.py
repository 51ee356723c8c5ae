"""Sentence-pair tasks from WordNet, built offline: where the seed's gains lie (Chiang & Lee,
arXiv 2012.11995; the seed, frozen-pretrained-transformers.txt, second half, "Results": STS-B
0.17 from scratch, 0.72-0.76 after English, Kannada or the stack grammar; the single-sentence
CoLA / SST-2 move by a point or less). GLUE does not reach us offline; these stand in:

    similarity  graded, as STS-B ("how similar are these two sentences", 0-5): the definitions
                of two noun synsets, graded by their WordNet path similarity
                (tasks/wordnet_graph.py) in GRADES: distance 1 -> 4, 2 -> 3, 3-4 -> 2,
                5-6 -> 1, 7 or more -> 0. Scored as 5-way classification (accuracy) and, as
                STS-B is, by the Spearman correlation of the predicted grade (the softmax's
                expectation) with the gold path similarity (studies/artificial/_support/
                paper_table_analysis).
    definition  binary, as MRPC / QNLI ("does the second sentence answer / paraphrase the
                first"): a usage example with its word blanked ([MASK]) and a definition; yes
                when the definition is the example's own synset's, no when it is another
                synset's. Half and half. Which other synset is `negatives`' reading:
                  random     (default) a random synset of the split with the example's part
                             of speech: one rule in both splits
                  same-word  one sharing the blanked word when the split has one (a sense to
                             tell apart, as in word-in-context tasks), else a random synset of
                             the split. The share of such senses differs between the splits,
                             since a held-out synset's other senses are mostly training ones
                             (measured: 62% of the training negatives, 34% of the test ones),
                             so the test is not drawn as the training set is.

Input: [CLS] first (cut to (seq_len - 3) // 2 words) [SEP] second (cut likewise) [SEP], padded,
the label on [CLS] -- BERT's sentence-pair format. Splits are by synset: the synsets (nouns for
`similarity`; those with a usable example for `definition`) are shuffled with split_seed and the
last val_fraction held out, and both members of a pair come from one split, so no test
definition or example is trained on (a test synset whose definition text is also a training
synset's is dropped).

How a similarity pair is drawn (the label is computed afterwards, exactly): the anchor is a
random synset of the split, a target distance d uniform over a random grade's range, and the
partner the end of a walk d' steps up random hypernyms (d' uniform in 1..d) and d - d' down
random hyponyms; a walk that ends outside the split is retried from a fresh anchor (up to
RETRIES times; then a random synset of the split). The
walk only spreads the grades; the label is the path distance of the pair.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, TaskConfig
from reasonlab.tasks.sentences import SentenceTask, cls_batch
from reasonlab.tasks.corpora import WORDNET_DIR
from reasonlab.tasks.mlm import word_vocab
from reasonlab.tasks.wordnet_graph import Synset, path_distance, synsets
from reasonlab.tasks.words import CLS_ID, MASK_ID, PAD_ID, SEP_ID

GRADES = ((7, 99), (5, 6), (3, 4), (2, 2), (1, 1))
"""Path distance range of grade 0..4 (grade 4 = most similar)."""
RETRIES = 200


def grade(distance: int) -> int:
    return next(g for g, (lo, hi) in enumerate(GRADES) if lo <= distance <= hi)


class GlossPairConfig(TaskConfig):
    """A WordNet sentence-pair task (graded similarity, or definition match)."""

    name: Literal["gloss_pair"] = "gloss_pair"
    pair: Literal["similarity", "definition"] = "similarity"
    """similarity: 5 grades of path similarity of two definitions (STS-B-like); definition:
    does this definition define the blanked word of this example (MRPC / QNLI-like)."""
    words: int = Field(2000, gt=0)
    """Word types kept in the vocabulary (as the masked-LM task's `words`)."""
    seq_len: int = Field(40, ge=7)
    """Tokens per pair, [CLS] and both [SEP] included."""
    negatives: Literal["random", "same-word"] = "random"
    """definition only: where a "no" pair's definition comes from (module doc)."""
    val_fraction: float = Field(0.2, gt=0, lt=1)
    """Fraction of the synsets held out for testing."""
    split_seed: int = 0
    path: str | None = None
    """Folder of the WordNet data files; None = /usr/share/wordnet."""


def blank(example: str, lemmas: tuple[str, ...]) -> tuple[str, str] | None:
    """(text before, text after) the first whole-word occurrence of one of the lemmas (longest
    first), case-insensitive; None if none occurs."""
    for lemma in sorted(lemmas, key=len, reverse=True):
        m = re.search(rf"(?<![\w-]){re.escape(lemma)}(?![\w-])", example, flags=re.I)
        if m:
            return example[: m.start()], example[m.end():]
    return None


@functools.lru_cache(maxsize=4)
def pair_split(folder: str, pair: str, val_fraction: float, seed: int) -> dict[str, list[str]]:
    """{"train", "test": synset keys}: the task's synsets split by synset (see module doc)."""
    graph = synsets(folder)
    if pair == "similarity":
        keys = sorted(k for k in graph if k[0] == "n")
    else:
        keys = sorted(k for k, s in graph.items()
                      if any(blank(e, s.lemmas) for e in s.examples))
    np.random.default_rng(seed).shuffle(keys)
    n_val = max(1, int(len(keys) * val_fraction))
    train, test = keys[:-n_val], keys[-n_val:]
    seen = {graph[k].definition for k in train}
    return {"train": train, "test": [k for k in test if graph[k].definition not in seen]}


@TASKS.register("gloss_pair")
class GlossPairTask(SentenceTask):
    """Two WordNet sentences in, their similarity grade or match out (on [CLS])."""

    held_out_revised = "test"  # held-out rows equal to training rows now left out

    Config = GlossPairConfig

    def __init__(self, config: GlossPairConfig):
        self.config = config
        self.folder = config.path or WORDNET_DIR
        self.words = word_vocab(self.folder, config.words)
        self.vocab = self.words.vocab
        self.graph = synsets(self.folder)
        self._up: dict[str, dict[str, int]] = {}

    @property
    def n_classes(self) -> int:
        return len(GRADES) if self.config.pair == "similarity" else 2

    def label_name(self, label: int) -> str:
        return str(label)  # the grade (0-4) or match (0 / 1) itself

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    def keys(self, split: str) -> list[str]:
        c = self.config
        return pair_split(self.folder, c.pair, c.val_fraction, c.split_seed)[split]

    # ---------------------------------------------------------------- similarity pairs
    def walk(self, rng: np.random.Generator, a: str, d: int, members: set[str]) -> str | None:
        up = int(rng.integers(1, d + 1))
        k = a
        for step in range(d):
            nbrs = self.graph[k].hypernyms if step < up else self.graph[k].hyponyms
            if not nbrs:
                return None
            k = nbrs[int(rng.integers(len(nbrs)))]
        return k if k in members and k != a else None

    def similarity_pair(self, rng: np.random.Generator, keys: list[str], members: set[str]
                        ) -> tuple[str, str, int]:
        lo, hi = GRADES[int(rng.integers(len(GRADES)))]
        for _ in range(RETRIES):  # a fresh anchor each try, so the grades stay spread
            a = keys[int(rng.integers(len(keys)))]
            b = self.walk(rng, a, int(rng.integers(lo, min(hi, 12) + 1)), members)
            if b is not None:
                return a, b, path_distance(self.graph, a, b, self._up)
        b = a
        while b == a:
            b = keys[int(rng.integers(len(keys)))]
        return a, b, path_distance(self.graph, a, b, self._up)

    def distance(self, a: str, b: str) -> int:
        return path_distance(self.graph, a, b, self._up)

    # ---------------------------------------------------------------- definition pairs
    def definition_pair(self, rng: np.random.Generator, split: str
                        ) -> tuple[str, int, str, int]:
        """(synset whose example is shown, example index, synset whose definition is shown,
        label), all from `split`."""
        keys = self.keys(split)
        a = keys[int(rng.integers(len(keys)))]
        s = self.graph[a]
        usable = [i for i, e in enumerate(s.examples) if blank(e, s.lemmas)]
        i = usable[int(rng.integers(len(usable)))]
        if rng.random() < 0.5:
            return a, i, a, 1
        if self.config.negatives == "same-word":
            by_lemma = self._by_lemma[split]
            pool = [k for lem in s.lemmas for k in by_lemma.get(lem, ()) if k != a] or keys
        else:  # each split holds hundreds of synsets of every part of speech it has
            pool = self._pos_pools[split][a[0]]
        b = a
        while b == a:
            b = pool[int(rng.integers(len(pool)))]
        return a, i, b, 0

    @functools.cached_property
    def _pos_pools(self) -> dict[str, dict[str, list[str]]]:
        """split -> part of speech (the key's first letter) -> the split's synsets."""
        out: dict[str, dict[str, list[str]]] = {}
        for split in ("train", "test"):
            for k in self.keys(split):
                out.setdefault(split, {}).setdefault(k[0], []).append(k)
        return out

    @functools.cached_property
    def _by_lemma(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for split in ("train", "test"):
            idx: dict[str, list[str]] = {}
            for k in self.keys(split):
                for lem in self.graph[k].lemmas:
                    idx.setdefault(lem, []).append(k)
            out[split] = idx
        return out

    # ---------------------------------------------------------------- encoding
    def encode_pair(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        L, T = (self.config.seq_len - 3) // 2, self.config.seq_len
        ids = [CLS_ID, *first[:L], SEP_ID, *second[:L], SEP_ID]
        return np.asarray(ids + [PAD_ID] * (T - len(ids)), dtype=np.int64)

    def encode_example(self, s: Synset, i: int) -> np.ndarray:
        before, after = blank(s.examples[i], s.lemmas)
        return np.concatenate([self.words.encode(before), [MASK_ID], self.words.encode(after)])

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        keys = self.keys(split)
        if not keys:
            raise ConfigError(f"the {split} split of gloss_pair is empty; raise val_fraction")
        tokens = np.empty((n, self.config.seq_len), dtype=np.int64)
        labels = np.empty(n, dtype=np.int64)
        dist = np.zeros(n, dtype=np.int64)
        members = set(keys)
        for r in range(n):
            if self.config.pair == "similarity":
                a, b, d = self.similarity_pair(rng, keys, members)
                tokens[r] = self.encode_pair(self.words.encode(self.graph[a].definition),
                                             self.words.encode(self.graph[b].definition))
                labels[r], dist[r] = grade(d), d
            else:
                a, i, b, labels[r] = self.definition_pair(rng, split)
                tokens[r] = self.encode_pair(self.encode_example(self.graph[a], i),
                                             self.words.encode(self.graph[b].definition))
        meta = {"distance": torch.from_numpy(dist[:, None])} \
            if self.config.pair == "similarity" else {}
        return cls_batch(tokens, labels, meta)

    def solve(self, text: str) -> dict[str, str]:
        """From the text alone: the synsets whose (cut, encoded) definitions / examples read as
        the two sentences, then the grade by a naive path search (`naive_distance`, every
        hypernym path to the root enumerated) or the match; {} when the text is ambiguous."""
        parts = text.removesuffix(" [SEP]").split(" [SEP] ")
        if len(parts) != 2 or not parts[0].startswith("[CLS] "):
            raise ParseError("expected '[CLS] first [SEP] second [SEP]'")
        first, second = parts[0].removeprefix("[CLS] "), parts[1]
        defs = _definition_index(self.folder, self.config.words, self.config.seq_len)
        if self.config.pair == "similarity":
            grades = {grade(naive_distance(self.graph, a, b))
                      for a in defs.get(first, ()) for b in defs.get(second, ())}
            return {"0": str(grades.pop())} if len(grades) == 1 else {}
        shown = _example_index(self.folder, self.config.words, self.config.seq_len).get(first,
                                                                                        set())
        answers = {int(k in defs.get(second, ())) for k in shown}
        return {"0": str(answers.pop())} if len(answers) == 1 else {}


def naive_distance(graph: dict[str, Synset], a: str, b: str) -> int:
    """Reference for path_distance: every hypernym path from each synset to a root, by
    recursion; for every node on a path of both, its position on each; the least sum."""
    def paths(k: str) -> list[list[str]]:
        hs = graph[k].hypernyms
        return [[k]] if not hs else [[k, *p] for h in hs for p in paths(h)]

    best = None
    for p in paths(a):
        for q in paths(b):
            for i, x in enumerate(p):
                if x in q:
                    d = i + q.index(x)
                    best = d if best is None or d < best else best
    return 99 if best is None else best


def _cut(ids: np.ndarray, vocab, seq_len: int) -> str:
    return " ".join(vocab.vocab.decode(ids[: (seq_len - 3) // 2]))


@functools.lru_cache(maxsize=2)
def _definition_index(folder: str, words: int, seq_len: int) -> dict[str, set[str]]:
    vocab, out = word_vocab(folder, words), {}
    for k, s in synsets(folder).items():
        out.setdefault(_cut(vocab.encode(s.definition), vocab, seq_len), set()).add(k)
    return out


@functools.lru_cache(maxsize=2)
def _example_index(folder: str, words: int, seq_len: int) -> dict[str, set[str]]:
    vocab, out = word_vocab(folder, words), {}
    for k, s in synsets(folder).items():
        for e in s.examples:
            cut = blank(e, s.lemmas)
            if cut:
                ids = np.concatenate([vocab.encode(cut[0]), [MASK_ID], vocab.encode(cut[1])])
                out.setdefault(_cut(ids.astype(np.int64), vocab, seq_len), set()).add(k)
    return out


