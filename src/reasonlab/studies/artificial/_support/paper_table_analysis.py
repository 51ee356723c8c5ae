"""`artificial-pretraining`'s scores, table and figure in the seed's layout (Chiang & Lee, arXiv
2012.11995; the seed's "Results" table: row groups 1-5, eight GLUE columns and their Avg).

Scores: accuracy for the classification tasks; for `similarity`, as STS-B is scored, the
Spearman correlation between the predicted grade (the expectation of the classifier's softmax
over the five grades) and the gold path similarity, on `eval_pairs` fresh pairs of held-out
synsets (the run's final model, loaded from its checkpoint).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import spearmanr

from reasonlab.report import fmt_seeds
from reasonlab.runs import load_run_model
from reasonlab.studies.artificial._support.paper_table import (DOWNSTREAM_TASKS, FOLLOWUP_GAIN,
                                                              GROUPS, RECIPES, ROWS, SEED_COLUMNS,
                                                              SEED_TABLE, TASK_LIKE, seed_avg,
                                                              tasks)
from reasonlab.studies.artificial._support.paper_table_verdicts import Scores, avg
from reasonlab.studies.artificial.common import FINETUNE, PRETRAIN, SCRATCH
from reasonlab.studies.kit.base import Report, Results
from reasonlab.tasks.base import build_task


@torch.no_grad()
def similarity_spearman(run_dir: Path, n: int, batch_size: int | None = None) -> float:
    """Spearman correlation of the predicted grade (softmax expectation) with the gold path
    similarity 1 / (1 + distance), on n pairs of held-out synsets (rng 0: the same pairs for
    every run of a task config); 0 for a constant prediction. Forward passes of `batch_size`
    pairs (default: the run's eval_batch_size)."""
    config, model = load_run_model(run_dir)
    task = build_task(config.task)
    batch = task.sample(np.random.default_rng(0), n, "test")
    device = next(model.parameters()).device
    # in batches of the run's eval_batch_size: the paper scale's 5,000 pairs of 127 tokens in
    # one BERT-base forward pass took 23 GB (its 3072-wide MLP activations alone are 7.8 GB)
    k = batch_size or config.eval_batch_size
    logits = torch.cat([model(b.tokens, b.label_pos, b.pad_mask)[:, 0].float()  # [k, grades]
                        for b in (batch[i: i + k].to(device) for i in range(0, n, k))])
    grades = torch.arange(logits.shape[-1], device=device, dtype=torch.float32)
    pred = (logits.softmax(-1) * grades).sum(-1).cpu().numpy()
    gold = 1 / (1 + batch.meta["distance"][:, 0].numpy())
    rho = float(spearmanr(pred, gold).statistic)
    return rho if np.isfinite(rho) else 0.0  # a constant prediction: no correlation (scipy: NaN)


def scores(results: Results) -> Scores:
    """task -> init -> per-seed score (seed order)."""
    out: Scores = {}
    n = results.sample_size(RECIPES[results.scale]["eval_pairs"])
    for t, by_task in results.where(phase=FINETUNE).by("task").items():
        out[t] = {}
        for i, runs_ in by_task.by("init").items():
            runs_ = sorted(runs_, key=lambda sr: sr[0].seed)
            out[t][i] = np.asarray([
                similarity_spearman(Path(r["dir"]), n) if t == "similarity"
                else float(r["final"]["acc"]) for _, r in runs_])
    return {t: out[t] for t in DOWNSTREAM_TASKS if t in out}


def seed_table(rep: Report, results: Results, s: Scores) -> None:
    """Ours per task and averaged beside the seed's eight columns and Avg, row by row in the
    seed's order and groups; the follow-up's corpora as labelled extra rows."""
    ours = list(s)
    header = (["", "seed row", "ours"] + [f"{t} ({TASK_LIKE[t]})" for t in ours]
              + ["Avg (ours)"] + [f"seed {c}" for c in SEED_COLUMNS] + ["seed Avg"])
    rows = []
    for g, (row, init) in zip(GROUPS, ROWS.items()):
        if init not in s[ours[0]]:
            continue
        rows.append([str(g), row, init] + [fmt_seeds(s[t][init]) for t in ours]
                    + [f"{avg(s, init).mean():.3f}"]
                    + [f"{v:.2f}" for v in SEED_TABLE[row]] + [f"{seed_avg(row):.3f}"])
    scratch = float(avg(s, SCRATCH).mean())
    for init, (name, gain) in FOLLOWUP_GAIN.items():
        if init in s[ours[0]]:
            mean = float(avg(s, init).mean())
            rows.append(["extra", f"follow-up: {name}", init]
                        + [fmt_seeds(s[t][init]) for t in ours]
                        + [f"{mean:.3f} ({100 * (mean - scratch):+.1f} pts)"]
                        + ["-"] * len(SEED_COLUMNS)
                        + [f"follow-up GLUE avg gain {gain:+.1f} pts"])
    base = baselines(results)
    rep.table("The seed's table: ours beside Chiang & Lee's", header, rows,
              after="Ours: mean ± std over units, a unit one seed that pretrains and "
              "fine-tunes (similarity: Spearman correlation with the gold path similarity, as "
              "STS-B; the others: accuracy). Seed: the 'Results' "
              "table of the seed (frozen-pretrained-transformers.txt, second half), its Avg "
              "recomputed as the mean of its eight columns. Extra rows: corpora of the "
              "authors' follow-up (arXiv 2109.03537), its GLUE-average gain over its own "
              "from-scratch 61.6 as the reference. Chance / majority class on our test "
              "splits: " + ", ".join(f"{t} {v}" for t, v in base.items()) + ".")


def baselines(results: Results) -> dict[str, str]:
    """Chance and majority-class scores per task (the seed's No Pre-train row is the learned
    baseline)."""
    out = {"similarity": "0 (Spearman of a constant or random prediction)",
           "definition": "0.5 (balanced)"}
    for t, cfg in tasks(results.scale).items():
        if cfg["name"] == "gloss_class":
            out[t] = f"{build_task(cfg).majority():.3f}"
    return out


def seed_recipes(rep: Report, results: Results) -> Report:
    """The recipes of the pretraining runs and of the no-pretraining fine-tuning arm (a
    pretrained arm differs only in `init_from`)."""
    for part, note in ((results.where(phase=PRETRAIN), "Pretraining runs (one per corpus "
                        "and seed)."),
                       (results.where(phase=FINETUNE, init=SCRATCH), "Fine-tuning runs, "
                        "no-pretraining arm; a pretrained arm is the same with "
                        "`init_from` = its corpus's pretraining run of the same seed.")):
        if part:
            rep.recipe(part, note=note)
    return rep


def seed_sections(rep: Report, results: Results, s: Scores, out: Path) -> None:
    """The seed's table beside ours, the pretraining losses, and the gains as a figure."""
    seed_table(rep, results, s)
    pretraining_table(rep, results)
    plot_seed_table(s, out / "seed_table.png")
    rep.figure("seed_table.png", "Average gain over no pretraining per seed row: ours "
               "(4 WordNet tasks) beside Chiang & Lee's (8 GLUE tasks)")


def pretraining_table(rep: Report, results: Results) -> None:
    """Held-out masked-LM loss and accuracy per corpus, mean ± std over its seeds' runs."""
    runs_ = results.where(phase=PRETRAIN).by("corpus")
    rows = [[c, fmt_seeds([r["final"]["loss"] for _, r in rs]),
             fmt_seeds([r["final"]["acc"] for _, r in rs]), str(len(rs))]
            for c, rs in runs_.items()]
    rep.table("Pretraining: held-out masked-LM loss", ["corpus", "val loss",
                                                       "val masked accuracy", "runs (seeds)"],
              rows, after="Each corpus's held-out stream, mean ± std over its pretraining runs "
              "(one per seed); the corpora differ in entropy, so losses compare runs of one "
              "corpus, not corpora.")


def plot_seed_table(s: Scores, path: Path) -> None:
    """Average gain over scratch per seed row: ours (left bars) and the seed's (right bars)."""
    rows = [(r, i) for r, i in ROWS.items() if i in s[next(iter(s))] and i != SCRATCH]
    ours = [100 * (avg(s, i).mean() - avg(s, SCRATCH).mean()) for _, i in rows]
    seed = [100 * (seed_avg(r) - seed_avg("No Pre-train")) for r, _ in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.75 * len(rows)), 4.2))
    ax.bar(x - 0.2, ours, 0.4, label="ours (4 tasks, mean over seeds)")
    ax.bar(x + 0.2, seed, 0.4, color="grey", label="Chiang & Lee (8 GLUE tasks)")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, [f"{r}\n{i}" for r, i in rows], rotation=45, ha="right", fontsize=7)
    ax.set(ylabel="average gain over no pretraining (points)",
           title="Pretraining without human language: gain over scratch per seed row")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
