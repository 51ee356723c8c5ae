"""artificial-pretraining-lego's figures and tables: head scores of the pretrained encoders on
LEGO sentences before fine-tuning (Chiang & Lee's corpora; LEGO §4.2). The seed table's are in
seed_analysis.py."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.analysis.attention import attention_patterns, top_heads
from reasonlab.report import grouped_bars, plot_first_pass
from reasonlab.studies.artificial.common import ALBERT, BERT
from reasonlab.studies.artificial.verdicts import Scores
from reasonlab.studies.kit.base import Report, Results, RunSpec
from reasonlab.studies.lego.analysis import lego_head_scores
from reasonlab.studies.lego.verdicts import first_pass_steps
from reasonlab.tasks.base import build_task
from reasonlab.train.loop import build_model


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
