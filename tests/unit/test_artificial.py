"""Artificial corpora (Chiang & Lee; docs/papers.md §4): each corpus's defining property checked
by a checker written independently of its generator, and each checker seen rejecting a stream
that breaks the property.

Definitions (docs/papers.md §4; the follow-up's §3 "Artificial datasets"): "uniform random
tokens"; "tokens with an English (Zipf-like) unigram distribution"; an English bigram chain;
"Flat-k (each opened token closed by the same token within k)"; "Nesting (the stack process:
push a sampled token with probability 0.4 or when the stack is empty, otherwise pop and emit the
top again; sequences sliced to 80-124 tokens)"; "Shuffle-N (English shuffled within windows of
N)".
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import build_task
from reasonlab.tasks.corpora import WORDNET_DIR, wordnet_glosses
from reasonlab.tasks.words import SEP_ID, tokenize
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet
WORDS, N = 300, 40_000


def corpus(name: str, **kw: object):
    task = build_task({"name": "mlm", "corpus": name, "words": WORDS, "corpus_tokens": N,
                       "seq_len": 32, **kw})
    return task, task.streams["train"]


# ------------------------------------------------------------------ independent checkers


def flat_ok(stream: np.ndarray, k: int) -> bool:
    """The stream splits into pairs of equal tokens at distance < k. Per token type, pairing
    its occurrences in order (1st-2nd, 3rd-4th, ...) minimises the largest distance (points on a
    line), so the property holds iff every type occurs an even number of times and those
    consecutive pairs are all closer than k."""
    where = defaultdict(list)
    for i, t in enumerate(stream.tolist()):
        where[t].append(i)
    return all(len(p) % 2 == 0 and all(b - a < k for a, b in zip(p[::2], p[1::2]))
               for p in where.values())


def nest_residue(stream: np.ndarray) -> list[int]:
    """What remains after cancelling adjacent equal tokens repeatedly (a stack: pop on a match).
    Cancellation is confluent, so a stream is well nested (every closing token equals the
    innermost open one) iff nothing remains."""
    stack: list[int] = []
    for t in stream.tolist():
        if stack and stack[-1] == t:
            stack.pop()
        else:
            stack.append(t)
    return stack


def gloss_ids(task) -> list[np.ndarray]:
    return [task.words.encode(g) for g in wordnet_glosses(WORDNET_DIR)]


# ------------------------------------------------------------------ tests


def test_uniform_is_uniform_and_independent():
    task, s = corpus("uniform")
    ids = task.words.word_ids
    assert np.isin(s, ids).all()
    freq = np.bincount(s, minlength=len(task.vocab))[ids] / len(s)
    assert np.abs(freq - 1 / len(ids)).max() < 4 * np.sqrt(1 / len(ids) / len(s))
    assert abs((s[1:] == s[:-1]).mean() - 1 / len(ids)) < 0.003


def test_unigram_follows_the_english_counts():
    """Expected frequencies counted here from the raw glosses, not from the word counts."""
    task, s = corpus("unigram")
    ids = task.words.word_ids
    counts = Counter(w for g in wordnet_glosses(WORDNET_DIR) for w in tokenize(g))
    want = np.asarray([counts[task.vocab.tokens[i]] for i in ids], dtype=float)
    want /= want.sum()
    got = np.bincount(s, minlength=len(task.vocab))[ids] / len(s)
    assert 0.5 * np.abs(got - want).sum() < 0.03  # total variation
    top = ids[want.argmax()]
    pair = ((s[1:] == top) & (s[:-1] == top)).mean()
    assert abs(pair - want.max() ** 2) < 0.004  # independent draws


def test_bigram_pairs_are_english_pairs_with_english_frequencies():
    task, s = corpus("bigram")
    seen: Counter[tuple[int, int]] = Counter()
    for g in gloss_ids(task):  # pairs of adjacent kept words inside a gloss, counted here
        seen.update(zip(g[:-1].tolist(), g[1:].tolist()))
    words = set(task.words.word_ids.tolist())
    pairs = [(a, b) for a, b in zip(s[:-1].tolist(), s[1:].tolist())
             if a in words and b in words]
    assert pairs and all(seen[p] > 0 for p in pairs)
    of = task.vocab.id("of")
    after = Counter(b for a, b in pairs if a == of)
    want = {b: n for (a, b), n in seen.items() if a == of and b in words}
    tot_w, tot_g = sum(want.values()), sum(after.values())
    tv = 0.5 * sum(abs(want.get(b, 0) / tot_w - after.get(b, 0) / tot_g)
                   for b in set(want) | set(after))
    assert tot_g > 500 and tv < 0.1
    # a stream of independent unigram draws breaks the property
    _, u = corpus("unigram")
    assert not all(seen[(a, b)] > 0 for a, b in zip(u[:-1].tolist(), u[1:].tolist())
                   if a in words and b in words)


@pytest.mark.parametrize("k", [32, 128])
def test_flat_k_pairs_close_within_k(k):
    task, s = corpus(f"flat-{k}")
    assert flat_ok(s, k) and not flat_ok(s, k // 4)  # the window is used, not just a part
    assert np.isin(s, task.words.word_ids).all()
    assert nest_residue(s)  # flat, not nested: pairs interleave
    broken = s.copy()
    broken[len(s) // 2] = next(t for t in task.words.word_ids if t != s[len(s) // 2])
    assert not flat_ok(broken, k)


def test_nesting_is_the_stack_process_sliced():
    from reasonlab.tasks.artificial import nesting_stream, unigram_probs

    task, s = corpus("nesting")
    pieces = np.split(s, np.flatnonzero(s == SEP_ID))
    lengths = [len(p) - (i > 0) for i, p in enumerate(pieces)]  # a piece after the 1st opens with [SEP]
    assert min(lengths[:-1]) >= 80 and max(lengths) <= 124
    raw = s[s != SEP_ID]
    assert len(nest_residue(raw)) < 60  # the stack stays shallow (push 0.4 < pop 0.6)

    rng = np.random.default_rng(3)
    out, stack = nesting_stream(rng, 20_000, unigram_probs(task.words), task.words.word_ids)
    closed = np.concatenate([out, stack[::-1]])
    assert nest_residue(closed) == []
    broken = closed.copy()
    broken[100] = next(t for t in task.words.word_ids if t != closed[100])
    assert nest_residue(broken) != []
    # the push rate when the stack is not empty: reparse with the checker's stack
    pushes = nonempty = 0
    st: list[int] = []
    for t in out.tolist():
        if st:
            nonempty += 1
            pushes += st[-1] != t
        if st and st[-1] == t:
            st.pop()
        else:
            st.append(t)
    assert abs(pushes / nonempty - 0.4) < 0.02


@pytest.mark.parametrize("n", [4, 64])
def test_shuffle_n_permutes_english_within_windows(n):
    _, s = corpus(f"shuffle-{n}")
    _, e = corpus("english")
    assert len(s) == len(e)
    m = len(e) // n * n
    ws, we = s[:m].reshape(-1, n), e[:m].reshape(-1, n)
    assert (np.sort(ws, 1) == np.sort(we, 1)).all()
    assert (ws != we).any(1).mean() > 0.8
    assert sorted(s[m:].tolist()) == sorted(e[m:].tolist())


def test_streams_are_seeded_and_the_splits_differ():
    a = corpus("nesting")[0].streams
    b = build_task({"name": "mlm", "corpus": "nesting", "words": WORDS, "corpus_tokens": N,
                    "seq_len": 32, "split_seed": 1}).streams
    again = corpus("nesting", mask_prob=0.2)[0].streams  # another config, same corpus seed
    assert (a["train"] == again["train"]).all()
    assert not np.array_equal(a["train"][:1000], b["train"][:1000])
    assert not np.array_equal(a["train"][:1000], a["test"][:1000])


def test_unknown_corpus_is_a_config_error():
    with pytest.raises(ConfigError, match="flat-128"):
        build_task({"name": "mlm", "corpus": "flat-7"})


def test_cli_data_corpus_prints_windows_of_any_corpus(capsys):
    from reasonlab.cli import main

    assert main(["data", "corpus", "nesting", f"words={WORDS}", f"corpus_tokens={N}",
                 "--n", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(len(line.split(" ")) == 32 for line in lines)
    assert main(["data", "corpus"]) == 2
    assert "name the corpus" in capsys.readouterr().err
    assert main(["data", "corpus", "flat-7"]) == 2
    assert "unknown corpus 'flat-7'" in capsys.readouterr().err


# ------------------------------------------------------------------ the seed's stack rows
# Seed (frozen-pretrained-transformers.txt, second half, "Comparison datasets - stack-based
# grammar"): "For each step, with probability 0.4 a random (English distribution) token is
# added to the sequence and on top of a stack. Otherwise (0.6) the stack is popped giving the
# next token." Rows "Artificial (Uni.)", "Artificial (5000 / 500 / 50)" ("Importance of token
# number mismatch") and "Artificial (50-s)" ("Token number mismatch with substitution").


def test_nesting_uniform_pushes_uniform_tokens():
    task, s = corpus("nesting-uniform", corpus_tokens=100_000)
    raw = s[s != SEP_ID]
    assert len(nest_residue(raw)) < 80
    pushed = Counter(pushes(raw))
    counts = np.asarray([pushed[i] for i in task.words.word_ids])
    # uniform: every word pushed about equally often (the Zipf corpus's top word is ~50x)
    assert counts.max() < 2.5 * counts.mean() and counts.min() > 0
    _, z = corpus("nesting", corpus_tokens=100_000)
    zc = Counter(pushes(z[z != SEP_ID]))
    assert max(zc.values()) > 10 * np.mean(list(zc.values()))


def pushes(stream: np.ndarray) -> list[int]:
    """The tokens the checker's stack reads as pushes."""
    st: list[int] = []
    out = []
    for t in stream.tolist():
        if st and st[-1] == t:
            st.pop()
        else:
            st.append(t)
            out.append(t)
    return out


@pytest.mark.parametrize("k", [50, 500, 5000])
def test_nesting_k_uses_k_types_and_leaves_the_other_rows_untrained(k):
    task, s = corpus(f"nesting-{k}")
    raw = s[s != SEP_ID]
    used = set(np.unique(raw).tolist())
    top = set(task.words.word_ids[: min(k, WORDS)].tolist())
    assert used <= top  # never another word: those embedding rows get no gradient
    assert len(used) >= min(k, WORDS) * (0.9 if k <= 50 else 0.5)
    assert len(nest_residue(raw)) < 60 + k // 10  # adjacent equal pushes cancel falsely


def test_nesting_50s_nests_over_groups_with_every_id_used():
    from reasonlab.tasks.artificial import substitution_groups

    task, s = corpus("nesting-50s")
    raw = s[s != SEP_ID]
    group_of = {int(i): g for g, ids in enumerate(substitution_groups(task.words)) for i in ids}
    # the independent reading: rank mod 50 is the structural type
    assert all(group_of[int(i)] == (int(i) - 5) % 50 for i in task.words.word_ids)
    types = np.asarray([group_of[int(t)] for t in raw])
    assert len(nest_residue(types)) < 60  # the group sequence is the stack process
    assert len(nest_residue(raw)) > len(raw) // 4  # the ids themselves do not nest
    assert len(np.unique(raw)) > 0.9 * WORDS  # every embedding row is trained
