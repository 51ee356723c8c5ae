"""The artificial-pretraining studies' figures and tables: gains per corpus, head scores of the
pretrained encoders on LEGO sentences before fine-tuning (Chiang & Lee; LEGO §4.2)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.analysis.attention import attention_patterns, top_heads
from reasonlab.report import fmt_seeds, grouped_bars, plot_first_pass
from reasonlab.studies.artificial.common import (ALBERT, BERT, ENGLISH_TASKS, FINETUNE, LISTOPS,
                                                 PAPER_GAIN, PRETRAIN, SCRATCH, corpora,
                                                 english_mean, tasks)
from reasonlab.studies.artificial.verdicts import Scores
from reasonlab.studies.kit.base import Report, Results, RunSpec
from reasonlab.studies.lego.analysis import lego_head_scores
from reasonlab.studies.lego.verdicts import first_pass_steps
from reasonlab.tasks.base import build_task
from reasonlab.tasks.listops import majority_accuracy
from reasonlab.train.loop import build_model


def gain_tables(rep: Report, results: Results, acc: dict[str, dict[str, np.ndarray]]
                ) -> dict[str, dict[str, float]]:
    """The paper's layout: gain over scratch per corpus per task (corpora by the paper's
    gain), the paper's GLUE-average gain beside; then each corpus's pretraining loss. Returns
    corpus -> task -> gain for the figure."""
    scale = results.scale
    names = [c for c in sorted(corpora(scale), key=lambda c: -PAPER_GAIN.get(c, -99))]
    gains = {c: {t: float(acc[t][c].mean() - acc[t][SCRATCH].mean()) for t in acc}
             for c in names}
    scratch = float(english_mean(acc, SCRATCH).mean())
    rows = [[SCRATCH + " (accuracy)"] + [fmt_seeds(acc[t][SCRATCH]) for t in acc]
            + [f"{scratch:.3f}", "61.6 (GLUE avg)"]]
    for c in names:
        rows.append([c] + [f"{100 * gains[c][t]:+.1f}" for t in acc]
                    + [f"{100 * (float(english_mean(acc, c).mean()) - scratch):+.1f}",
                       f"{PAPER_GAIN[c]:+.1f}" if c in PAPER_GAIN else "-"])
    first = results.where(phase=FINETUNE).first
    majority = {t: build_task(tasks(scale)[t]).majority() for t in ENGLISH_TASKS}
    if LISTOPS in acc:  # the fine-tuning task's most frequent value among 2000 fresh
        # expressions, scored on 1000 more (not the runs' own draws: same distribution)
        listops = results.where(phase=FINETUNE, task=LISTOPS).first
        train, test = build_task(listops.config.task).splits(
            np.random.default_rng(0), 2000, 1000)
        majority[LISTOPS] = majority_accuracy(train, test)
    rep.table("Gain over scratch per corpus per task (accuracy points, mean over seeds)",
              ["corpus"] + list(acc) + ["English tasks (mean)",
                                        "paper: GLUE average gain"], rows,
              after="First row: scratch's accuracy (mean ± std over seeds). Majority-class "
              "accuracy: " + ", ".join(f"{t} {v:.3f}" for t, v in majority.items())
              + f"; LEGO chance 0.5. {first.config.steps} fine-tuning steps per run. The "
              "paper's column is its GLUE average gain over a from-scratch 61.6 "
              "(docs/papers.md §4); Kannada (+14.7) has no counterpart here.")
    pre = [[s.factors["corpus"], f"{r['final']['loss']:.3f}", f"{r['final']['acc']:.3f}"]
           for s, r in results.where(phase=PRETRAIN)]
    rep.table("Pretraining: validation masked-LM loss", ["corpus", "val loss",
                                                           "val masked accuracy"], pre,
              after="Held-out stream of each corpus; the corpora differ in entropy, so "
              "losses compare runs of one corpus, not corpora.")
    return gains


def plot_gains(gains: dict[str, dict[str, float]], path: Path) -> None:
    """Gain over scratch per corpus: ours per task (left), the paper's GLUE average (right)."""
    names = list(gains)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [3, 1]})
    grouped_bars(ax, {c: {t: 100 * g for t, g in by.items()} for c, by in gains.items()})
    ax.axhline(0, color="k", lw=0.8)
    ax.set(ylabel="accuracy gain over scratch (points)", title="ours (mean over seeds)")
    paper = [c for c in names if c in PAPER_GAIN]
    bx.bar(range(len(paper)), [PAPER_GAIN[c] for c in paper], color="grey")
    bx.axhline(0, color="k", lw=0.8)
    bx.set_xticks(range(len(paper)), paper, rotation=30, fontsize=8)
    bx.set(ylabel="GLUE average gain (points)", title="Chiang & Lee")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def heads_before_finetuning(spec: RunSpec, run_dir: Path, n: int = 64
                            ) -> tuple[Scores, Scores]:
    """(head scores, association controls) of the run's model at step 0 -- the pretrained
    encoder (or random init) with its fresh head -- on n LEGO sentences."""
    model = build_model(spec.config, root=run_dir.parent.parent)  # <root>/runs/<id>
    task = build_task(spec.config.task)
    batch = task.sample(np.random.default_rng(0), n)
    pattern = attention_patterns(model, batch.tokens, batch.pad_mask)
    return lego_head_scores(pattern, batch, task)


def plot_head_scores(best: dict[str, dict[str, float]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(max(9.0, 0.6 * len(best)), 3.8))
    grouped_bars(ax, best)
    ax.set(ylabel="best head's score", ylim=(0, 1),
           title="Head scores on LEGO sentences before fine-tuning, per pretraining corpus")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def label(init: str, kind: str) -> str:
    """An encoder's name in tables and figures: the init, "(ALBERT)" for the tied encoder."""
    return init if kind == BERT else f"{init} ({kind})"


def head_table(rep: Report, names: dict[tuple[str, str], str],
               scores: dict[tuple[str, str], Scores], controls: dict[tuple[str, str], Scores]
               ) -> dict[str, dict[str, float]]:
    """The head-score table (best head per pattern per encoder, with the association head's
    positional controls); returns the best scores per encoder name for the figure."""
    best = {names[k]: {"association (variables)": top_heads(controls[k]["variables"], 1)[0][2],
                       "manipulation": top_heads(scores[k]["manipulation"], 1)[0][2],
                       "broadcast": top_heads(scores[k]["broadcast"], 1)[0][2]}
            for k in names}
    rows = []
    for k in names:
        l, h, v = top_heads(controls[k]["variables"], 1)[0]
        b = best[names[k]]
        rows.append([names[k], f"L{l}H{h} {v:.2f}",
                     f"{float(controls[k]['variables, permuted'][l, h]):.2f}",
                     f"{float(controls[k]['positional head']):.2f}",
                     f"{b['manipulation']:.2f}", f"{b['broadcast']:.2f}"])
    rep.table("Head scores on LEGO sentences before fine-tuning (best head per pattern)",
              ["init", "association (variables)", "same head, clauses permuted",
               "positional head", "manipulation", "broadcast"], rows,
              after="64 LEGO sentences; association on variable queries with its positional "
              "controls as in lego-pretraining (analysis/attention.py). An ALBERT-like "
              "encoder applies one layer at every depth, so its heads LkHh are the same "
              "weights at each k.")
    return best


Encoders = dict[tuple[str, str], Results]
"""(init, encoder kind) -> its LEGO fine-tuning runs."""


def speed_sections(rep: Report, by: Encoders, names: dict[tuple[str, str], str], steps: int,
                   out: Path) -> Report:
    """First step at which each chain position reaches 0.9, per encoder: a figure per encoder
    kind and a table (artificial-pretraining-lego)."""
    passes = {k: [first_pass_steps(r["curve"]) for _, r in rs] for k, rs in by.items()}
    for kind in (BERT, ALBERT):
        png = f"steps_to_0.9{'' if kind == BERT else '_' + kind.lower()}.png"
        plot_first_pass({names[k]: p for k, p in passes.items() if k[1] == kind}, steps,
                        out / png)
        rep.figure(png, f"First step at which each chain position reaches 0.9, per "
                   f"pretraining corpus ({kind}-like encoder)")
    n = len(next(iter(by.values()))[0][1]["final"]["acc_by_depth"])
    return rep.table("Steps to 0.9 per chain position (mean over seeds; inf = never)",
                     ["init"] + [f"#{k}" for k in range(n)],
                     [[names[k]] + [f"{np.mean(col):.0f}" for col in np.asarray(p).T]
                      for k, p in passes.items()])


def head_sections(rep: Report, by: Encoders, names: dict[tuple[str, str], str], out: Path
                  ) -> dict[tuple[str, str], Scores]:
    """Head scores of every encoder on LEGO sentences before fine-tuning (its first run's
    step-0 model): table and figure; returns the association controls per encoder."""
    scores, controls = {}, {}
    for k, rs in by.items():
        s, r = rs[0]
        scores[k], controls[k] = heads_before_finetuning(s, Path(r["dir"]))
    plot_head_scores(head_table(rep, names, scores, controls), out / "head_scores.png")
    rep.figure("head_scores.png", "Best head per pattern on LEGO sentences before "
               "fine-tuning, per pretraining corpus and encoder")
    return controls
