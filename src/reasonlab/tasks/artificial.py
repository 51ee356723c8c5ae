"""Artificial pretraining corpora over the word vocabulary (Chiang & Lee; docs/papers.md §4).

Chiang & Lee pretrain a masked-LM encoder on artificial corpora and fine-tune it on English
tasks, asking which structure transfers. Each corpus here is a CORPORA entry (tasks/mlm.py):
fn(words, config) -> {"train", "test": 1-D token stream over the WordVocab of tasks/words.py},
so `task.corpus=<name>` of the masked-LM task pretrains on it. The definitions, as docs/papers.md
§4 records them (the paper's text is not in the repository; its section on the corpora is §3,
"Artificial datasets", of the follow-up, arXiv 2109.03537):

    uniform     "uniform random tokens": every token independent, uniform over the words.
    unigram     "tokens with an English (Zipf-like) unigram distribution": independent, with
                the frequencies of the words in the WordNet glosses.
    bigram      an English bigram chain: each token drawn given the previous one with the
                glosses' bigram frequencies (a word never followed by a kept word ends the
                sentence: [SEP], then a unigram draw).
    flat-k      "Flat-k (each opened token closed by the same token within k)": the tokens come
                in pairs of the same word at distance 1..k-1, pairs may interleave (flat,
                not nested).
    nesting     "the stack process: push a sampled token with probability 0.4 or when the
                stack is empty, otherwise pop and emit the top again; sequences sliced to
                80-124 tokens": one long run of the process cut into pieces of 80-124 tokens
                (uniform), each followed by [SEP] (the stack carries over the cut, as slicing
                a stream does).
    shuffle-n   "English shuffled within windows of N": the `english` stream (glosses and their
                [SEP]s) cut into consecutive windows of n tokens, each permuted at random.
    english     the glosses themselves (tasks/mlm.py).

The seed's rows (frozen-pretrained-transformers.txt, second half, slides "Comparison datasets -
stack-based grammar", "Importance of distribution for structured data", "Importance of token
number mismatch", "Token number mismatch with substitution"): "For each step, with probability
0.4 a random (English distribution) token is added to the sequence and on top of a stack.
Otherwise (0.6) the stack is popped giving the next token." `nesting` above is "Artificial
(Zipf)"; the variants differ only in what a push draws:

    nesting-uniform  "Artificial (Uni.)": pushes uniform over the kept words.
    nesting-k        "Artificial (k)", k in NEST_TYPES: pushes drawn from k words only while
                     the model keeps the whole vocabulary, so every other embedding row is
                     never trained -- the seed's "token number mismatch". Which k the seed does
                     not say; ours: the k most frequent words, their English frequencies
                     renormalised (k capped at the vocabulary).
    nesting-50s      "Artificial (50-s)", OUR reading: the seed names the row ("Token number
                     mismatch with substitution") and gives no definition. 50 structural types
                     (the 50 most frequent words' frequencies) run the stack process; the kept
                     words are dealt into 50 groups by frequency rank (rank mod 50), and every
                     occurrence of type t, push or pop, is written as a uniform random id of
                     group t -- the nesting is over groups, and every embedding row is trained.

Sampled tokens (unigram, bigram's restarts, flat-k's and nesting's opened tokens) follow the
English unigram frequencies of the kept words ([UNK] and the specials are never drawn): our
reading of "sampled token", the choice under which only the structure differs from `unigram`.

Seeds: the training stream is drawn from (split_seed, 0), the validation stream from
(split_seed, 1), each `corpus_tokens` and `val_fraction * corpus_tokens` tokens long (shuffle-n
permutes the english train / validation streams). The generators are written for speed
(vectorised where the process allows); the tests check each corpus's defining property with an
independent checker (tests/unit/test_artificial.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reasonlab.tasks.mlm import CORPORA, MLMConfig, english
from reasonlab.tasks.words import SEP_ID, WordVocab

NEST_PUSH = 0.4
"""Probability of a push when the stack is not empty (Chiang & Lee's nesting corpus)."""
NEST_SLICE = (80, 124)
"""Lengths of the pieces the nesting stream is sliced into (inclusive)."""
FLAT_K = (32, 128)
"""Registered flat-k windows: flat-128 is the paper's; flat-32 fits the cpu scale's windows."""
SHUFFLE_N = (4, 64)
"""Registered shuffle-n windows: the paper's Shuffle-4 and Shuffle-64."""
NEST_TYPES = (5000, 500, 50)
"""The seed's Artificial (5000 / 500 / 50): token types a push may draw."""
SUBSTITUTED_TYPES = 50
"""Structural types of nesting-50s (the seed's Artificial (50-s))."""


def unigram_probs(words: WordVocab) -> np.ndarray:
    """P(word) over words.word_ids from the English unigram counts: [n_words]."""
    c = words.unigram[words.word_ids].astype(float)
    return c / c.sum()


def _rngs(config: MLMConfig) -> dict[str, tuple[np.random.Generator, int]]:
    n_val = max(1000, int(config.corpus_tokens * config.val_fraction))
    return {"train": (np.random.default_rng([config.split_seed, 0]), config.corpus_tokens),
            "test": (np.random.default_rng([config.split_seed, 1]), n_val)}


def _per_split(make: Callable[[np.random.Generator, int, WordVocab], np.ndarray]
               ) -> Callable[[WordVocab, MLMConfig], dict[str, np.ndarray]]:
    """A CORPORA entry from make(rng, n, words) -> stream of about n tokens."""
    def corpus(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
        return {s: make(rng, n, words).astype(np.int64) for s, (rng, n) in _rngs(config).items()}

    corpus.__doc__ = make.__doc__
    return corpus


# -------------------------------------------------------------------- token statistics


@CORPORA.register("uniform")
@_per_split
def uniform(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """Independent tokens, uniform over the kept words."""
    return rng.choice(words.word_ids, size=n)


@CORPORA.register("unigram")
@_per_split
def unigram(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """Independent tokens with the English unigram frequencies."""
    return rng.choice(words.word_ids, size=n, p=unigram_probs(words))


def bigram_table(words: WordVocab) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chain as rows over states 0..V-1 (V = len(vocab); state SEP_ID = a restart):
    (indptr [V+1], successor [m], cumulative probability within the row [m]). A word's row is
    its kept-word successors by bigram count; a word without any, and [SEP], restart: [SEP]'s
    row is the unigram distribution, a dead end's row is [SEP] alone."""
    V, ids = len(words.vocab), words.word_ids
    i, j, c = words.bigram.T
    keep = np.isin(i, ids) & np.isin(j, ids)
    i, j, c = i[keep], j[keep], c[keep].astype(float)
    dead = np.setdiff1d(ids, i)
    src = np.concatenate([i, dead, np.full(len(ids), SEP_ID)])
    dst = np.concatenate([j, np.full(len(dead), SEP_ID), ids])
    w = np.concatenate([c, np.ones(len(dead)), words.unigram[ids].astype(float)])
    order = np.lexsort((dst, src))
    src, dst, w = src[order], dst[order], w[order]
    indptr = np.searchsorted(src, np.arange(V + 1))
    row_sum = np.add.reduceat(w, indptr[:-1][np.diff(indptr) > 0])
    totals = np.zeros(V)
    totals[np.diff(indptr) > 0] = row_sum
    cum = np.cumsum(w) - np.repeat(np.cumsum(totals) - totals, np.diff(indptr))
    return indptr, dst, cum / totals[src]


@CORPORA.register("bigram")
@_per_split
def bigram(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """An English bigram chain: 256 chains side by side (vectorised), each starting at [SEP],
    concatenated."""
    indptr, succ, cum = bigram_table(words)
    chains, steps = 256, -(-n // 256)
    # row r's cumulative probabilities shifted by r: one searchsorted serves every row
    shifted = cum + np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    state = np.full(chains, SEP_ID)
    out = np.empty((steps + 1, chains), dtype=np.int64)
    out[0] = state  # each chain opens with its [SEP], so no pair crosses the concatenation
    for t in range(1, steps + 1):
        u = np.minimum(rng.random(chains), 1 - 1e-12)
        k = np.searchsorted(shifted, state + u, side="right")
        state = succ[np.minimum(k, indptr[state + 1] - 1)]  # [chains]
        out[t] = state
    return out.T.ravel()[:n]


# -------------------------------------------------------------------- structure


def flat_stream(rng: np.random.Generator, n: int, k: int, probs: np.ndarray,
                ids: np.ndarray) -> np.ndarray:
    """Flat parentheses: left to right, each free position opens a pair: a sampled token placed
    there and again at a free position drawn uniformly among the next k-1. One is always free:
    at most k-2 earlier pairs can still be open (an opener at least k-1 back has closed).
    Positions past n left free at the end are dropped, so every pair is complete."""
    filled = np.full(n + k, -1, dtype=np.int64)
    tokens = rng.choice(ids, size=n, p=probs)
    for i in range(n):
        if filled[i] >= 0:
            continue
        free = np.flatnonzero(filled[i + 1 : i + k] < 0)
        j = i + 1 + free[rng.integers(len(free))]
        filled[i] = filled[j] = tokens[i]
    return filled[filled >= 0]


def nesting_stream(rng: np.random.Generator, n: int, probs: np.ndarray, ids: np.ndarray,
                   p_push: float = NEST_PUSH) -> tuple[np.ndarray, list[int]]:
    """n tokens of the stack process and the stack left at the end (bottom first)."""
    push = rng.random(n) < p_push
    tokens = rng.choice(ids, size=n, p=probs)
    stack: list[int] = []
    out = np.empty(n, dtype=np.int64)
    for t in range(n):
        if push[t] or not stack:
            stack.append(int(tokens[t]))
            out[t] = tokens[t]
        else:
            out[t] = stack.pop()
    return out, stack


def slice_stream(rng: np.random.Generator, stream: np.ndarray,
                 lengths: tuple[int, int] = NEST_SLICE) -> np.ndarray:
    """The stream cut into pieces of lengths uniform in `lengths` (inclusive), each followed by
    [SEP]."""
    cuts = np.cumsum(rng.integers(lengths[0], lengths[1] + 1, size=len(stream) // lengths[0] + 1))
    cuts = cuts[cuts < len(stream)]
    return np.insert(stream, cuts, SEP_ID)


@CORPORA.register("nesting")
@_per_split
def nesting(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """Nested parentheses from the stack process, sliced into pieces of 80-124 tokens."""
    stream, _ = nesting_stream(rng, n, unigram_probs(words), words.word_ids)
    return slice_stream(rng, stream)


@CORPORA.register("nesting-uniform")
@_per_split
def nesting_uniform(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """The stack process with pushes uniform over the kept words (the seed's Artificial (Uni.)),
    sliced into pieces of 80-124 tokens."""
    ids = words.word_ids
    stream, _ = nesting_stream(rng, n, np.full(len(ids), 1 / len(ids)), ids)
    return slice_stream(rng, stream)


def top_k_probs(words: WordVocab, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, probabilities) of the min(k, vocabulary) most frequent kept words, their English
    unigram frequencies renormalised."""
    ids = words.word_ids[:k]  # word ids follow frequency rank (tasks/words.py)
    p = words.unigram[ids].astype(float)
    return ids, p / p.sum()


def _nesting_k(k: int) -> Callable[[np.random.Generator, int, WordVocab], np.ndarray]:
    def nesting_k(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
        ids, p = top_k_probs(words, k)
        stream, _ = nesting_stream(rng, n, p, ids)
        return slice_stream(rng, stream)

    nesting_k.__doc__ = (f"The stack process over the {k} most frequent words only (the seed's "
                         f"Artificial ({k})): the other embedding rows are never trained.")
    return nesting_k


def substitution_groups(words: WordVocab, types: int = SUBSTITUTED_TYPES) -> list[np.ndarray]:
    """The kept words dealt into `types` groups by frequency rank: group t = ranks t, t + types,
    t + 2 types, ... (so each group mixes frequent and rare words)."""
    return [words.word_ids[t::types] for t in range(types)]


@CORPORA.register(f"nesting-{SUBSTITUTED_TYPES}s")
@_per_split
def nesting_substituted(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
    """The stack process over 50 structural types, each occurrence written as a random id of its
    type's group (our reading of the seed's Artificial (50-s)), sliced into 80-124 tokens."""
    groups = substitution_groups(words)
    _, p = top_k_probs(words, len(groups))
    stream, _ = nesting_stream(rng, n, p, np.arange(len(groups)))  # structural types 0..49
    sizes = np.asarray([len(g) for g in groups])
    table = np.full((len(groups), sizes.max()), -1, dtype=np.int64)
    for t, g in enumerate(groups):
        table[t, : len(g)] = g
    pick = (rng.random(len(stream)) * sizes[stream]).astype(np.int64)  # uniform within group
    return slice_stream(rng, table[stream, pick])


def _flat(k: int) -> Callable[[np.random.Generator, int, WordVocab], np.ndarray]:
    def flat(rng: np.random.Generator, n: int, words: WordVocab) -> np.ndarray:
        return flat_stream(rng, n, k, unigram_probs(words), words.word_ids)

    flat.__doc__ = f"Flat parentheses: each opened token closed by the same token within {k}."
    return flat


def shuffle_windows(rng: np.random.Generator, stream: np.ndarray, n: int) -> np.ndarray:
    """`stream` with every consecutive window of n tokens permuted at random (a last partial
    window too)."""
    pad = -len(stream) % n
    w = np.concatenate([stream, np.full(pad, -1)]).reshape(-1, n)
    keys = rng.random(w.shape) + (w < 0)  # the padding sorts last, real tokens keep their window
    out = np.take_along_axis(w, np.argsort(keys, axis=1), axis=1).ravel()
    return out[out >= 0]


def _shuffle(n: int) -> Callable[[WordVocab, MLMConfig], dict[str, np.ndarray]]:
    def shuffle(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
        rngs = _rngs(config)
        return {s: shuffle_windows(rngs[s][0], ids, n)
                for s, ids in english(words, config).items()}

    shuffle.__doc__ = f"English (the glosses' stream) shuffled within windows of {n} tokens."
    return shuffle


for _k in FLAT_K:
    CORPORA.register(f"flat-{_k}")(_per_split(_flat(_k)))
for _n in SHUFFLE_N:
    CORPORA.register(f"shuffle-{_n}")(_shuffle(_n))
for _k in NEST_TYPES:
    CORPORA.register(f"nesting-{_k}")(_per_split(_nesting_k(_k)))
