"""WordNet gloss classification (downstream tasks of artificial pretraining): labels checked
against the raw files read independently (`solve`: fixed columns of the data lines), splits by
gloss text with no test gloss in training."""

from __future__ import annotations

import numpy as np
import pytest

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import build_task
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet


@pytest.mark.parametrize("label,n_classes", [("supersense", 45), ("pos", 4)])
def test_labels_agree_with_the_raw_files(label, n_classes):
    task = build_task({"name": "gloss_class", "label": label, "words": 500, "seq_len": 24})
    assert task.n_classes == n_classes
    b = task.sample(np.random.default_rng(1), 200, "test")
    answered = 0
    for i in range(len(b)):
        text, want = task.render(b, i).rsplit(" -> ", 1)
        got = task.solve(text)
        answered += bool(got)
        assert got in ({}, {"0": want})
    assert answered >= 180  # only renderings shared by glosses of other labels stay unanswered
    assert (b.tokens[:, 0] == task.vocab.id("[CLS]")).all()
    assert (b.pad_mask.sum(1) >= 3).all()


def test_split_by_gloss_holds_no_test_gloss_in_training():
    task = build_task({"name": "gloss_class"})
    train, test = task.documents("train")[0], task.documents("test")[0]
    assert not set(train) & set(test)
    assert len(set(train)) == len(train) and 0.08 < len(test) / (len(train) + len(test)) < 0.12
    other = build_task({"name": "gloss_class", "split_seed": 1}).documents("test")[0]
    assert set(other) != set(test)
    with pytest.raises(ConfigError, match="at most"):
        task.sample(np.random.default_rng(0), len(test) + 1, "test")
