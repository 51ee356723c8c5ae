"""Masked-LM task and word vocabulary: BERT's masking rule checked on the generated data, the
answers recovered from the corpus independently of the generator, and the word counts
against a plain Counter.

BERT (Devlin et al. 2019, §3.1): "we mask 15% of all WordPiece tokens in each sequence at
random ... If the i-th token is chosen, we replace the i-th token with (1) the [MASK] token
80% of the time (2) a random token 10% of the time (3) the unchanged i-th token 10% of the time."
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from reasonlab.tasks.base import build_task
from reasonlab.tasks.corpora import WORDNET_DIR, WORDNET_FILES
from reasonlab.tasks.words import (CLS_ID, MASK_ID, SEP_ID, SPECIALS, UNK_ID, WordVocab,
                                   tokenize, word_counts)

HAVE_WORDNET = all((Path(WORDNET_DIR) / f).exists() for f in WORDNET_FILES)
needs_wordnet = pytest.mark.skipif(not HAVE_WORDNET, reason="Debian package wordnet-base is "
                                   "not installed (scripts/setup.sh installs it)")


def small_corpus(folder: Path) -> list[str]:
    glosses = []
    for n, f in enumerate(WORDNET_FILES):
        lines = ["  1 licence header line that is not a gloss"]
        for i in range(30):
            g = f"the {'cat' if i % 3 else 'dog'} number {i % 7} of {f[5:]}; \"a b\" ({n})"
            glosses.append(g)
            lines.append(f"{i:08d} 03 n 01 w{i} 0 000 | {g}")
        (folder / f).write_text("\n".join(lines) + "\n")
    return glosses


def test_word_counts_match_a_counter_and_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("REASONLAB_CACHE", str(tmp_path / "cache"))
    glosses = small_corpus(tmp_path)
    docs = [tokenize(g) for g in glosses]
    uni = Counter(w for d in docs for w in d)
    bi = Counter((d[i], d[i + 1]) for d in docs for i in range(len(d) - 1))  # inside a gloss
    word_counts.cache_clear()
    c = word_counts(str(tmp_path))
    assert dict(zip(c.types, c.unigram.tolist())) == dict(uni)
    assert list(c.unigram) == sorted(c.unigram, reverse=True)
    assert {(c.types[i], c.types[j]): n for i, j, n in c.bigram.tolist()} == dict(bi)
    files = list((tmp_path / "cache").iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"
    word_counts.cache_clear()
    monkeypatch.setattr("reasonlab.tasks.words._count", lambda g: 1 / 0)  # must not recount
    again = word_counts(str(tmp_path))
    assert again.types == c.types and (again.bigram == c.bigram).all()
    # a 5-word vocabulary: everything else is [UNK], and the counts add up
    v = WordVocab(str(tmp_path), 5)
    assert v.vocab.tokens[: len(SPECIALS)] == SPECIALS and len(v.vocab) == len(SPECIALS) + 5
    kept = set(v.vocab.tokens[len(SPECIALS):])
    assert v.unigram[UNK_ID] == sum(n for w, n in uni.items() if w not in kept)
    assert v.unigram.sum() == sum(uni.values()) and v.bigram[:, 2].sum() == sum(bi.values())
    name = lambda w: w if w in kept else "[UNK]"  # noqa: E731
    agg = Counter()
    for (a, b), n in bi.items():
        agg[name(a), name(b)] += n
    got = {(v.vocab.tokens[i], v.vocab.tokens[j]): n for i, j, n in v.bigram.tolist()}
    assert got == dict(agg)
    word_counts.cache_clear()


@pytest.fixture(scope="module")
def task():
    if not HAVE_WORDNET:
        pytest.skip("wordnet-base is not installed")
    return build_task({"name": "mlm", "words": 2000, "seq_len": 40})


@needs_wordnet
def test_bert_masking_rule(task):
    b = task.sample(np.random.default_rng(0), 4000)
    tok, pos, lab, valid = (b.tokens.numpy(), b.label_pos.numpy(), b.labels.numpy(),
                            b.loss_mask.numpy())
    assert (tok[:, 0] == CLS_ID).all() and (tok[:, -1] == SEP_ID).all()
    orig = tok.copy()
    rows, cols = np.nonzero(valid)
    orig[rows, pos[rows, cols]] = lab[rows, cols]
    # candidates: every token but the specials and [UNK]; exactly round(15%) of them chosen
    cand = orig >= len(SPECIALS)
    want = np.maximum(1, np.rint(cand.sum(1) * 0.15))
    assert (valid.sum(1) == want).all()
    for r in range(200):
        p = pos[r][valid[r]]
        assert (np.diff(p) > 0).all() and cand[r, p].all()  # distinct, never a special
    # away from the slots the input is the original text
    slot = np.zeros_like(tok, dtype=bool)
    slot[rows, pos[rows, cols]] = True
    assert (tok[~slot] == orig[~slot]).all()
    shown, truth = tok[rows, pos[rows, cols]], lab[rows, cols]
    masked = shown == MASK_ID
    same = shown == truth
    n = len(shown)
    assert abs(masked.mean() - 0.8) < 0.01, masked.mean()
    # a random word equals the original with probability ~1/2000: "unchanged" ~ 10%
    assert abs(same.mean() - 0.1) < 0.01 and abs((~masked & ~same).mean() - 0.1) < 0.01
    kind = b.meta["replaced"].numpy()[rows, cols]
    assert ((kind == 0) == masked).all() and (shown[kind == 1] >= len(SPECIALS)).all()
    assert n > 10_000


@needs_wordnet
def test_answers_are_the_corpus_window_found_independently(task):
    """solve() finds the window of the stream that agrees with the unmasked tokens and reads
    the answers off the corpus: it agrees with the generator's labels."""
    rng = np.random.default_rng(1)
    for split in ("train", "test"):
        b = task.sample(rng, 30, split)
        for i in range(30):
            assert task.solve(task.render(b, i), split) == task.example_json(b, i)["labels"]


@needs_wordnet
def test_validation_windows_come_from_held_out_glosses(task):
    """Test windows are found in the held-out stream; a long stretch of a held-out window is
    absent from the training stream (no validation gloss is trained on)."""
    train = task.streams["train"]
    b = task.sample(np.random.default_rng(2), 20, "test")
    hits = 0
    for i in range(20):
        text = task.render(b, i)
        ex = task.example_json(b, i)["labels"]
        assert task.solve(text, "test") == ex
        try:
            task.solve(text, "train")
            hits += 1
        except Exception:
            pass
    assert hits <= 1, hits
    assert len(train) > 20 * len(task.streams["test"]) * 0.9  # 5% held out


def one_pass_sample(task, rng: np.random.Generator, n: int, split: str = "train"):
    """MLMTask.sample as it was before it built its windows in chunks (all n at once, ~16 GB
    of temporaries at 3M windows): the reference the chunked one must equal bit for bit."""
    import torch

    from reasonlab.tasks.base import Batch
    from reasonlab.tasks.words import PAD_ID

    c, T, P = task.config, task.config.seq_len, task.n_slots
    orig = np.full((n, T), SEP_ID, dtype=np.int64)
    orig[:, 0] = CLS_ID
    orig[:, 1:-1] = task.windows(rng, n, T - 2, split)
    cand = ~np.isin(orig, (PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID))
    k = np.maximum(1, np.rint(cand.sum(1) * c.mask_prob)).astype(np.int64)
    k = np.minimum(k, cand.sum(1))
    keys = np.where(cand, rng.random((n, T)), np.inf)
    chosen = np.argsort(keys, axis=1, kind="stable")[:, :P]
    valid = np.arange(P)[None, :] < k[:, None]
    pos = np.sort(np.where(valid, chosen, T), axis=1)
    valid = pos < T
    u = rng.random((n, P))
    replaced = np.where(u < c.mask_token_prob, 0,
                        np.where(u < c.mask_token_prob + c.random_token_prob, 1, 2))
    randoms = rng.choice(task.words.word_ids, size=(n, P))
    tokens = orig.copy()
    rows = np.nonzero(valid)
    shown = np.choose(replaced, [np.full((n, P), MASK_ID), randoms,
                                 orig[np.arange(n)[:, None], np.minimum(pos, T - 1)]])
    tokens[rows[0], pos[rows]] = shown[rows]
    labels = np.where(valid, orig[np.arange(n)[:, None], np.minimum(pos, T - 1)], 0)
    return Batch(tokens=torch.from_numpy(tokens), label_pos=torch.from_numpy(
        np.where(valid, pos, -1)), labels=torch.from_numpy(labels),
        loss_mask=torch.from_numpy(valid),
        meta={"replaced": torch.from_numpy(np.where(valid, replaced, 0))})


@needs_wordnet
@pytest.mark.parametrize("rows", [7, 64, 65_536])
def test_chunked_sampling_is_bitwise_the_one_pass_one(monkeypatch, rows):
    """Host memory of a 3M-window set: built SAMPLE_ROWS windows at a time, the same
    examples bit for bit, and the generator left in the same state."""
    from reasonlab.tasks import mlm

    monkeypatch.setattr(mlm, "SAMPLE_ROWS", rows)
    task = build_task({"name": "mlm", "words": 500, "seq_len": 24})
    for split in ("train", "test"):
        a, b = np.random.default_rng(3), np.random.default_rng(3)
        got, want = task.sample(a, 300, split), one_pass_sample(task, b, 300, split)
        for f in ("tokens", "label_pos", "labels", "loss_mask"):
            assert np.array_equal(getattr(got, f).numpy(), getattr(want, f).numpy()), f
            assert getattr(got, f).dtype == getattr(want, f).dtype, f
        assert np.array_equal(got.meta["replaced"].numpy(), want.meta["replaced"].numpy())
        assert a.random() == b.random()
