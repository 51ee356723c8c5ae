"""artificial._support.paper_table_analysis: batched forward passes give the one-pass Spearman
correlation, each column is scored by its metric, and a trial of the paper scale (n_test=N)
evaluates N examples."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from reasonlab.runs import execute, load_run_model, run_dir_for
from reasonlab.studies.kit.base import Results
from reasonlab.studies.artificial._support.paper_table import RECIPES, runs
from reasonlab.studies.artificial.common import FINETUNE, SCRATCH
from reasonlab.studies.artificial._support import paper_table_analysis
from reasonlab.studies.artificial._support.paper_table_analysis import similarity_spearman
from reasonlab.tasks.base import build_task


def test_batched_spearman_is_the_one_pass_spearman(tmp_path):
    (spec,) = [s for s in runs("smoke", 1) if s.factors["phase"] == FINETUNE
               and s.factors["task"] == "similarity" and s.factors["init"] == SCRATCH]
    execute(spec.config, tmp_path, quiet=True)
    run = run_dir_for(spec.config, tmp_path)
    n = 50
    # the naive reference: every pair in one forward pass
    config, model = load_run_model(run)
    batch = build_task(config.task).sample(np.random.default_rng(0), n, "test")
    with torch.no_grad():
        logits = model(batch.tokens, batch.label_pos, batch.pad_mask)[:, 0].float()
    pred = (logits.softmax(-1) * torch.arange(logits.shape[-1])).sum(-1).numpy()
    gold = 1 / (1 + batch.meta["distance"][:, 0].numpy())
    want = float(spearmanr(pred, gold).statistic)
    assert np.isfinite(want) and want != 0.0  # a real ranking, not the constant-prediction 0
    for k in (7, 50, 500):  # uneven, exact and larger than n
        assert abs(similarity_spearman(run, n, batch_size=k) - want) < 1e-9, k


def test_a_trial_scores_the_examples_its_n_test_allows(monkeypatch):
    """scores() scores each column by its metric: accuracy from the run's final evaluation,
    the others from the run's model on the scale's eval_pairs (smoke: `similarity`) or, at
    paper scale, on each run's test split (GLUE's whole validation split), or the overridden
    n_test when that is smaller (Results.sample_size), as the other analyses of a trial do."""
    asked = []
    monkeypatch.setattr(paper_table_analysis, "run_score",
                        lambda run_dir, metric, n: asked.append((metric, n)) or 0.5)

    def ask(scale, overrides):
        asked.clear()
        specs = [s for s in runs(scale, 1) if s.factors["phase"] == FINETUNE]
        pairs = [(s, {"dir": "unused", "final": {"acc": 0.25}}) for s in specs]
        s = paper_table_analysis.scores(Results(pairs, scale, 1, overrides))
        return s, sorted(set(asked))

    s, got = ask("smoke", {})
    assert got == [("spearman", RECIPES["smoke"]["eval_pairs"])]
    assert list(s) == ["similarity", "definition", "supersense", "pos"]
    assert all((v == 0.25).all() for v in s["definition"].values())
    s, got = ask("paper", {})
    assert RECIPES["paper"]["eval_pairs"] is None
    assert got == sorted([("spearman", 1500), ("f1", 40_430), ("matthews", 1043), ("f1", 408)])
    assert list(s) == ["STS-B", "QNLI", "QQP", "CoLA", "SST-2", "MNLI", "MRPC", "RTE"]
    assert all((s[t][SCRATCH] == 0.25).all() for t in ("QNLI", "SST-2", "MNLI", "RTE"))
    assert all((s[t][SCRATCH] == 0.5).all() for t in ("STS-B", "QQP", "CoLA", "MRPC"))
    for overrides, want in (({"n_test": 16}, 16), ({"n_test": 10**6}, None)):
        _, got = ask("paper", overrides)
        assert {n for _, n in got} == ({16} if want else {1500, 40_430, 1043, 408}), overrides


def outputs(rng: np.random.Generator, n: int, classes: int) -> paper_table_analysis.Outputs:
    probs = rng.dirichlet(np.ones(classes), n).astype(np.float32)
    return paper_table_analysis.Outputs(probs, rng.integers(0, classes, n), rng.normal(size=n))


@pytest.mark.parametrize("seed", range(5))
def test_metric_registry_is_glues_metrics(seed):
    """On random predictions, each metric is the textbook one, written out here: Matthews
    correlation and F1 of the positive class from the confusion counts, Spearman as the
    Pearson correlation of the ranks (no ties in continuous data), and they equal scikit-learn's
    and scipy's."""
    from sklearn.metrics import f1_score, matthews_corrcoef

    metrics = paper_table_analysis.METRICS
    o = outputs(np.random.default_rng(seed), 200, 2)
    pred, y = o.pred, o.labels
    tp, tn = int(((pred == 1) & (y == 1)).sum()), int(((pred == 0) & (y == 0)).sum())
    fp, fn = int(((pred == 1) & (y == 0)).sum()), int(((pred == 0) & (y == 1)).sum())
    mcc = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert metrics["matthews"].of(o) == pytest.approx(mcc, abs=1e-12)
    assert metrics["matthews"].of(o) == pytest.approx(matthews_corrcoef(y, pred), abs=1e-12)
    assert metrics["f1"].of(o) == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12)
    assert metrics["f1"].of(o) == pytest.approx(f1_score(y, pred), abs=1e-12)
    assert metrics["accuracy"].of(o) == pytest.approx((tp + tn) / 200, abs=1e-12)
    o = outputs(np.random.default_rng(seed), 200, 5)  # STS-B's five grades
    grade = (o.probs * np.arange(5)).sum(-1)  # the softmax's expected grade
    ranks = [np.argsort(np.argsort(v)) for v in (grade, o.gold)]
    assert metrics["spearman"].of(o) == pytest.approx(np.corrcoef(*ranks)[0, 1], abs=1e-9)
    assert metrics["spearman"].of(o) == pytest.approx(spearmanr(grade, o.gold).statistic,
                                                      abs=1e-9)


def test_metrics_of_a_constant_prediction():
    """A classifier that answers one class: Matthews and Spearman 0 (not NaN), F1 0 when it
    never answers the positive class, and the F1 of always answering it when it does."""
    metrics = paper_table_analysis.METRICS
    y = np.array([0, 1, 1, 0, 1])
    Outputs = paper_table_analysis.Outputs
    never = Outputs(np.tile([0.9, 0.1], (5, 1)), y, np.arange(5.0))
    always = Outputs(np.tile([0.1, 0.9], (5, 1)), y, np.arange(5.0))
    assert metrics["matthews"].of(never) == 0.0 and metrics["spearman"].of(never) == 0.0
    assert metrics["f1"].of(never) == 0.0
    assert metrics["f1"].of(always) == pytest.approx(2 * 3 / (3 + 5))  # 2p / (1 + p), p = 3/5
