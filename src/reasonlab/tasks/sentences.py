"""What the sentence-classification tasks share: the WordNet glosses (glosses.py), gloss pairs
(gloss_pairs.py) and GLUE (glue.py) each read one sentence or a pair, encoded with the lab's word
vocabulary, and put one label on [CLS] at position 0, as BERT's sequence classification does
(Devlin et al. 2019, §3.1: "the final hidden state corresponding to this token is used as the
aggregate sequence representation for classification tasks"). Their batches, splits and text
are built here once."""

from __future__ import annotations

import numpy as np
import torch

from reasonlab.tasks.base import Batch, Task
from reasonlab.tasks.words import PAD_ID


def cls_batch(tokens: np.ndarray, labels: np.ndarray,
              meta: dict[str, torch.Tensor] | None = None) -> Batch:
    """tokens [n, T] (padded with PAD_ID), one label per row [n], read on [CLS] (position 0)."""
    n = len(tokens)
    return Batch(tokens=torch.from_numpy(tokens),
                 label_pos=torch.zeros(n, 1, dtype=torch.long),
                 labels=torch.from_numpy(labels.astype(np.int64)[:, None]),
                 loss_mask=torch.ones(n, 1, dtype=torch.bool),
                 pad_mask=torch.from_numpy(tokens != PAD_ID), meta=meta or {})


class SentenceTask(Task):
    """A task drawn from a training split and a held-out test split by `sample(rng, n, split)`,
    shown as its words and the label's name (`label_name`)."""

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        return self.sample(rng, n_train, "train"), self.sample(rng, n_test, "test")

    def label_name(self, label: int) -> str:
        return self.classes[label]

    def render(self, batch: Batch, i: int) -> str:
        words = [w for w in self.vocab.decode(batch.tokens[i]) if w != "[PAD]"]
        return f"{' '.join(words)} -> {self.label_name(int(batch.labels[i, 0]))}"

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        text, label = self.render(batch, i).rsplit(" -> ", 1)
        return {"text": text, "labels": {"0": label}}
