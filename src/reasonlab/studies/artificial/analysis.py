"""artificial-pretraining-lego's figures and tables: head scores of the pretrained encoders on
LEGO sentences before fine-tuning (Chiang & Lee's corpora; LEGO §4.2). The seed table's are in
seed_analysis.py."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.analysis.attention import attention_patterns, top_heads
from reasonlab.report import grouped_bars
from reasonlab.studies.artificial.common import BERT
from reasonlab.studies.artificial.verdicts import Scores
from reasonlab.studies.kit.base import Report, RunSpec
from reasonlab.studies.lego.analysis import lego_head_scores
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
