"""WordNet sentence-pair tasks (tasks/gloss_pairs.py) standing in for the seed's sentence-pair
GLUE tasks (Chiang & Lee; seed: frozen-pretrained-transformers.txt, second half, "Results":
STS-B graded, MRPC / QNLI binary). Path similarity is checked against a naive reference that
enumerates every hypernym path; labels against `solve`, which reads the text alone."""

from __future__ import annotations

import numpy as np
import pytest

from reasonlab.tasks.base import build_task
from reasonlab.tasks.corpora import WORDNET_DIR
from reasonlab.tasks.gloss_pairs import GRADES, grade, naive_distance
from reasonlab.tasks.wordnet_graph import path_distance, path_similarity, synsets
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet


def key(lemma: str, definition_word: str) -> str:
    return next(k for k, s in synsets(WORDNET_DIR).items()
                if k[0] == "n" and lemma in s.lemmas and definition_word in s.definition)


def test_path_distance_matches_the_naive_reference_and_known_values():
    g = synsets(WORDNET_DIR)
    dog, cat = key("dog", "Canis"), key("cat", "feline mammal")
    assert path_distance(g, dog, dog) == 0
    assert path_distance(g, dog, cat) == naive_distance(g, dog, cat) == 4  # via carnivore
    assert path_similarity(g, dog, cat) == pytest.approx(0.2)  # NLTK's dog-cat value
    rng = np.random.default_rng(0)
    nouns = [k for k in g if k[0] == "n"]
    for a, b in rng.choice(nouns, size=(40, 2)):
        assert path_distance(g, a, b) == naive_distance(g, a, b)


def test_grades_cover_every_distance_once():
    assert [grade(d) for d in range(1, 10)] == [4, 3, 2, 2, 1, 1, 0, 0, 0]
    assert len(GRADES) == 5


@pytest.mark.parametrize("pair", ["similarity", "definition"])
def test_labels_agree_with_the_reference_and_splits_are_disjoint(pair):
    task = build_task({"name": "gloss_pair", "pair": pair, "words": 2000})
    train, test = task.keys("train"), task.keys("test")
    assert not set(train) & set(test)
    g = task.graph
    assert not {g[k].definition for k in train} & {g[k].definition for k in test}
    batch = task.sample(np.random.default_rng(1), 60, "test")
    assert (batch.tokens[:, 0] == 2).all()  # [CLS]
    labels = np.bincount(batch.labels[:, 0].numpy(), minlength=task.n_classes)
    assert (labels > 0).all()  # every grade / both answers occur
    solved = agree = 0
    for i in range(len(batch)):
        ans = task.solve(task.render(batch, i).rsplit(" -> ", 1)[0])
        if ans:
            solved += 1
            agree += ans["0"] == str(int(batch.labels[i, 0]))
    assert solved >= 45 and agree == solved


def test_definition_pair_blanks_the_word():
    from reasonlab.tasks.gloss_pairs import blank

    assert blank("the dog barked all night", ("dog", "domestic dog")) == ("the ", " barked all night")
    assert blank("hotdogs", ("dog",)) is None


@pytest.mark.parametrize("negatives", ["random", "same-word"])
def test_definition_negatives_follow_their_reading(negatives):
    """random: a "no" definition is another synset of the split with the example's part of
    speech; same-word: another sense of the blanked word whenever the split has one."""
    task = build_task({"name": "gloss_pair", "pair": "definition", "words": 2000,
                       "negatives": negatives})
    g = task.graph
    rng = np.random.default_rng(3)
    kinds = {}
    for split in ("train", "test"):
        members = set(task.keys(split))
        lemma_index: dict[str, set[str]] = {}
        for k in members:
            for lem in g[k].lemmas:
                lemma_index.setdefault(lem, set()).add(k)
        same = other = 0
        for _ in range(400):
            a, i, b, label = task.definition_pair(rng, split)
            assert a in members and b in members and i < len(g[a].examples)
            if label == 1:
                assert b == a
                continue
            assert b != a
            senses = set().union(*(lemma_index[lem] for lem in g[a].lemmas)) - {a}
            if negatives == "random":
                assert b[0] == a[0]
            elif senses:
                assert b in senses
            same += bool(set(g[a].lemmas) & set(g[b].lemmas))
            other += 1
        kinds[split] = same / other
    if negatives == "same-word":  # the reading's known skew: fewer word senses in the test
        assert kinds["train"] > kinds["test"] + 0.15
    else:
        assert max(kinds.values()) < 0.05
