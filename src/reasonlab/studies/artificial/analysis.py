"""artificial-pretraining-lego's figures and tables: head scores of the pretrained encoders on
LEGO sentences before fine-tuning (Chiang & Lee's corpora; LEGO §4.2). The seed table's are in
_support/paper_table_analysis.py."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.analysis.attention import attention_patterns, top_heads
from reasonlab.report import grouped_bars, plot_first_pass, pm
from reasonlab.studies.artificial.common import ALBERT, BERT
from reasonlab.studies.artificial.verdicts import Scores, association
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
               scores: dict[tuple[str, str], list[Scores]],
               controls: dict[tuple[str, str], list[Scores]]) -> dict[str, dict[str, float]]:
    """The head-score table (per encoder, the best head per pattern, mean ± std over units,
    with the association head's positional controls); returns the mean best scores per
    encoder name for the figure."""
    def best(k: tuple[str, str], pattern: str) -> np.ndarray:
        return np.asarray([top_heads(s[pattern], 1)[0][2] for s in scores[k]])

    rows, means = [], {}
    for k in names:
        heads = [association(c) for c in controls[k]]
        assoc = [a.score for a in heads]
        means[names[k]] = {"association (variables)": float(np.mean(assoc)),
                           "manipulation": float(best(k, "manipulation").mean()),
                           "broadcast": float(best(k, "broadcast").mean())}
        rows.append([names[k], f"{pm(assoc, 2)} ({', '.join(a.name for a in heads)})",
                     pm([a.permuted for a in heads], 2), pm([a.positional for a in heads], 2),
                     pm(best(k, "manipulation"), 2), pm(best(k, "broadcast"), 2)])
    rep.table("Head scores on LEGO sentences before fine-tuning (best head per pattern, mean "
              "± std over units)",
              ["init", "association (variables; best head per unit)",
               "same head, clauses permuted", "positional head", "manipulation", "broadcast"],
              rows,
              after="64 LEGO sentences, on each unit's encoder (its seed's pretraining run, or "
              "random init) with a fresh head; association on variable queries with its "
              "positional controls as in lego-pretraining (analysis/attention.py). An "
              "ALBERT-like encoder applies one layer at every depth, so its heads LkHh are the "
              "same weights at each k.")
    return means


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
                  ) -> dict[tuple[str, str], list[Scores]]:
    """Head scores of every encoder on LEGO sentences before fine-tuning, per unit (each
    run's step-0 model: its seed's pretrained encoder, or its random init): table and figure;
    returns the association controls per encoder, one per unit in seed order."""
    scores: dict[tuple[str, str], list[Scores]] = {}
    controls: dict[tuple[str, str], list[Scores]] = {}
    for k, rs in by.items():
        pairs = [heads_before_finetuning(s, Path(r["dir"]))
                 for s, r in sorted(rs, key=lambda sr: sr[0].seed)]
        scores[k], controls[k] = [p[0] for p in pairs], [p[1] for p in pairs]
    plot_head_scores(head_table(rep, names, scores, controls), out / "head_scores.png")
    rep.figure("head_scores.png", "Best head per pattern on LEGO sentences before "
               "fine-tuning (mean over units), per pretraining corpus and encoder")
    return controls
