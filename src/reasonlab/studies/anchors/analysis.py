"""Reading trained anchor models (Zhang et al. 2024; docs/papers.md §3 Anchor functions): the
solution type of each run on the held-out pair (analysis/solutions.py), the phase diagram's
table and figures, and the mechanism records (embeddings, attention, additivity).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch

from reasonlab.analysis.anchor_mechanism import (additivity, anchor_embeddings, cosine_matrix,
                                                 pair_representations, pca_2d,
                                                 readout_attention, shift_order_correlation)
from reasonlab.analysis.solutions import (FIT_THRESHOLD, MAJORITY, SOLUTION_TYPES,
                                          HeldoutSolution, heldout_solutions)
from reasonlab.model import run_with_cache
from reasonlab.report import plot_heatmap, table
from reasonlab.runs import load_run_model
from reasonlab.studies.anchors.common import READING_TEXT
from reasonlab.studies.kit.base import Report, Results, RunSpec
from reasonlab.tasks.anchors import AnchorsTask
from reasonlab.tasks.base import build_task
from reasonlab.train.loop import make_data


def phase_cells(results: list[tuple[RunSpec, dict[str, Any]]], out: Path
                ) -> dict[tuple[float, int], list[dict[str, Any]]]:
    """(gamma, depth) -> one record per seed: verdict and fractions."""
    cells: dict[tuple[float, int], list[dict[str, Any]]] = {}
    for spec, result in results:
        m = spec.config.model
        sol = run_solution(spec, result, out)
        cells.setdefault((m.init.gamma, m.n_layers), []).append(
            {"seed": spec.seed, **sol.to_json()})
    return cells


def mean_of(recs: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([r[key] for r in recs]))


def majority_type(recs: list[dict[str, Any]]) -> str:
    counts = {t: sum(r["verdict"] == t for r in recs) for t in SOLUTION_TYPES}
    return max(SOLUTION_TYPES, key=lambda t: counts[t])


def type_counts(recs: list[dict[str, Any]]) -> str:
    return " ".join(f"{t[:3]}{n}" for t in SOLUTION_TYPES
                    if (n := sum(r["verdict"] == t for r in recs)))


def reading_label(g: float, read: dict[str, tuple[float, ...]], sep: str = " ") -> str:
    """gamma g and the readings that set it, e.g. "0.21 (mapped)" or "0.5 (mapped, direct)"."""
    return f"{g:g}{sep}({', '.join(r for r, gs in read.items() if g in gs)})"


def phase_section(cells, gammas, depths, read: dict[str, tuple[float, ...]]) -> str:
    """The phase table; `read`: reading -> its gammas (anchors.common.READINGS)."""
    header = ["depth", "gamma (reading)", "verdicts (seeds)", "inferential", "symmetric",
              "neither", "seen acc"]
    rows = [[str(L), reading_label(g, read), type_counts(cells[g, L])] +
            [f"{mean_of(cells[g, L], k):.3f}" for k in ("inferential", "symmetric", "neither",
                                                      "seen_acc")]
            for L in depths for g in gammas]
    return (f"## Phase diagram (held-out pair (4,3); means over seeds)\n\nVerdict per run: "
            f"unfit if seen-pair accuracy < {FIT_THRESHOLD}, else inferential / symmetric if "
            f"that answer is >= {MAJORITY} of the held-out predictions, else neither "
            f"(counts: inf/sym/nei/unf). {readings_note()}\n\n" + table(header, rows))


def readings_note() -> str:
    """What the two gamma readings are (anchors.common.READINGS), for the reports."""
    return ("Readings of the paper's gamma (its grid is at d_model 400): " + "; ".join(
        f"{r}: {text}" for r, text in READING_TEXT.items()) + " (d_in^(0.5 - gamma) is what "
        "the phase depends on; docs/papers.md §3).")


def phase_figures(cells, gammas, depths, out: Path, read: dict[str, tuple[float, ...]]
                  ) -> list[tuple[str, str]]:
    xl, yl = [reading_label(g, read, "\n") for g in gammas], [str(L) for L in depths]
    code = {t: i for i, t in enumerate(SOLUTION_TYPES)}
    kinds = np.array([[code[majority_type(cells[g, L])] for g in gammas] for L in depths])
    annot = [[f"{majority_type(cells[g, L])[:3]}\n{type_counts(cells[g, L])}" for g in gammas]
             for L in depths]
    plot_heatmap(kinds / (len(SOLUTION_TYPES) - 1), out / "phase_type.png",
                 "majority solution type", xl, yl,
                 "initialization rate gamma", "depth", cmap="coolwarm", annot=annot)
    figs = [("phase_type.png", "Majority solution type per (gamma, depth) (colour: 0 "
             "inferential, 1/3 symmetric, 2/3 neither, 1 unfit; ties go to the earlier type); "
             "cell text: type and per-seed counts")]
    for key in ("inferential", "symmetric", "seen_acc"):
        vals = np.array([[mean_of(cells[g, L], key) for g in gammas] for L in depths])
        plot_heatmap(vals, out / f"phase_{key}.png", f"mean {key} fraction" if key !=
                     "seen_acc" else "mean seen-pair test accuracy", xl, yl,
                     "initialization rate gamma", "depth")
        figs.append((f"phase_{key}.png", f"Mean {key.replace('_', ' ')} per (gamma, depth)"))
    return figs


def mechanism_record(spec: RunSpec, result: dict[str, Any], out: Path) -> dict[str, Any]:
    _, model = load_run_model(Path(result["dir"]), device="run")
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


def mechanism_tables(rep: Report, recs: list[dict[str, Any]]) -> Report:
    """anchors-mechanism: per run its solution and mechanism measures (mechanism_record), and
    the attention of the last position per layer."""
    rows = [[r["arm"], str(r["seed"]), r["verdict"], f"{r['inferential']:.3f}",
             f"{r['symmetric']:.3f}", f"{r['r2_fit']:.3f}", f"{r['heldout_resid']:.3f}",
             f"{r['cos_to_mirror']:.3f}", f"{r['order_corr']:.3f}"] for r in recs]
    rep.sections.append("## Per run\n\n" + table(
        ["arm", "seed", "solution", "inferential", "symmetric", "additive R^2 (fit)",
         "held-out resid", "cos to mirror (3,4)", "embedding shift-order corr"], rows))
    att_rows = [[r["arm"], str(r["seed"]), r["verdict"], str(layer)]
                + [f"{x:.3f}" for x in r["attention"][layer]]
                for r in recs for layer in range(len(r["attention"]))]
    rep.sections.append("## Attention of the last position (mean over examples)\n\n"
                        + table(["arm", "seed", "solution", "layer", "key", "anchor 1",
                                 "anchor 2", "other"], att_rows))
    return rep


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


@torch.no_grad()
def layer1_rms(result: dict[str, Any]) -> float:
    """RMS of the first block's input over the run's test set."""
    config, model = load_run_model(Path(result["dir"]), device="run")
    _, test = make_data(config)
    tokens = test.tokens[:500].to(next(model.parameters()).device)  # where the model is
    _, cache = run_with_cache(model, tokens, names_filter="blocks.0.hook_resid_pre")
    return float(cache["blocks.0.hook_resid_pre"].pow(2).mean().sqrt())


def run_solution(spec: RunSpec, result: dict[str, Any], out: Path) -> HeldoutSolution:
    """Load the run's model, rebuild its (seeded) test set, classify its held-out answers."""
    _, model = load_run_model(Path(result["dir"]), device="run")
    task = build_task(spec.config.task)
    assert isinstance(task, AnchorsTask)
    _, test = make_data(spec.config)
    (sol,) = heldout_solutions(model, task, test)  # the preset holds out one pair, (4,3)
    return sol


def heldout_section(rep: Report, results: Results, groups: dict[tuple[str, ...], list[dict]],
                    header: list[str], keys: tuple[str, ...], note: str = "") -> Report:
    """One row per group of runs: its labels, the per-run solution types and the mean of each
    of `keys` (fractions, seen accuracy, ...), under the held-out pair's heading."""
    m = results.first.config.model
    rows = [[*labels, " ".join(r["verdict"][:3] for r in recs)]
            + [f"{mean_of(recs, k):.3f}" for k in keys] for labels, recs in groups.items()]
    return rep.table(f"Held-out pair (4,3) at gamma={m.init.gamma:g}, depth {m.n_layers}",
                     [*header, "verdicts (seeds)", *(k.replace("_", " ") for k in keys)], rows,
                     before=f"Per-run verdicts as in the phase study (unfit below seen accuracy "
                     f"{FIT_THRESHOLD}; a type needs >= {MAJORITY} of the held-out "
                     f"predictions).{note}")


def share_of(recs: list[dict[str, Any]], kind: str) -> float:
    return sum(r["verdict"] == kind for r in recs) / len(recs) if recs else float("nan")


def cells_by(recs: list[dict[str, Any]], x: str, y: str
             ) -> tuple[tuple[list[float], list[float]], dict[tuple[str, str], list[dict]]]:
    """The sorted levels of fields x and y, and the runs of every (x, y) cell, keyed by the
    levels as text (in x-major order)."""
    xs, ys = sorted({r[x] for r in recs}), sorted({r[y] for r in recs})
    return (xs, ys), {(f"{a:g}", f"{b:g}"): [r for r in recs if r[x] == a and r[y] == b]
                      for a in xs for b in ys}


def mean_heatmaps(rep: Report, cells: dict[tuple[str, str], list[dict[str, Any]]],
                  labels: tuple[str, str], keys: tuple[str, ...], tag: str = "") -> Report:
    """One heatmap per key: its mean over each (x, y) cell's runs (figures `<key><tag>.png`;
    `tag` also goes into the titles, e.g. "_direct")."""
    xs, ys = list(dict.fromkeys(x for x, _ in cells)), list(dict.fromkeys(y for _, y in cells))
    what = f" ({tag.strip('_')})" if tag else ""
    for key in keys:
        vals = np.array([[mean_of(cells[x, y], key) for x in xs] for y in ys])
        plot_heatmap(vals, rep.out / f"{key}{tag}.png", f"mean {key} fraction on (4,3){what}",
                     xs, ys, *labels)
        rep.figure(f"{key}{tag}.png", f"Mean {key} fraction per ({labels[0]}, {labels[1]})"
                   f"{what}")
    return rep


def runs_at_gamma(results: Results, gamma: float) -> Results:
    """The runs initialized at rate `gamma` (read from each run's config)."""
    return results.subset((s, r) for s, r in results if s.config.model.init.gamma == gamma)
