"""ListOps (LRA generator, FPT's two tokenisations): labels against a recursive-descent evaluator
written here, the benchmark's generator facts, the tokenisations and the majority baseline."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import Batch, build_task
from reasonlab.tasks.listops import LRA_LENGTHS, SHORT_LENGTHS, majority_accuracy


def reference(words: list[str], i: int = 0, depth: int = 1) -> tuple[int, int, int, list[int]]:
    """Recursive descent over `[OP a b ... ]`: (value, next index, deepest node depth, argument
    counts). Written from the operators' definitions, independently of the task module."""
    w = words[i]
    if w.isdigit():
        return int(w), i + 1, depth, []
    assert w in ("[MIN", "[MAX", "[MED", "[SM"), w
    args, deepest, counts = [], depth, []
    i += 1
    while words[i] != "]":
        v, i, d, c = reference(words, i, depth + 1)
        args.append(v)
        deepest, counts = max(deepest, d), counts + c
    s = sorted(args)
    value = {"[MIN": s[0], "[MAX": s[-1], "[SM": sum(s) % 10,
             # median; the benchmark's int(np.median) floors the mean of the middle two
             "[MED": (s[(len(s) - 1) // 2] + s[len(s) // 2]) // 2}[w]
    return value, i + 1, deepest, counts + [len(args)]


def evaluate(text: str) -> int:
    words = text.split()
    value, end, _, _ = reference(words)
    assert end == len(words)
    return value


def test_paper_example_and_definition():
    # "Input: sequence of list operations resulting in a single digit
    #  [ MAX 4 3 [ MIN 2 3 ] 1 0 ]   Output: the result of the input operations: 4"
    # (FPT, section "Evaluation tasks - 3. ListOps"; written here in the benchmark's spelling)
    task = build_task({"name": "listops", **SHORT_LENGTHS})
    example = "[MAX 4 3 [MIN 2 3 ] 1 0 ]"
    assert task.solve(example) == {"value": "4"} and evaluate(example) == 4
    b = task.sample(np.random.default_rng(0), 200)
    assert set(b.labels.flatten().tolist()) <= set(range(10))  # a single digit
    assert task.n_classes == 10


@pytest.mark.parametrize("lengths, n", [(SHORT_LENGTHS, 200), (LRA_LENGTHS, 12)])
def test_labels_match_the_independent_evaluator_and_the_solver(lengths, n):
    task = build_task({"name": "listops", **lengths})
    b = task.sample(np.random.default_rng(1), n)
    for i in range(n):
        text = task.render(b, i)
        length = len(text.split())
        assert lengths["min_length"] < length < lengths["max_length"]
        assert int(b.label_pos[i, 0]) == length - 1 and int(b.pad_mask[i].sum()) == length
        assert evaluate(text) == int(b.labels[i, 0])
        assert task.solve(text) == task.example_json(b, i)["labels"]
    assert b.tokens.shape == (n, lengths["max_length"] - 1)


def test_med_of_an_even_count_floors_like_the_benchmark():
    task = build_task({"name": "listops", **SHORT_LENGTHS})
    assert task.solve("[MED 1 2 ]") == {"value": "1"} and evaluate("[MED 1 2 ]") == 1
    assert task.solve("[MED 9 0 4 8 ]") == {"value": "6"} and evaluate("[MED 9 0 4 8 ]") == 6
    assert task.solve("[SM 9 8 7 ]") == {"value": "4"}


def test_generator_has_the_benchmarks_leaf_probability_argument_counts_and_depth_limit():
    # LRA: a node above the depth limit is a digit with probability 0.75; operators take
    # 2..10 arguments uniformly; at max_depth every node is a digit.
    free = build_task({"name": "listops", "min_length": 0, "max_length": 10**6, "max_depth": 4})
    exprs, _ = free.expressions(np.random.default_rng(2), 4000)
    assert abs(np.mean([len(e) == 1 for e in exprs]) - 0.75) < 0.03  # sd 0.007
    counts = Counter(c for e in exprs if len(e) > 1 for c in reference(list(e))[3])
    assert set(counts) == set(range(2, 11))
    assert all(abs(counts[k] / sum(counts.values()) - 1 / 9) < 0.02 for k in counts)
    assert Counter(e[0] for e in exprs if len(e) > 1).keys() == {"[MIN", "[MAX", "[MED", "[SM"}
    shallow = build_task({"name": "listops", "min_length": 0, "max_length": 10**6,
                          "max_depth": 3})
    depths = [reference(list(e))[2] for e in shallow.expressions(np.random.default_rng(3), 2000)[0]]
    assert max(depths) == 3  # reached, never exceeded: ops only above depth 3


def test_fpt2021_drops_closing_brackets_and_truncates_at_512():
    lra = build_task({"name": "listops"})
    fpt = build_task({"name": "listops", "tokenisation": "fpt2021"})
    assert len(lra.vocab) == 16 and len(fpt.vocab) == 15  # the authors' input_dim = 15
    assert fpt.seq_len == 512
    a, f = lra.sample(np.random.default_rng(4), 40), fpt.sample(np.random.default_rng(4), 40)
    assert torch.equal(a.labels, f.labels)  # the same expressions
    truncated = 0
    for i in range(40):
        words = lra.render(a, i).split()
        kept = [w.lstrip("[") for w in words if w != "]"]
        assert fpt.render(f, i).split() == kept[:512]
        truncated += len(kept) > 512
    assert 0.7 <= truncated / 40 <= 1.0  # the paper: 88% of sequences are truncated
    with pytest.raises(ParseError, match="closing brackets"):
        fpt.solve(fpt.render(f, 0))


def test_splits_are_distinct_disjoint_and_reproducible():
    task = build_task({"name": "listops", **SHORT_LENGTHS})
    tr, te = task.splits(np.random.default_rng(5), 150, 50)
    tr2, _ = task.splits(np.random.default_rng(5), 150, 50)
    assert torch.equal(tr.tokens, tr2.tokens)
    rows = {r.tobytes() for r in torch.cat([tr.tokens, te.tokens]).numpy()}
    assert len(rows) == 200


def test_majority_accuracy_against_counting():
    def batch(labels):
        y = torch.tensor(labels)[:, None]
        return Batch(tokens=torch.ones(len(labels), 1, dtype=torch.long), label_pos=y * 0,
                     labels=y, loss_mask=torch.ones_like(y, dtype=torch.bool))

    assert majority_accuracy(batch([3, 3, 1, 2]), batch([3, 0, 0, 3, 1])) == pytest.approx(0.4)
    task = build_task({"name": "listops", **SHORT_LENGTHS})
    tr, te = task.splits(np.random.default_rng(6), 200, 100)
    top = Counter(tr.labels.flatten().tolist()).most_common(1)[0][0]
    assert majority_accuracy(tr, te) == pytest.approx(np.mean(te.labels.flatten().numpy() == top))


def test_config_errors():
    with pytest.raises(ConfigError, match="strictly between"):
        build_task({"name": "listops", "min_length": 10, "max_length": 11})
    with pytest.raises(ConfigError, match="tokenisation"):
        build_task({"name": "listops", "tokenisation": "bpe"})
