"""A word vocabulary of the WordNet glosses, with unigram and bigram counts (LEGO §5's masked-LM
task; the artificial corpora reuse it: docs/papers.md §1.1).

Words: the glosses lowercased and split into runs of letters / digits and single punctuation
marks (`tokenize`). No library tokenizer is used on purpose: a word-piece model would need
training data or a download, and the artificial corpora are defined over words.

Counting the 1.7M words of the glosses takes seconds, so the counts over ALL glosses (every
type, and every pair of adjacent words inside one gloss) are computed once and cached as JSON
(never pickle) under $REASONLAB_CACHE, else ~/.cache/reasonlab, keyed by a hash of the glosses
and TOKENIZER_VERSION. A `WordVocab` of size V keeps the V most frequent types (ties:
alphabetical) after the special tokens; every other word maps to [UNK], whose unigram count is
the sum of theirs (and likewise in the bigram counts).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reasonlab.tasks.base import Vocab
from reasonlab.tasks.corpora import wordnet_glosses

TOKENIZER_VERSION = 1
WORD_RE = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
SPECIALS = (Vocab.PAD, "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(len(SPECIALS))


def tokenize(text: str) -> list[str]:
    """Lowercased words (runs of a-z / 0-9) and single punctuation marks."""
    return WORD_RE.findall(text.lower())


def cache_dir() -> Path:
    return Path(os.environ.get("REASONLAB_CACHE") or Path.home() / ".cache" / "reasonlab")


@dataclass(frozen=True)
class WordCounts:
    """Counts over every gloss: `types` by decreasing count (ties alphabetical), `unigram[i]`
    the count of types[i], `bigram` [n, 3] rows (i, j, count) of adjacent pairs in a gloss."""

    types: tuple[str, ...]
    unigram: np.ndarray
    bigram: np.ndarray


@functools.lru_cache(maxsize=2)
def word_counts(folder: str) -> WordCounts:
    """The counts of the glosses in `folder`, from the JSON cache or computed and cached."""
    glosses = wordnet_glosses(folder)
    key = hashlib.sha256("\n".join(glosses).encode()).hexdigest()[:16]
    path = cache_dir() / f"wordnet-words-v{TOKENIZER_VERSION}-{key}.json"
    if path.exists():
        d = json.loads(path.read_text())
        return WordCounts(tuple(d["types"]), np.asarray(d["unigram"], dtype=np.int64),
                          np.asarray(d["bigram"], dtype=np.int64).reshape(-1, 3))
    counts = _count(glosses)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")  # a killed write never leaves a half file under the name
    tmp.write_text(json.dumps({"types": counts.types, "unigram": counts.unigram.tolist(),
                               "bigram": counts.bigram.ravel().tolist()}))
    tmp.replace(path)
    return counts


def _count(glosses: tuple[str, ...]) -> WordCounts:
    docs = [tokenize(g) for g in glosses]
    words, inverse = np.unique(np.asarray([w for d in docs for w in d]), return_inverse=True)
    uni = np.bincount(inverse, minlength=len(words))
    order = np.lexsort((words, -uni))  # decreasing count, then alphabetical
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ids = rank[inverse]  # every word as its rank
    lengths = np.asarray([len(d) for d in docs])
    last = np.cumsum(lengths) - 1  # index of each gloss's last word: no pair crosses it
    inside = np.ones(len(ids) - 1, dtype=bool)
    inside[last[lengths > 0][:-1]] = False
    pairs = ids[:-1][inside] * len(words) + ids[1:][inside]
    keys, n = np.unique(pairs, return_counts=True)
    bigram = np.stack([keys // len(words), keys % len(words), n], axis=1)
    return WordCounts(tuple(words[order].tolist()), uni[order], bigram)


class WordVocab:
    """The specials then the `size` most frequent words; unigram / bigram counts over its ids."""

    def __init__(self, folder: str, size: int):
        counts = word_counts(folder)
        kept = counts.types[:size]
        self.vocab = Vocab((*SPECIALS, *kept))
        self._index = {w: i for i, w in enumerate(self.vocab.tokens)}
        # type rank -> id: kept types follow the specials, the rest are [UNK]
        self._type_id = np.full(len(counts.types), UNK_ID, dtype=np.int64)
        self._type_id[: len(kept)] = np.arange(len(SPECIALS), len(SPECIALS) + len(kept))
        n = len(self.vocab)
        self.unigram = np.bincount(self._type_id, weights=counts.unigram, minlength=n
                                   ).astype(np.int64)  # [vocab]
        i, j, c = counts.bigram.T
        keys, where = np.unique(self._type_id[i] * n + self._type_id[j], return_inverse=True)
        summed = np.bincount(where, weights=c).astype(np.int64)
        # [pairs, 3] rows (first id, second id, count), sorted; sparse: a 30k vocabulary
        # would need 7 GB as a dense matrix
        self.bigram = np.stack([keys // n, keys % n, summed], axis=1)

    @property
    def word_ids(self) -> np.ndarray:
        """Ids of the kept words (not the specials, not [UNK])."""
        return np.arange(len(SPECIALS), len(self.vocab))

    def encode(self, text: str) -> np.ndarray:
        """Word ids of `text` ([UNK] for a word outside the vocabulary)."""
        return np.asarray([self._index.get(w, UNK_ID) for w in tokenize(text)], dtype=np.int64)
