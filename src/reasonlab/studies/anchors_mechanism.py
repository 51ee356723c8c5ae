"""Inside an inferential and a symmetric anchor model (Zhang et al. 2024, arXiv 2405.05409,
§4-5; docs/papers.md §3 Anchor functions: inferential solutions have lower complexity, the anchor embeddings being
arranged so that composition is nearly additive).

Two arms: a small initialization (large gamma) and a larger one (smaller gamma); where an arm
equals a cell of `anchors-init-phase` it has the same content-addressed run id, so a shared
`runs` folder trains it once (README). The analysis groups runs by their *measured* solution type, not by
arm, and compares the inferential with the symmetric models:

  - cosine similarity of the anchor embeddings and their 2-D PCA projection;
  - attention of the read-out (last) position to the key, anchor 1, anchor 2, other items;
  - additivity: the final read-out representation averaged per pair, fitted as
    c + u[a1] + v[a2] on the compositional pairs; how well that predicts the held-out pair
    (relative residual) and how close the held-out pair sits to its mirror (3,4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.analysis.anchor_mechanism import (
    additivity, anchor_embeddings, cosine_matrix, pair_representations, pca_2d,
    readout_attention, shift_order_correlation)
from reasonlab.analysis.solutions import heldout_solutions
from reasonlab.report import table
from reasonlab.runs import load_run_model
from reasonlab.studies.anchors_common import anchor_config
from reasonlab.studies.anchors_init_phase import GRID
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.tasks.base import build_task
from reasonlab.train.loop import make_data

ARMS: dict[Scale, dict[str, tuple[float, int | None]]] = {
    "smoke": {"small init": (max(GRID["smoke"][0]), None),
              "large init": (min(GRID["smoke"][0]), None)},
    # cpu: the two ends of the phase study's grid at depth 2, so the runs are that study's
    "cpu": {"small init": (max(GRID["cpu"][0]), None),
            "large init": (min(GRID["cpu"][0]), None)},
    "paper": {"small init": (max(GRID["paper"][0]), None),
              "large init": (min(GRID["paper"][0]), None)},
}
"""Arm -> (gamma, steps or None for the scale's default)."""
DEPTH: dict[Scale, int] = {"smoke": 1, "cpu": 2, "paper": 2}

MIN_RESID_GAP = 0.1
"""How much smaller the held-out additive residual of inferential models must be."""
MIN_ORDER_GAP = 0.2
"""How much larger the embeddings' shift-order correlation of inferential models must be."""


@STUDIES.register("anchors-mechanism")
class AnchorsMechanism(Study):
    name = "anchors-mechanism"
    title = "Anchor functions: mechanisms of inferential vs symmetric solutions"
    claims = (
        Claim("additive", "In inferential models the two anchors combine additively: the "
              "held-out pair's representation is predicted by an additive fit on the "
              "compositional pairs, better than in symmetric models",
              "Zhang et al. 2024, §4-5"),
        Claim("embedding", "Inferential models arrange the anchor embeddings by their "
              "primitive (cosine similarity follows the distance between shifts) more than "
              "symmetric models (lower complexity)", "Zhang et al. 2024, §5"),
    )
    cpu_minutes = 0.2  # measured: 7 s; every run is a depth-2 cell of anchors-init-phase
    cpu_after = "anchors-init-phase"
    default_seeds = {"smoke": 1, "cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return [RunSpec(arm, s, anchor_config(scale, s, g, DEPTH[scale], steps=steps))
                for arm, (g, steps) in ARMS[scale].items() for s in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        recs = [mechanism_record(spec, result, out) for spec, result in results]
        rep = Report(self.title)
        rows = [[r["arm"], str(r["seed"]), r["verdict"], f"{r['inferential']:.3f}",
                 f"{r['symmetric']:.3f}", f"{r['r2_fit']:.3f}", f"{r['heldout_resid']:.3f}",
                 f"{r['cos_to_mirror']:.3f}", f"{r['order_corr']:.3f}"] for r in recs]
        rep.sections.append("## Per run\n\n" + table(
            ["arm", "seed", "solution", "inferential", "symmetric", "additive R^2 (fit)",
             "held-out resid", "cos to mirror (3,4)", "embedding shift-order corr"], rows))
        att_rows = [[r["arm"], str(r["seed"]), r["verdict"], str(l)] +
                    [f"{x:.3f}" for x in r["attention"][l]]
                    for r in recs for l in range(len(r["attention"]))]
        rep.sections.append("## Attention of the last position (mean over examples)\n\n" +
                            table(["arm", "seed", "solution", "layer", "key", "anchor 1",
                                   "anchor 2", "other"], att_rows))
        rep.figures += mechanism_figures(recs, out)
        inf = [r for r in recs if r["verdict"] == "inferential"]
        sym = [r for r in recs if r["verdict"] == "symmetric"]
        rep.verdicts = [compare(self.claims[0], inf, sym, "heldout_resid", -1, MIN_RESID_GAP),
                        compare(self.claims[1], inf, sym, "order_corr", +1, MIN_ORDER_GAP)]
        return rep


def mechanism_record(spec: RunSpec, result: dict[str, Any], out: Path) -> dict[str, Any]:
    _, model = load_run_model(Path(result["dir"]))
    task = build_task(spec.config.task)
    _, test = make_data(spec.config)
    (sol,) = heldout_solutions(model, task, test)
    emb = anchor_embeddings(model, task)
    cos = cosine_matrix(emb)
    proj, var = pca_2d(emb)
    return {"arm": spec.arm, "seed": spec.seed, **sol.to_json(), "cos": cos.tolist(),
            "pca": proj.tolist(), "pca_var": var.tolist(),
            "order_corr": shift_order_correlation(task, cos),
            "attention": readout_attention(model, test).tolist(),
            **additivity(task, pair_representations(model, task, test)),
            "shifts": task.config.shifts}


def compare(claim: Claim, inf: list[dict[str, Any]], sym: list[dict[str, Any]], key: str,
            sign: int, gap: float) -> Verdict:
    if not inf or not sym:
        return Verdict(claim, "inconclusive", f"needs at least one inferential and one "
                       f"symmetric run; got {len(inf)} inferential, {len(sym)} symmetric")
    a = float(np.mean([r[key] for r in inf]))
    b = float(np.mean([r[key] for r in sym]))
    diff = sign * (a - b)
    ev = (f"{key}: inferential models {a:.3f} (n={len(inf)}), symmetric {b:.3f} "
          f"(n={len(sym)}); {'lower' if sign < 0 else 'higher'} by {diff:+.3f}, needs > {gap}")
    return Verdict(claim, "reproduced" if diff > gap else "not reproduced", ev)


def mechanism_figures(recs: list[dict[str, Any]], out: Path) -> list[tuple[str, str]]:
    # one representative per solution type present (first seed), else the first runs
    chosen: dict[str, dict[str, Any]] = {}
    for r in recs:
        chosen.setdefault(r["verdict"], r)
    shown = list(chosen.values())[:3]
    labels = [str(a) for a in range(1, len(shown[0]["cos"]) + 1)]
    fig, axes = plt.subplots(2, len(shown), figsize=(3.6 * len(shown), 6.6), squeeze=False)
    for j, r in enumerate(shown):
        ax = axes[0][j]
        im = ax.imshow(np.array(r["cos"]), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
        for (y, x), v in np.ndenumerate(np.array(r["cos"])):
            ax.text(x, y, f"{v:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"{r['verdict']} ({r['arm']}, seed {r['seed']})\ncosine of anchor "
                     "embeddings", fontsize=8)
        ax = axes[1][j]
        p = np.array(r["pca"])
        ax.scatter(p[:, 0], p[:, 1])
        for a, (x, y) in enumerate(p):
            ax.annotate(f"{a + 1} ({r['shifts'][a]:+d})", (x, y), fontsize=8)
        ax.set_title(f"PCA of anchor embeddings (var {r['pca_var'][0]:.2f}, "
                     f"{r['pca_var'][1]:.2f})", fontsize=8)
    fig.colorbar(im, ax=axes[0].tolist())
    fig.savefig(out / "embeddings.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(shown), figsize=(3.6 * len(shown), 3.2), squeeze=False)
    for ax, r in zip(axes[0], shown):
        att = np.array(r["attention"])  # [layers, 4]
        bottom = np.zeros(len(att))
        for k, name in enumerate(("key", "anchor 1", "anchor 2", "other")):
            ax.bar(range(len(att)), att[:, k], bottom=bottom, label=name)
            bottom += att[:, k]
        ax.set(title=f"{r['verdict']} ({r['arm']})", xlabel="layer", ylabel="attention of "
               "last position", ylim=(0, 1))
        ax.set_xticks(range(len(att)))
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "attention.png", dpi=120)
    plt.close(fig)
    return [("embeddings.png", "Anchor embeddings: cosine similarity (top) and 2-D PCA "
             "(bottom; labels: anchor (shift)), one model per solution type"),
            ("attention.png", "Attention of the read-out position to key, anchors and "
             "other items, per layer")]
