"""Character LM on WordNet glosses: windows and labels, held-out text, clear error when absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reasonlab.errors import AssetError
from reasonlab.tasks.base import build_task
from reasonlab.tasks.corpora import WORDNET_DIR, WORDNET_FILES, encoded_split, wordnet_glosses

HAVE_WORDNET = all((Path(WORDNET_DIR) / f).exists() for f in WORDNET_FILES)
needs_wordnet = pytest.mark.skipif(not HAVE_WORDNET, reason="Debian package wordnet-base is "
                                   "not installed (scripts/setup.sh installs it)")


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(AssetError, match="apt-get install wordnet-base"):
        build_task({"name": "corpus_lm", "path": str(tmp_path)})


def test_small_corpus_folder_windows_and_split(tmp_path):
    # a corpus written here: 40 synset lines per file in WordNet's data.* format
    for f in WORDNET_FILES:
        lines = ["  1 licence header line that is not a gloss"]
        lines += [f"{i:08d} 03 n 01 w{i} 0 000 | gloss number {i} of {f}; \"an example\""
                  for i in range(40)]
        (tmp_path / f).write_text("\n".join(lines) + "\n")
    task = build_task({"name": "corpus_lm", "path": str(tmp_path), "seq_len": 12,
                       "val_fraction": 0.25})
    glosses = set(wordnet_glosses(str(tmp_path)))
    assert len(glosses) == 160 and not any("licence" in g for g in glosses)
    chars, ids = encoded_split(str(tmp_path), 0.25, 0)
    decode = lambda a: "".join(chars[i - 1] for i in a)  # noqa: E731
    train_lines = set(decode(ids["train"]).split("\n")) - {""}
    test_lines = set(decode(ids["test"]).split("\n"))
    assert len(test_lines) == 40 and not train_lines & test_lines  # held-out glosses
    assert train_lines | test_lines == glosses
    batch = task.sample(np.random.default_rng(0), 50, "test")
    assert (batch.labels[:, :-1] == batch.tokens[:, 1:]).all()  # next-character labels
    assert (batch.label_pos == np.arange(12)).all() and batch.loss_mask.all()
    for i in range(50):
        text = task.render(batch, i)
        assert text in decode(ids["test"])  # a window of the held-out text
        assert task.parse(text) == batch.tokens[i].tolist()
        nxt = task.example_json(batch, i)["labels"]["next"]
        assert nxt == "".join(task.vocab.decode(batch.labels[i]))
        assert task.solve(text)["next"] == nxt[:-1]


@needs_wordnet
def test_wordnet_glosses_load():
    task = build_task({"name": "corpus_lm"})
    assert task.n_chars("train") > 5_000_000 and task.n_chars("test") > 100_000
    text = task.render(task.sample(np.random.default_rng(1), 1, "train"), 0)
    assert len(text) == 64
