"""English classification of WordNet glosses: downstream tasks for artificial pretraining
(Chiang & Lee 2020, "Pre-Training a Language Model Without Human Language", fine-tune on GLUE,
which does not reach us offline; docs/papers.md §4).

Every synset of WordNet 3.0 (Debian `wordnet-base`, tasks/corpora.py) is one example: its gloss,
encoded with the word vocabulary of tasks/words.py (the same ids as the masked-LM corpora, so a
pretrained encoder's embeddings carry over), labelled by one of

    supersense  the synset's lexicographer file (the second field of its line in data.*, two
                digits): 45 classes, noun.person, verb.motion, adj.all, ... (LEXNAMES)
    pos         its part of speech (the third field): noun, verb, adjective (satellites `s`
                counted as adjectives), adverb

A sentence is [CLS] + the gloss's first seq_len - 2 words + [SEP], padded; the label sits on
[CLS]. Splits are by gloss: the distinct gloss texts are shuffled with split_seed and the last
val_fraction held out, so no test gloss is seen in training (a text shared by synsets with
different labels is left out: its label is not a function of the text). Examples are drawn
without replacement from a split.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import TASKS, Batch, TaskConfig
from reasonlab.tasks.sentences import SentenceTask, cls_batch
from reasonlab.tasks.corpora import WORDNET_DIR, WORDNET_FILES, wordnet_glosses
from reasonlab.tasks.mlm import word_vocab
from reasonlab.tasks.words import CLS_ID, PAD_ID, SEP_ID

LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl")
"""WordNet's lexicographer files by number (lexnames(5WN); Debian ships no lexnames file)."""
POS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}
CLASSES = {"supersense": LEXNAMES, "pos": ("noun", "verb", "adjective", "adverb")}


class GlossClassConfig(TaskConfig):
    """Classify a WordNet gloss by its synset's supersense or part of speech."""

    name: Literal["gloss_class"] = "gloss_class"
    label: Literal["supersense", "pos"] = "supersense"
    """What to predict: the lexicographer file (45 classes) or the part of speech (4)."""
    words: int = Field(2000, gt=0)
    """Word types kept in the vocabulary (as the masked-LM task's `words`)."""
    seq_len: int = Field(32, ge=3)
    """Tokens per sentence, [CLS] and [SEP] included; longer glosses are cut."""
    val_fraction: float = Field(0.1, gt=0, lt=1)
    """Fraction of the distinct glosses held out for testing."""
    split_seed: int = 0
    """Seed of the gloss shuffle that makes the split."""
    path: str | None = None
    """Folder of the WordNet data files; None = /usr/share/wordnet."""


def synset_labels(folder: str) -> list[tuple[str, str, str]]:
    """(gloss, lexicographer file, part of speech) of every synset, in file order."""
    wordnet_glosses(folder)  # the missing-package error, with the install hint
    out = []
    for f in WORDNET_FILES:
        for line in (Path(folder) / f).read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "| " not in line:
                continue
            head, gloss = line.split("| ", 1)
            fields = head.split(" ")
            out.append((gloss.strip(), LEXNAMES[int(fields[1])], POS[fields[2]]))
    return out


@functools.lru_cache(maxsize=4)
def labelled_split(folder: str, label: str, val_fraction: float, seed: int
                   ) -> dict[str, tuple[list[str], np.ndarray]]:
    """{"train", "test": (glosses, class ids)}: distinct texts with one label, split by text."""
    col = 1 if label == "supersense" else 2
    names = {c: i for i, c in enumerate(CLASSES[label])}
    labels: dict[str, set[int]] = {}
    for row in synset_labels(folder):
        labels.setdefault(row[0], set()).add(names[row[col]])
    texts = sorted(t for t, ls in labels.items() if len(ls) == 1)
    np.random.default_rng(seed).shuffle(texts)
    n_val = max(1, int(len(texts) * val_fraction))
    parts = {"train": texts[:-n_val], "test": texts[-n_val:]}
    return {s: (ts, np.asarray([next(iter(labels[t])) for t in ts])) for s, ts in parts.items()}


@TASKS.register("gloss_class")
class GlossClassTask(SentenceTask):
    """One gloss in, its synset's supersense or part of speech out (on [CLS])."""

    held_out_revised = "test"  # held-out rows equal to training rows now left out

    Config = GlossClassConfig

    def __init__(self, config: GlossClassConfig):
        self.config = config
        self.words = word_vocab(config.path or WORDNET_DIR, config.words)
        self.vocab = self.words.vocab

    @property
    def n_classes(self) -> int:
        return len(CLASSES[self.config.label])

    def class_names(self) -> tuple[str, ...]:
        return tuple(self.classes)

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    @property
    def classes(self) -> tuple[str, ...]:
        return CLASSES[self.config.label]

    def documents(self, split: str) -> tuple[list[str], np.ndarray]:
        c = self.config
        return labelled_split(c.path or WORDNET_DIR, c.label, c.val_fraction, c.split_seed)[split]

    def majority(self, split: str = "test") -> float:
        """Accuracy of always answering the training split's most frequent class."""
        top = np.bincount(self.documents("train")[1]).argmax()
        return float((self.documents(split)[1] == top).mean())

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n distinct glosses of the split."""
        texts, labels = self.documents(split)
        if n > len(texts):
            raise ConfigError(f"the {split} split holds {len(texts)} glosses; ask for at most "
                              f"that many (n_train / n_test), not {n}")
        T = self.config.seq_len
        docs = rng.choice(len(texts), size=n, replace=False)  # [n]
        tokens = np.full((n, T), PAD_ID, dtype=np.int64)
        for r, d in enumerate(docs):
            ids = self.words.encode(texts[d])[: T - 2]
            tokens[r, : len(ids) + 2] = [CLS_ID, *ids, SEP_ID]
        return cls_batch(tokens, labels[docs])

    def solve(self, text: str) -> dict[str, str]:
        """Independent of the split: the labels of every synset line of the raw files whose
        gloss reads as `text` (a rendered sentence, label left out), from the line's fixed
        columns (offset: 8 digits, then the 2-digit lexicographer file and the type letter);
        {"0": label}, or {} when the lines disagree or none matches."""
        found = _rendered_index(self.config.path or WORDNET_DIR, self.config.words,
                                self.config.seq_len).get(text, set())
        col = 0 if self.config.label == "supersense" else 1
        answers = {f[col] for f in found}
        return {"0": answers.pop()} if len(answers) == 1 else {}


@functools.lru_cache(maxsize=2)
def _rendered_index(folder: str, words: int, seq_len: int) -> dict[str, set[tuple[str, str]]]:
    vocab = word_vocab(folder, words)
    index: dict[str, set[tuple[str, str]]] = {}
    for f in WORDNET_FILES:
        for line in (Path(folder) / f).read_text(encoding="latin-1").splitlines():
            if not line[:8].isdigit():
                continue
            ids = vocab.encode(line[line.index("| ") + 2 :])[: seq_len - 2]
            text = " ".join(["[CLS]", *vocab.vocab.decode(ids), "[SEP]"])
            index.setdefault(text, set()).add((LEXNAMES[int(line[9:11])], POS[line[12]]))
    return index
