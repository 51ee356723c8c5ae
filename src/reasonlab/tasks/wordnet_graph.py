"""WordNet 3.0's synsets as a graph, read from the Debian `wordnet-base` data files
(tasks/corpora.py): each synset's lemmas, definition, usage examples and hypernym pointers, and
the path similarity of two noun synsets (the sentence-pair tasks of tasks/gloss_pairs.py).

Format (wndb(5WN)): `offset lex_filenum ss_type w_cnt word lex_id ... p_cnt [ptr_symbol offset
pos source/target] ... | gloss`, w_cnt two hex digits, p_cnt three decimal digits. The gloss is
the definition, then `; "example"` for each usage example.

Path similarity (as WordNet::Similarity's `path` and NLTK's `path_similarity`, written here
because neither ships offline): 1 / (1 + d), d the fewest hypernym / hyponym edges between the
two synsets through a common hypernym -- the minimum over common ancestors c of
up(a, c) + up(b, c), `up` the fewest hypernym steps (`@` and instance `@i` pointers). Every noun
reaches `entity`, so d is defined for every pair of nouns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from reasonlab.tasks.corpora import WORDNET_FILES, wordnet_glosses

HYPERNYM, HYPONYM = ("@", "@i"), ("~", "~i")


@dataclass(frozen=True)
class Synset:
    key: str
    """"<pos letter><offset>", e.g. n02084071 (pos: n, v, a, s, r)."""
    lemmas: tuple[str, ...]
    """Its words, underscores as spaces, lowercased."""
    definition: str
    examples: tuple[str, ...]
    hypernyms: tuple[str, ...]
    hyponyms: tuple[str, ...]


EXAMPLE_RE = re.compile(r'"([^"]+)"')


def parse_line(line: str, pos: str) -> Synset:
    head, gloss = line.split("| ", 1)
    f = head.split()
    n_words = int(f[3], 16)
    lemmas = tuple(re.sub(r"\(.*\)$", "", f[4 + 2 * i]).replace("_", " ").lower()
                   for i in range(n_words))
    at = 4 + 2 * n_words
    ptrs = [f[at + 1 + 4 * i : at + 5 + 4 * i] for i in range(int(f[at]))]
    definition = gloss.split('; "', 1)[0].strip().rstrip(";").strip()
    return Synset(
        key=pos + f[0], lemmas=lemmas, definition=definition,
        examples=tuple(EXAMPLE_RE.findall(gloss[len(definition):])),
        hypernyms=tuple(p[2][0] + p[1] for p in ptrs if p[0] in HYPERNYM),
        hyponyms=tuple(p[2][0] + p[1] for p in ptrs if p[0] in HYPONYM))


@functools.lru_cache(maxsize=2)
def synsets(folder: str) -> dict[str, Synset]:
    """Every synset by key. Satellite adjectives (`s`) are keyed `a` as their pointers name
    them."""
    wordnet_glosses(folder)  # the missing-package error, with the install hint
    out = {}
    for f in WORDNET_FILES:
        for line in (Path(folder) / f).read_text(encoding="latin-1").splitlines():
            if line[:8].isdigit():
                s = parse_line(line, {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}[
                    f.split(".")[1]])
                out[s.key] = s
    return out


def ancestors(graph: dict[str, Synset], key: str) -> dict[str, int]:
    """Every hypernym ancestor of `key` (itself included, at 0) -> fewest steps up (BFS)."""
    dist = {key: 0}
    frontier = [key]
    while frontier:
        nxt = []
        for k in frontier:
            for h in graph[k].hypernyms:
                if h not in dist:
                    dist[h] = dist[k] + 1
                    nxt.append(h)
        frontier = nxt
    return dist


def path_distance(graph: dict[str, Synset], a: str, b: str,
                  up: dict[str, dict[str, int]] | None = None) -> int | None:
    """Fewest edges between a and b through a common hypernym (None: no common one).
    `up`: a cache of `ancestors` by key."""
    up = {} if up is None else up
    for k in (a, b):
        if k not in up:
            up[k] = ancestors(graph, k)
    common = up[a].keys() & up[b].keys()
    return min((up[a][c] + up[b][c] for c in common), default=None)


def path_similarity(graph: dict[str, Synset], a: str, b: str) -> float:
    d = path_distance(graph, a, b)
    return 0.0 if d is None else 1 / (1 + d)
