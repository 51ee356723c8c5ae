"""artificial._support.paper_table_analysis.similarity_spearman: batched forward passes give
the one-pass answer, and a trial of the paper scale (n_test=N) evaluates N pairs."""

from __future__ import annotations

import numpy as np
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


def test_a_trial_scores_the_pairs_its_n_test_allows(monkeypatch):
    """scores() asks similarity_spearman for the scale's eval_pairs, or the overridden n_test
    when that is smaller (Results.sample_size), as the other analyses of a trial run do."""
    asked = []
    monkeypatch.setattr(paper_table_analysis, "similarity_spearman",
                        lambda run_dir, n: asked.append(n) or 0.5)
    specs = [s for s in runs("paper", 1) if s.factors["phase"] == FINETUNE
             and s.factors["task"] == "similarity"]
    pairs = [(s, {"dir": "unused", "final": {"acc": 0.0}}) for s in specs]
    full = RECIPES["paper"]["eval_pairs"]
    for overrides, want in (({}, full), ({"n_test": 16}, 16), ({"n_test": 10**6}, full)):
        asked.clear()
        paper_table_analysis.scores(Results(pairs, "paper", 1, overrides))
        assert asked == [want] * len(specs), overrides
