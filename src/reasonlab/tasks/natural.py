"""Natural pretraining corpora for the seed's rows that are not artificial (Chiang & Lee, arXiv
2012.11995; the seed: frozen-pretrained-transformers.txt, second half, slides "Baseline
datasets" and "Comparison datasets"), from text that Debian ships (scripts/setup.sh installs
the packages; absent, the corpus ends in one line saying how to get it):

    english-fortunes  "English wikipedia masked language model" (Pre-train En) stands in as
                      English running text from Debian `fortunes` (fortune cookies, ~560k
                      words): NOT WordNet, less the fortunes that quote a WordNet sentence, so
                      no downstream gloss, definition or example is pretrained on
                      (tests/unit/test_natural_corpora.py proves it against every downstream
                      split). Encoded with the English word vocabulary (tasks/words.py), as the
                      seed's English model shares its tokenizer with the downstream tasks.
    german            "esoteric human language: Kannada ... Vocab size is 30k. Sentence structure
                      is SOV": no Kannada text ships in Debian; German fortune cookies
                      (`fortunes-de`, ~560k words, the same genre as english-fortunes, verb-final
                      in subordinate clauses) stand in.
    javascript        "tokenized JavaScript without comments: 10M tokens total, vocab size is
                      30k": the TypeScript compiler's JavaScript (`node-typescript`,
                      lib/typescript.js, cut to JS_MAX_CHARS), comments stripped.
    shuffle-64-fortunes  english-fortunes shuffled within windows of 64 (the follow-up's
                      Shuffle-64, kept as an extra row over the disjoint English).
    amino             "proteins: 14,670,860 sequences, split into 3,150 families": a TOY --
                      the protein sequences of EMBOSS's test data (`emboss-test`): 1024 distinct
                      sequences, ~200k residues over 23 letters. With 23 token types it
                      confounds structure with vocabulary size (the other embedding rows are
                      never trained, as in nesting-50).

A foreign corpus (german, javascript, amino) gets its own vocabulary, as the seed trains a
tokenizer per corpus: its token types by decreasing count (ties alphabetical), the r-th
written as the id of the r-th kept English word (`words.word_ids[r]`), types past the vocabulary
as [UNK]. So an id carries no English meaning: only the embedding table's shape is shared.
Documents (a fortune; 40 source lines; a protein) are shuffled with split_seed, the last
val_fraction held out, each followed by [SEP].
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from reasonlab.errors import AssetError
from reasonlab.tasks.mlm import CORPORA, MLMConfig
from reasonlab.tasks.artificial import shuffle_windows
from reasonlab.tasks.corpora import WORDNET_DIR
from reasonlab.tasks.words import SEP_ID, UNK_ID, WordVocab, tokenize

FORTUNES_EN = "/usr/share/games/fortunes"
FORTUNES_DE = "/usr/share/games/fortunes/de"
TYPESCRIPT_JS = "/usr/share/nodejs/typescript/lib/typescript.js"
EMBOSS_TEST = "/usr/share/EMBOSS/test"
JS_MAX_CHARS = 3_000_000
"""Characters of typescript.js read (~260k tokens): as long as the other natural corpora, a
second to tokenise."""
JS_LINES_PER_DOC = 40
ASCII_ART = ("art", "ascii-art", "asciiart")
"""Fortune files of pictures, not running text."""
PROTEIN_FILES = ("swiss/seq.dat", "wormpep/wormpep", "data/hmm/globins630.fa",
                 "data/structure/swsmall.fasta", "data/memenew/adh.s", "data/wormpep.clone.AB",
                 "data/op1.ali", "data/op2.ali", "pir/pir1.seq", "pir/pir2.seq", "pir/pir3.seq",
                 "pir/pir4.seq")
"""EMBOSS test files that hold protein sequences (Swiss-Prot flat file, FASTA, PIR)."""
AMINO_LETTERS = frozenset("ACDEFGHIKLMNOPQRSTUVWYBZXJ")
"""The 20 standard residues, selenocysteine U, pyrrolysine O and the ambiguity codes B Z X J."""


PACKAGES = {"english-fortunes": (FORTUNES_EN + "/fortunes", "fortunes"),
            "german": (FORTUNES_DE, "fortunes-de"), "javascript": (TYPESCRIPT_JS, "node-typescript"),
            "amino": (EMBOSS_TEST, "emboss-test")}
"""Corpus -> (the file it reads, the Debian package that ships it)."""


def missing_packages() -> list[str]:
    """The Debian packages of these corpora that are not installed."""
    return [pkg for path, pkg in PACKAGES.values() if not Path(path).exists()]


def _need(path: str, package: str, corpus: str) -> Path:
    if not Path(path).exists():
        raise AssetError(f"corpus '{corpus}': {path} not found; install the Debian package "
                         f"{package} (`apt-get install {package}`, which scripts/setup.sh does)")
    return Path(path)


# -------------------------------------------------------------------- documents


def fortunes(folder: Path) -> list[str]:
    """Every fortune of the text files of `folder` (entries separated by lines of `%`)."""
    out = []
    for f in sorted(folder.iterdir()):
        if not f.is_file() or f.is_symlink() or f.suffix in (".dat", ".u8") or f.name in ASCII_ART:
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        out += [e.strip() for e in re.split(r"^%$", text, flags=re.M) if e.strip()]
    return out


FOREIGN_WORD_RE = re.compile(r"[^\W_]+|[^\w\s]")
"""Words as runs of letters / digits in any script (umlauts, Cyrillic), and punctuation marks."""


@functools.lru_cache(maxsize=2)
def german_docs() -> tuple[tuple[str, ...], ...]:
    folder = _need(FORTUNES_DE, "fortunes-de", "german")
    return tuple(tuple(FOREIGN_WORD_RE.findall(d.lower())) for d in fortunes(folder))


LEAK_WORDS = 8
"""A downstream sentence counts as in a text when its first LEAK_WORDS words are a run of the
text's words (a shorter sentence -- "the dog barked all night" -- is common English, not a
leak)."""


def wordnet_openings(folder: str) -> set[tuple[str, ...]]:
    """The first LEAK_WORDS words of every sentence a downstream task reads: each gloss (the
    single-sentence tasks), each definition and usage example (the sentence-pair tasks)."""
    from reasonlab.tasks.corpora import wordnet_glosses
    from reasonlab.tasks.wordnet_graph import synsets

    texts = list(wordnet_glosses(folder))
    for s in synsets(folder).values():
        texts += [s.definition, *s.examples]
    return {tuple(t[:LEAK_WORDS]) for t in map(tokenize, texts) if len(t) >= LEAK_WORDS}


def leaks(text: str, openings: set[tuple[str, ...]]) -> bool:
    t = tokenize(text)
    return any(tuple(t[i : i + LEAK_WORDS]) in openings for i in range(len(t) - LEAK_WORDS + 1))


@functools.lru_cache(maxsize=2)
def english_fortunes(wordnet: str = WORDNET_DIR) -> tuple[str, ...]:
    """The English fortunes, less any that quotes a WordNet sentence (10 do: Emerson's
    "a foolish consistency ...", Lincoln's "dedicated to the proposition ...")."""
    folder = _need(FORTUNES_EN + "/fortunes", "fortunes", "english-fortunes").parent
    openings = wordnet_openings(wordnet)
    return tuple(f for f in fortunes(folder) if not leaks(f, openings))


JS_TOKEN_RE = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)
  | (?P<token>[A-Za-z_$][\w$]*|\d+(?:\.\d+)?|===|!==|=>|==|!=|<=|>=|&&|\|\||\+\+|--|[^\s\w])
""", re.S | re.X)
"""JavaScript tokens: identifiers, numbers, multi-character operators, single punctuation; a
string literal is one token; comments are matched (so that `//` inside a string is not one) and
dropped. Regular-expression literals are not recognised (their characters come out as
punctuation) -- a tokeniser, not a parser."""


def js_tokens(source: str) -> list[list[str]]:
    """The tokens of each line of `source`, comments stripped (a block comment's lines vanish)."""
    lines: dict[int, list[str]] = {}
    line = pos = 0
    for m in JS_TOKEN_RE.finditer(source):
        line += source.count("\n", pos, m.start())  # the line the token starts on
        pos = m.start()
        if m.lastgroup != "comment":
            lines.setdefault(line, []).append(m.group())
    return list(lines.values())


@functools.lru_cache(maxsize=2)
def javascript_docs() -> tuple[tuple[str, ...], ...]:
    src = _need(TYPESCRIPT_JS, "node-typescript", "javascript").read_text(
        encoding="utf-8", errors="replace")[:JS_MAX_CHARS]
    lines = js_tokens(src)
    return tuple(tuple(t for line in lines[i : i + JS_LINES_PER_DOC] for t in line)
                 for i in range(0, len(lines), JS_LINES_PER_DOC))


def protein_sequences(text: str) -> list[str]:
    """The sequences of a Swiss-Prot flat file (after `SQ`, to `//`), or of a FASTA / PIR file
    (after a `>` header; PIR's `>P1;` header is followed by one description line)."""
    seqs: list[list[str]] = []
    mode = None
    for line in text.splitlines():
        if line.startswith("SQ "):
            seqs.append([])
            mode = "seq"
        elif line.startswith("//"):
            mode = None
        elif line.startswith(">"):
            seqs.append([])
            mode = "description" if line[3:4] == ";" else "seq"
        elif mode == "description":
            mode = "seq"
        elif mode == "seq":
            seqs[-1].append(re.sub(r"[^A-Za-z]", "", line).upper())
    return ["".join(s) for s in seqs]


@functools.lru_cache(maxsize=2)
def amino_docs() -> tuple[tuple[str, ...], ...]:
    """Distinct protein sequences (>= 20 residues, every letter an amino-acid code, under half
    of them A/C/G/T/U/N: not a nucleotide sequence), one residue a token."""
    root = _need(EMBOSS_TEST, "emboss-test", "amino")
    seen: dict[str, None] = {}
    for f in PROTEIN_FILES:
        for s in protein_sequences((root / f).read_text(encoding="latin-1")):
            if len(s) >= 20 and set(s) <= AMINO_LETTERS and \
                    sum(c in "ACGTUN" for c in s) < len(s) / 2:
                seen[s] = None
    return tuple(tuple(s) for s in seen)


# -------------------------------------------------------------------- ids and splits


def rank_vocabulary(docs: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """The corpus's token types by decreasing count, ties alphabetical."""
    counts = Counter(t for d in docs for t in d)
    return tuple(sorted(counts, key=lambda t: (-counts[t], t)))


def rank_encode(docs: tuple[tuple[str, ...], ...], words: WordVocab) -> list[np.ndarray]:
    """Each document as ids by frequency rank: the r-th type -> words.word_ids[r], [UNK] past
    the vocabulary."""
    ids = {t: int(words.word_ids[r]) if r < len(words.word_ids) else UNK_ID
           for r, t in enumerate(rank_vocabulary(docs))}
    return [np.asarray([ids[t] for t in d], dtype=np.int64) for d in docs]


def split_stream(docs: list[np.ndarray], config: MLMConfig) -> dict[str, np.ndarray]:
    """Documents shuffled with split_seed, the last val_fraction held out, each + [SEP]."""
    order = np.random.default_rng(config.split_seed).permutation(len(docs))
    n_val = max(1, int(len(docs) * config.val_fraction))
    parts = {"train": order[:-n_val], "test": order[-n_val:]}
    return {s: np.concatenate([np.append(docs[i], SEP_ID) for i in idx])
            for s, idx in parts.items()}


def _foreign(load: Callable[[], tuple[tuple[str, ...], ...]], doc: str
             ) -> Callable[[WordVocab, MLMConfig], dict[str, np.ndarray]]:
    def corpus(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
        return split_stream(rank_encode(load(), words), config)

    corpus.__doc__ = doc
    return corpus


FOREIGN = {"german": german_docs, "javascript": javascript_docs, "amino": amino_docs}
"""The corpora with a vocabulary of their own."""


def own_tokens(name: str, words: WordVocab) -> list[str]:
    """id -> the foreign corpus's token of that rank (what `reasonlab data corpus` prints):
    the specials and [UNK] as themselves, an id past the corpus's types as [UNK]."""
    types = rank_vocabulary(FOREIGN[name]())
    first = int(words.word_ids[0])
    return [t if i < first else (types[i - first] if i - first < len(types) else "[UNK]")
            for i, t in enumerate(words.vocab.tokens)]


CORPORA.register("german")(_foreign(german_docs, "German fortune cookies (Debian fortunes-de), "
                                    "ids by the corpus's own frequency rank."))
CORPORA.register("javascript")(_foreign(javascript_docs, "The TypeScript compiler's JavaScript "
                                        "(Debian node-typescript), comments stripped, ids by "
                                        "frequency rank."))
CORPORA.register("amino")(_foreign(amino_docs, "Protein sequences of EMBOSS's test data (Debian "
                                   "emboss-test), one residue a token: a toy."))


@CORPORA.register("english-fortunes")
def english_fortunes_corpus(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
    """English fortune cookies (Debian fortunes), with the English word vocabulary."""
    docs = [words.encode(d) for d in english_fortunes(config.path or WORDNET_DIR)]
    return split_stream([d for d in docs if len(d)], config)



@CORPORA.register("shuffle-64-fortunes")
def shuffle_fortunes(words: WordVocab, config: MLMConfig) -> dict[str, np.ndarray]:
    """english-fortunes shuffled within windows of 64 tokens (the follow-up's Shuffle-64 over
    English that no downstream task uses)."""
    return {s: shuffle_windows(np.random.default_rng([config.split_seed, k]), ids, 64)
            for k, (s, ids) in enumerate(english_fortunes_corpus(words, config).items())}
