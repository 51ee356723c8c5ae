"""Character-level language modelling on English text that arrives offline (docs/design.md §9
Offline assets): the stand-in for GPT-2 on WikiText of Boix-Adsera et al. 2024, §6 and Fig. 4
(the symbols-language-model study).

Source "wordnet": the glosses of WordNet 3.0 (Debian package `wordnet-base`, installed by
scripts/setup.sh; about 1.5M words in /usr/share/wordnet/data.{noun,verb,adj,adv}). Each
gloss is one line; the distinct lines are shuffled with a fixed seed and the last
`val_fraction` of them is held out, so no validation gloss appears in training.

An example is a window of seq_len + 1 characters: tokens = the first seq_len, and every
position is labelled with the next character (label_pos = 0..seq_len-1), the usual causal LM
objective; train it with a causal model (ModelConfig.causal). Perplexity = exp(loss).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from reasonlab.errors import AssetError, ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab

WORDNET_DIR = "/usr/share/wordnet"
WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")


class CorpusLMConfig(TaskConfig):
    """Character-level LM on an offline English corpus."""

    name: Literal["corpus_lm"] = "corpus_lm"
    source: Literal["wordnet", "wikitext103"] = "wordnet"
    """Corpus: WordNet glosses (Debian wordnet-base), or WikiText-103 (Merity et al. 2017; the
    abstract-symbols paper's §6 corpus) from the user's files, its train and validation
    splits (val_fraction and split_seed then unused)."""
    path: str | None = None
    """Folder of the corpus files; None = /usr/share/wordnet, or for WikiText-103 the Hub
    cache (Salesforce/wikitext). A WikiText-103 folder holds wiki.train.raw and wiki.valid.raw
    (the raw release) or the Parquet / Arrow files of its Hugging Face dataset."""
    seq_len: int = Field(64, gt=0)
    """Characters per example (context length)."""
    val_fraction: float = Field(0.05, gt=0, lt=1)
    """Fraction of the glosses held out for validation."""
    split_seed: int = 0
    """Seed of the gloss shuffle that makes the train / validation split."""


@functools.lru_cache(maxsize=4)
def wordnet_glosses(folder: str) -> tuple[str, ...]:
    """The gloss of every WordNet synset (the text after `| ` in data.* lines)."""
    paths = [Path(folder) / f for f in WORDNET_FILES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise AssetError(f"task.source='wordnet': {missing[0]} not found; install the Debian "
                          "package wordnet-base (`apt-get install wordnet-base`, which "
                          "scripts/setup.sh does) or set task.path to a folder holding "
                          f"{', '.join(WORDNET_FILES)}")
    out = []
    for p in paths:
        for line in p.read_text(encoding="latin-1").splitlines():
            if line.startswith("  ") or "| " not in line:  # licence header
                continue
            out.append(line.split("| ", 1)[1].strip())
    return tuple(out)


@functools.lru_cache(maxsize=4)
def gloss_split(folder: str, val_fraction: float, seed: int) -> dict[str, list[str]]:
    """{"train", "test": glosses}: the distinct glosses shuffled with `seed`, the last
    `val_fraction` of them held out (so no validation gloss appears in training)."""
    lines = list(dict.fromkeys(wordnet_glosses(folder)))
    np.random.default_rng(seed).shuffle(lines)
    n_val = max(1, int(len(lines) * val_fraction))
    return {"train": lines[:-n_val], "test": lines[-n_val:]}


@functools.lru_cache(maxsize=4)
def encoded_split(folder: str, val_fraction: float, seed: int
                  ) -> tuple[tuple[str, ...], dict[str, np.ndarray]]:
    """(characters, {"train", "test": ids}) with id 0 reserved for padding; cached because
    configs, data and masks each build the task."""
    lines = gloss_split(folder, val_fraction, seed)
    texts = {"train": "\n".join(lines["train"]) + "\n", "test": "\n".join(lines["test"])}
    chars = tuple(sorted(set(texts["train"]) | set(texts["test"])))
    lut = np.zeros(256, dtype=np.int64)
    for i, ch in enumerate(chars, start=1):
        lut[ord(ch)] = i
    ids = {s: lut[np.frombuffer(t.encode("latin-1"), dtype=np.uint8)] for s, t in texts.items()}
    return chars, ids


WIKITEXT_HUB = ("Salesforce/wikitext", "wikitext")
WIKITEXT_CONFIG = "wikitext-103-raw-v1"
WIKITEXT_HOW = ("put wiki.train.raw and wiki.valid.raw (wikitext-103-raw-v1.zip, unpacked) in a "
                "folder and set task.path to it, or the Hugging Face dataset Salesforce/wikitext "
                "(its wikitext-103-raw-v1 files) in the local cache")


def wikitext_texts(path: str | None) -> dict[str, str]:
    """{"train", "test": text} of WikiText-103: the raw release's files, or the Hugging Face
    dataset's rows (one line each, as the raw files hold them); test = its validation split.
    Modelled byte by byte (UTF-8): WikiText has thousands of distinct characters."""
    from reasonlab.tasks.hf_data import dataset_folder, has_hf_files, read_split

    folder = dataset_folder(path, WIKITEXT_HUB, "WikiText-103", WIKITEXT_HOW)
    raw = {"train": folder / "wiki.train.raw", "test": folder / "wiki.valid.raw"}
    if all(f.is_file() for f in raw.values()):
        return {s: f.read_text(encoding="utf-8") for s, f in raw.items()}
    if not has_hf_files(folder):
        raise AssetError(f"WikiText-103: {folder} holds neither wiki.train.raw / wiki.valid.raw "
                         f"nor Parquet / Arrow files; {WIKITEXT_HOW}")
    return {s: "".join(read_split(folder, split, ["text"], "WikiText-103",
                                  config=WIKITEXT_CONFIG)["text"])
            for s, split in (("train", "train"), ("test", "validation"))}


BYTE_TOKENS = tuple(chr(b) if 32 <= b < 127 else f"<0x{b:02X}>" for b in range(256))
"""WikiText-103's vocabulary: its UTF-8 bytes (printable ASCII as itself), fixed, so a run's
config builds without the corpus at hand."""


@functools.lru_cache(maxsize=2)
def encoded_wikitext(path: str | None) -> dict[str, np.ndarray]:
    """{"train", "test": ids} of WikiText-103: each UTF-8 byte b is id b + 1 (0 pads)."""
    return {s: np.frombuffer(t.encode("utf-8"), dtype=np.uint8).astype(np.int16) + 1
            for s, t in wikitext_texts(path).items()}


@dataclass(frozen=True)
class Source:
    """A corpus: its characters (known without the text when `fixed`), and its ids."""

    chars: Callable[[CorpusLMConfig], tuple[str, ...]]
    ids: Callable[[CorpusLMConfig], dict[str, np.ndarray]]
    fixed: bool


SOURCES = {
    "wordnet": Source(lambda c: encoded_split(c.path or WORDNET_DIR, c.val_fraction,
                                              c.split_seed)[0],
                      lambda c: encoded_split(c.path or WORDNET_DIR, c.val_fraction,
                                              c.split_seed)[1], fixed=False),
    "wikitext103": Source(lambda c: BYTE_TOKENS, lambda c: encoded_wikitext(c.path), fixed=True),
}
"""CorpusLMConfig.source -> its Source. WordNet's characters are those of its glosses (read at
once: a package every machine has); WikiText-103's are bytes, its text read at the first draw
(a study's configs build, and `reasonlab studies` plans, without the corpus)."""


@TASKS.register("corpus_lm")
class CorpusLMTask(Task):
    """Next-character prediction on held-out English text."""

    held_out_revised = "val"  # held-out rows equal to training rows now left out

    Config = CorpusLMConfig

    def __init__(self, config: CorpusLMConfig):
        self.config = config
        source = SOURCES[config.source]
        self.vocab = Vocab((Vocab.PAD, *source.chars(config)))
        self._loaded: dict[str, np.ndarray] | None = None
        if not source.fixed:
            self._ids  # noqa: B018  (read now: a too-long seq_len fails when the config builds)

    @property
    def _ids(self) -> dict[str, np.ndarray]:
        if self._loaded is None:
            ids = SOURCES[self.config.source].ids(self.config)
            for s, x in ids.items():
                if len(x) <= self.config.seq_len + 1:
                    raise ConfigError(f"task.seq_len={self.config.seq_len} is longer than the "
                                      f"{s} text")
            self._loaded = ids
        return self._loaded

    @property
    def n_classes(self) -> int:
        return len(self.vocab)

    def class_names(self) -> tuple[str, ...]:
        return tuple(self.vocab.tokens)  # a label is the id of the next character

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    @classmethod
    def data_source(cls, config: CorpusLMConfig) -> tuple[bool, str]:
        """(found, where) of the corpus files (kit/assets.py)."""
        from reasonlab.tasks.hf_data import dataset_folder

        try:
            if config.source == "wikitext103":
                return True, str(dataset_folder(config.path, WIKITEXT_HUB, "WikiText-103",
                                                WIKITEXT_HOW))
            wordnet_glosses(config.path or WORDNET_DIR)
            return True, config.path or WORDNET_DIR
        except AssetError as e:
            return False, str(e)

    def n_chars(self, split: str) -> int:
        return len(self._ids[split])

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n random windows of the split's text."""
        T = self.config.seq_len
        ids = self._ids[split]
        start = rng.integers(0, len(ids) - T - 1, size=n)  # [n]
        window = ids[start[:, None] + np.arange(T + 1)].astype(np.int64)  # [n, T + 1]
        return Batch(tokens=torch.from_numpy(window[:, :-1].copy()),
                     label_pos=torch.arange(T).expand(n, T).clone(),
                     labels=torch.from_numpy(window[:, 1:].copy()),
                     loss_mask=torch.ones(n, T, dtype=torch.bool))

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """Training windows from the training glosses, test windows from the held-out ones."""
        return self.sample(rng, n_train, "train"), self.sample(rng, n_test, "test")

    def render(self, batch: Batch, i: int) -> str:
        return "".join(self.vocab.decode(batch.tokens[i]))

    def parse(self, text: str) -> list[int]:
        try:
            return self.vocab.ids(list(text))
        except KeyError as e:
            raise ParseError(f"character {e.args[0]!r} is not in the corpus vocabulary") from None

    def solve(self, text: str) -> dict[str, str]:
        """The answers are in the text: each position's label is the next character."""
        return {"next": text[1:]}

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        text = self.render(batch, i)
        nxt = self.vocab.tokens[int(batch.labels[i, -1])]
        return {"text": text, "labels": {"next": text[1:] + nxt}}
