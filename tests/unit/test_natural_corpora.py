"""The seed's natural corpora (Chiang & Lee, arXiv 2012.11995; seed: frozen-pretrained-
transformers.txt, second half, "Baseline datasets" / "Comparison datasets": "tokenized
JavaScript without comments ... vocab size is 30k", "proteins", "esoteric human language:
Kannada ... chosen to differ significantly from target language", "English wikipedia masked
language model") and the English corpus disjoint from every downstream split.

Each property is checked with code written apart from the generator: ids by frequency rank
from a fresh count of the emitted stream, comments searched for in the raw tokens, and
downstream sentences searched for as token runs in every pretraining stream.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from reasonlab.tasks import natural
from reasonlab.tasks.base import build_task
from reasonlab.tasks.corpora import WORDNET_DIR
from reasonlab.tasks.words import SEP_ID, UNK_ID
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet
WORDS = 2000


def streams(name: str) -> dict[str, np.ndarray]:
    task = build_task({"name": "mlm", "corpus": name, "words": WORDS, "corpus_tokens": 20_000,
                       "seq_len": 32})
    return task.streams


def installed(path: str) -> pytest.MarkDecorator:
    from pathlib import Path
    return pytest.mark.skipif(not Path(path).exists(), reason=f"{path} not installed "
                              "(scripts/setup.sh installs it)")


def rank_ordered(ids: np.ndarray) -> bool:
    """Ids by frequency rank: counted afresh, a smaller word id never occurs less often than a
    larger one (ties may fall either way only between equal counts)."""
    c = np.bincount(ids[(ids != SEP_ID) & (ids != UNK_ID)])
    used = np.flatnonzero(c)
    return bool(np.all(np.diff(c[used]) <= 0)) and used[0] == 5  # first word id after specials


@pytest.mark.parametrize("name, path", [("german", natural.FORTUNES_DE),
                                        ("javascript", natural.TYPESCRIPT_JS),
                                        ("amino", natural.EMBOSS_TEST)])
def test_foreign_corpora_take_ids_by_their_own_frequency_rank(name, path):
    if not __import__("pathlib").Path(path).exists():
        pytest.skip(f"{path} not installed (scripts/setup.sh installs it)")
    s = streams(name)
    both = np.concatenate([s["train"], s["test"]])
    assert rank_ordered(both)
    broken = both.copy()
    broken[broken == 5] = 6  # the most frequent type written as the second's id
    assert not rank_ordered(broken)


@installed(natural.FORTUNES_DE)
def test_german_is_not_english():
    """Lexical overlap with English, measured: of the 200 most frequent German words, few are
    spelled like any of the 2000 English words (false friends: man, in, so, was, ...), and an id
    names the German word of that rank, not the English one."""
    from reasonlab.tasks.mlm import word_vocab

    english = set(word_vocab(WORDNET_DIR, WORDS).vocab.tokens)
    top = [t for t in natural.rank_vocabulary(natural.german_docs()) if t.isalpha()][:200]
    assert {"der", "die", "und", "nicht"} <= set(top)
    assert sum(t in english for t in top) < 20
    s = streams("german")["train"]
    s = s[(s != UNK_ID) & (s != SEP_ID)]  # UNK: the 42k German types past the 2000 kept
    assert Counter(s.tolist()).most_common(1)[0][0] == 5  # ',' -> the id of English's top word


def test_js_tokeniser_strips_comments_but_not_strings():
    src = 'a = "//x"; // comment\n/* block\n comment */ f(1) === b\n'
    assert natural.js_tokens(src) == [["a", "=", '"//x"', ";"], ["f", "(", "1", ")", "===", "b"]]


@installed(natural.TYPESCRIPT_JS)
def test_javascript_has_no_comments_left():
    toks = [t for d in natural.javascript_docs() for t in d]
    assert len(toks) > 200_000
    assert not any(t.startswith(("//", "/*")) for t in toks)
    assert {"function", "return", "var"} <= set(toks[:20_000])


@installed(natural.EMBOSS_TEST)
def test_amino_is_a_toy_of_protein_sequences():
    docs = natural.amino_docs()
    residues = sum(len(d) for d in docs)
    types = natural.rank_vocabulary(docs)
    assert 150_000 < residues < 250_000 and 20 <= len(types) <= 26
    assert set(types) <= natural.AMINO_LETTERS
    assert natural.protein_sequences(">P1;X\nsome description\nMKV\nLL*\n>y\nAC\n") == [
        "MKVLL", "AC"]


# ------------------------------------------------------------------ disjointness

GRAM = 8


def downstream_sentences() -> list[np.ndarray]:
    """Every sentence any downstream task trains or tests on, encoded: the glosses of the
    single-sentence tasks, the definitions and usage examples of the sentence-pair tasks."""
    from reasonlab.tasks.mlm import word_vocab
    from reasonlab.tasks.wordnet_graph import synsets

    words = word_vocab(WORDNET_DIR, WORDS)
    glosses = build_task({"name": "gloss_class", "words": WORDS})
    texts = [t for s in ("train", "test") for t in glosses.documents(s)[0]]
    for syn in synsets(WORDNET_DIR).values():
        texts += [syn.definition, *syn.examples]
    return [e for e in (words.encode(t) for t in texts) if len(e) >= GRAM]


def known(sentences: list[np.ndarray]) -> list[np.ndarray]:
    """Those whose first GRAM words are all in the vocabulary: runs of [UNK] match anywhere."""
    return [e for e in sentences if (e[:GRAM] != UNK_ID).all()]


def contained(stream: np.ndarray, sentences: list[np.ndarray]) -> int:
    """How many sentences have their first GRAM tokens as a run of `stream` (a sentence inside
    the stream has; so 0 proves none is inside)."""
    grams = set(map(tuple, np.lib.stride_tricks.sliding_window_view(stream, GRAM).tolist()))
    return sum(tuple(e[:GRAM].tolist()) in grams for e in sentences)


@pytest.fixture(scope="module")
def sentences():
    return downstream_sentences()


def test_the_leak_checker_finds_the_glosses_in_the_gloss_corpus(sentences):
    """The checker's power: the follow-up's `english` corpus IS the glosses (its first 200k
    tokens hold a tenth of them)."""
    assert contained(streams("english")["train"][:200_000], sentences) > 0.05 * len(sentences)


@pytest.mark.parametrize("name", ["english-fortunes", "german", "javascript", "amino",
                                  "uniform", "nesting", "nesting-50s", "flat-32"])
def test_no_downstream_sentence_is_in_a_seed_pretraining_corpus(name, sentences):
    """Every natural corpus, and one of each generator family (a generated stream holds an
    English sentence only by chance; shuffle-64-fortunes permutes english-fortunes)."""
    try:
        s = streams(name)
    except Exception as e:  # an absent package: AssetError, reported as a skip
        pytest.skip(str(e))
    for split in ("train", "test"):
        assert contained(s[split], known(sentences)) == 0


@installed(natural.FORTUNES_EN)
def test_english_fortunes_quote_no_wordnet_sentence_word_for_word():
    """On the raw words (no vocabulary, no [UNK]): no fortune kept holds the first 8 words of a
    gloss, definition or example; and the raw package does (famous quotations), so the filter
    is what makes the corpus disjoint."""
    from reasonlab.tasks.corpora import wordnet_glosses
    from reasonlab.tasks.words import tokenize
    from reasonlab.tasks.wordnet_graph import synsets

    texts = list(wordnet_glosses(WORDNET_DIR))
    texts += [t for s in synsets(WORDNET_DIR).values() for t in (s.definition, *s.examples)]
    heads = {tuple(w[:GRAM]) for w in map(tokenize, texts) if len(w) >= GRAM}

    def hits(docs):
        return sum(any(tuple(w[i : i + GRAM]) in heads for i in range(len(w) - GRAM + 1))
                   for w in map(tokenize, docs))

    assert hits(natural.english_fortunes()) == 0
    assert hits(natural.fortunes(__import__("pathlib").Path(natural.FORTUNES_EN))) > 0


@pytest.mark.parametrize("name", ["german", "javascript", "amino", "english-fortunes",
                                  "nesting-uniform", "nesting-50", "nesting-50s"])
def test_cli_prints_every_new_corpus(name, capsys):
    from reasonlab.cli import main

    assert main(["data", "corpus", name, f"words={WORDS}", "corpus_tokens=5000", "--n", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(len(line.split(" ")) == 32 for line in lines)
    if name == "amino":  # printed in its own tokens, residues, not the English words
        assert set(" ".join(lines).split()) <= natural.AMINO_LETTERS | {"[SEP]"}


def test_a_missing_package_is_one_line_saying_how_to_get_it(monkeypatch, capsys):
    from reasonlab.cli import main

    monkeypatch.setattr(natural, "EMBOSS_TEST", "/nonexistent/EMBOSS/test")
    natural.amino_docs.cache_clear()
    try:
        assert main(["data", "corpus", "amino", "corpus_tokens=5000", "--n", "1",
                     "split_seed=7"]) == 2
    finally:
        natural.amino_docs.cache_clear()
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "apt-get install emboss-test" in err
    assert len(err.splitlines()) == 1
