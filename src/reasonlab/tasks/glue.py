"""GLUE (Wang et al. 2019): the columns of Chiang & Lee's seed table (docs/papers.md §4), read
from a local Hugging Face datasets folder of `nyu-mll/glue` (Parquet or Arrow, as
`cola/train-00000-of-00001.parquet`; tasks/hf_data.py), never downloaded.

Each example is encoded with the lab's word vocabulary (tasks/words.py), the same ids as the
masked-LM pretraining corpora, so a pretrained encoder's embeddings carry over, exactly as the
WordNet stand-ins (tasks/glosses.py, tasks/gloss_pairs.py) are: [CLS] first [SEP] (second
[SEP]), cut to seq_len (each sentence of a pair to its share), padded; the label sits on
[CLS]. Splits: GLUE's train, and its validation split as the test set (the test split's
labels are hidden; Chiang & Lee, as BERT, report the validation sets).

Labels are the data's, so there is no text solver (as for images). STS-B's similarity score
(0-5) is learned as 5 grades (min(4, floor(score))), like the WordNet similarity stand-in;
its score x 100 rides along as `meta["score"]` for a Spearman correlation.
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, TaskConfig
from reasonlab.tasks.sentences import SentenceTask, cls_batch
from reasonlab.tasks.corpora import WORDNET_DIR
from reasonlab.tasks.mlm import word_vocab
from reasonlab.tasks.words import CLS_ID, PAD_ID, SEP_ID

GlueName = Literal["cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte"]
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "cola": (("sentence",), ("unacceptable", "acceptable"), "validation"),
    "sst2": (("sentence",), ("negative", "positive"), "validation"),
    "mrpc": (("sentence1", "sentence2"), ("not equivalent", "equivalent"), "validation"),
    "qqp": (("question1", "question2"), ("not duplicate", "duplicate"), "validation"),
    "stsb": (("sentence1", "sentence2"), ("0-1", "1-2", "2-3", "3-4", "4-5"), "validation"),
    "mnli": (("premise", "hypothesis"), ("entailment", "neutral", "contradiction"),
             "validation_matched"),
    "qnli": (("question", "sentence"), ("entailment", "not entailment"), "validation"),
    "rte": (("sentence1", "sentence2"), ("entailment", "not entailment"), "validation"),
}
"""GLUE task -> (its text columns, class names, the split used as test)."""
SIZES = {"cola": (8551, 1043), "sst2": (67_349, 872), "mrpc": (3668, 408),
         "qqp": (363_846, 40_430), "stsb": (5749, 1500), "mnli": (392_702, 9815),
         "qnli": (104_743, 5463), "rte": (2490, 277)}
"""GLUE task -> (examples of its train split, of the split used as test), as nyu-mll/glue holds
them (every row labelled): the paper scale trains on the whole train split and scores the whole
validation split, as GLUE reports (studies/artificial/_support/paper_table.py)."""
SEED_COLUMN = {"stsb": "STS-B", "qnli": "QNLI", "qqp": "QQP", "cola": "CoLA", "sst2": "SST-2",
               "mnli": "MNLI", "mrpc": "MRPC", "rte": "RTE"}
"""GLUE task -> its column in the seed's table (studies/artificial/_support/paper_table.csv)."""
HUB = ("nyu-mll/glue", "glue")
HOW = ("on a machine with internet: `hf download nyu-mll/glue --repo-type "
       "dataset`, then copy the cache folder here, or set task.path to a folder holding "
       "<task>/<split>-*.parquet")


class GlueConfig(TaskConfig):
    """One GLUE task, encoded with the lab's word vocabulary."""

    name: Literal["glue"] = "glue"
    task: GlueName = "sst2"
    """Which GLUE task."""
    words: int = Field(2000, gt=0)
    """Word types kept in the vocabulary (as the masked-LM task's `words`)."""
    seq_len: int = Field(64, ge=5)
    """Tokens per example, [CLS] and [SEP]s included; longer sentences are cut."""
    path: str | None = None
    """Folder of the GLUE Parquet / Arrow files; None: nyu-mll/glue in the Hub cache."""
    wordnet: str | None = None
    """Folder of the WordNet files the word vocabulary is counted on; None: /usr/share/wordnet."""


@functools.lru_cache(maxsize=8)
def glue_split(path: str | None, task: str, split: str) -> tuple[list[tuple[str, ...]],
                                                                 np.ndarray]:
    """(texts per example, labels as read) of one split; rows with a hidden label dropped."""
    from reasonlab.tasks.hf_data import dataset_folder, read_split

    folder = dataset_folder(path, HUB, f"GLUE {task}", HOW)
    cols, _, _ = COLUMNS[task]
    data = read_split(folder, split, [*cols, "label"], f"GLUE {task}", config=task)
    labels = np.asarray(data["label"], dtype=np.float64)
    keep = labels >= 0
    texts = list(zip(*(data[c] for c in cols), strict=True))
    return [t for t, k in zip(texts, keep, strict=True) if k], labels[keep]


@TASKS.register("glue")
class GlueTask(SentenceTask):
    """A GLUE example in, its label out (on [CLS])."""

    Config = GlueConfig

    def __init__(self, config: GlueConfig):
        self.config = config
        self.words = word_vocab(config.wordnet or WORDNET_DIR, config.words)
        self.vocab = self.words.vocab

    @property
    def classes(self) -> tuple[str, ...]:
        return COLUMNS[self.config.task][1]

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def class_names(self) -> tuple[str, ...]:
        """GLUE's label names (STS-B: its five grades), as `render` writes them."""
        return self.classes

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    @classmethod
    def data_source(cls, config: GlueConfig) -> tuple[bool, str]:
        """(found, where) of the GLUE files (kit/assets.py): the folder, and in it the task's
        train and test splits, so a folder lacking one task is named before anything trains."""
        from reasonlab.errors import AssetError
        from reasonlab.tasks.hf_data import dataset_folder, split_files

        try:
            folder = dataset_folder(config.path, HUB, "GLUE", HOW)
        except AssetError as e:
            return False, str(e)
        task = folder / config.task  # without it, split_files would find another task's
        for split in ("train", COLUMNS[config.task][2]):
            if not task.is_dir() or not split_files(folder, split, config.task):
                return False, (f"GLUE {config.task}: no {split} split (Parquet or Arrow) under "
                               f"{task}; {HOW}")
        return True, str(folder)

    def overlap(self) -> str | None:
        """The benchmark's own splits are kept as published: GLUE's validation sets (our test
        split) hold some sentences of its training sets, and the scores the papers report
        (BERT's, Chiang & Lee's) are on those sets whole (tasks/disjoint.py leaves them in)."""
        return ("GLUE's published train and validation splits (Wang et al. 2019), kept whole as "
                "BERT and Chiang & Lee report on them: some validation rows repeat training ones")

    def documents(self, split: str) -> tuple[list[tuple[str, ...]], np.ndarray]:
        c = self.config
        return glue_split(c.path, c.task, "train" if split == "train" else COLUMNS[c.task][2])

    def labels(self, split: str) -> np.ndarray:
        """The class of every example of the split (STS-B: its grade)."""
        raw = self.documents(split)[1]
        return (np.minimum(4, np.floor(raw)) if self.config.task == "stsb" else raw
                ).astype(np.int64)

    def majority(self, split: str = "test") -> float:
        """Accuracy of always answering the training split's most frequent class."""
        top = np.bincount(self.labels("train")).argmax()
        return float((self.labels(split) == top).mean())

    def encode(self, texts: tuple[str, ...]) -> np.ndarray:
        """[CLS] a [SEP] (b [SEP]), each sentence cut to its share of seq_len, padded."""
        T = self.config.seq_len
        room = T - 1 - len(texts)
        ids = [self.words.encode(t) for t in texts]
        share = [room] if len(ids) == 1 else [room - room // 2, room // 2]
        if len(ids) == 2:  # a short first sentence leaves its room to the second
            share = [min(len(ids[0]), share[0]), room - min(len(ids[0]), share[0])]
        out = [CLS_ID]
        for part, n in zip(ids, share, strict=True):
            out += [*part[:n], SEP_ID]
        row = np.full(T, PAD_ID, dtype=np.int64)
        row[: len(out)] = out
        return row

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Batch:
        """n distinct examples of the split (train; validation as test)."""
        texts, raw = self.documents(split)
        if n > len(texts):
            raise ConfigError(f"GLUE {self.config.task}'s {split} split holds {len(texts)} "
                              f"examples; ask for at most that many (n_train / n_test), not {n}")
        idx = rng.choice(len(texts), size=n, replace=False)
        tokens = np.stack([self.encode(texts[i]) for i in idx])
        stsb = self.config.task == "stsb"
        meta = {"score": torch.from_numpy(np.round(100 * raw[idx]).astype(np.int64)[:, None])
                } if stsb else {}
        return cls_batch(tokens, self.labels(split)[idx], meta)

    def solve(self, text: str) -> dict[str, str]:
        raise ParseError("glue: the label comes from the data set; a GLUE task has no text "
                         "solver")

