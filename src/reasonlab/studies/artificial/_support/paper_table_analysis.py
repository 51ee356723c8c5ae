"""`artificial-pretraining`'s scores, table and figure in the seed's layout (Chiang & Lee, arXiv
2012.11995; the seed's "Results" table: row groups 1-5, eight GLUE columns and their Avg).

Scores: each downstream column's metric (`METRICS`, named by paper_table's columns), as GLUE
scores its tasks at paper scale: Matthews correlation for CoLA, F1 of the positive class for
MRPC and QQP, Spearman correlation for STS-B, accuracy for the rest (MNLI: matched). The
WordNet stand-ins: accuracy, and for `similarity`, as STS-B is scored, the Spearman correlation
between the predicted grade (the expectation of the classifier's softmax over the five grades)
and the gold path similarity. Accuracy is the run's own final evaluation; the other metrics
read the run's final model (loaded from its checkpoint) on a sample of its task's test split:
`eval_pairs` fresh pairs of held-out synsets, or at paper scale the run's test split, GLUE's
whole validation split.

Run records: every run's numbers as data (`score_records`: each fine-tuning run's score, each
pretraining run's held-out loss), written as runs.json beside the report; the verdicts read the
scores rebuilt from those records (`records_scores`), so a copy of the file (the family keeps
the cpu run's in _support/pretraining_cpu_runs.json) recomputes them without the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.stats import spearmanr
from sklearn.metrics import f1_score, matthews_corrcoef

from reasonlab.report import fmt_seeds
from reasonlab.runs import config_id, load_run_model
from reasonlab.studies.kit.records import read_run_records
from reasonlab.studies.artificial._support.paper_table import (COLUMN, FOLLOWUP_GAIN, GROUPS,
                                                              RECIPES, ROWS, SEED_COLUMNS,
                                                              SEED_TABLE, downstream, seed_avg)
from reasonlab.studies.artificial._support.paper_table_verdicts import Scores, avg
from reasonlab.studies.artificial.common import FINETUNE, PRETRAIN, SCRATCH
from reasonlab.studies.kit.base import Report, Results
from reasonlab.tasks.base import TaskConfig, build_task


# -------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Outputs:
    """A fine-tuned classifier's outputs on a sample of its task's test split."""

    probs: np.ndarray
    """[n, classes] softmax."""
    labels: np.ndarray
    """[n] gold classes."""
    gold: np.ndarray | None = None
    """[n] graded gold of a similarity task (`GOLD`), else None."""

    @property
    def pred(self) -> np.ndarray:
        return self.probs.argmax(-1)

    @property
    def grade(self) -> np.ndarray:
        """The predicted grade: the softmax's expectation over the classes 0..C-1 (summed by
        torch, as the cpu store's scores were: numpy's pairwise sum differs in the last bit,
        enough to move a Spearman correlation's ties)."""
        probs = torch.from_numpy(self.probs)
        return (probs * torch.arange(probs.shape[-1], dtype=probs.dtype)).sum(-1).numpy()


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman correlation; 0 for a constant prediction (scipy: NaN, with a warning)."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    rho = float(spearmanr(a, b).statistic)
    return rho if np.isfinite(rho) else 0.0


def always_positive_f1(task: Any) -> str:
    """F1 of answering the positive class (1) for every example of the task's test split."""
    p = float((task.labels("test") == 1).mean())
    return f"{2 * p / (1 + p):.3f} (F1 of always answering the positive class)"


@dataclass(frozen=True)
class Metric:
    """How a downstream column is scored."""

    name: str
    of: Callable[[Outputs], float]
    """The score of a run's outputs."""
    chance: Callable[[TaskConfig], str]
    """What it gives without learning, on the test split of a task config (its text)."""
    final: str | None = None
    """The key of the run's final evaluation that holds it already (no model is reloaded)."""


METRICS: dict[str, Metric] = {
    "accuracy": Metric("accuracy", lambda o: float((o.pred == o.labels).mean()),
                       lambda cfg: f"{build_task(cfg).majority():.3f}", final="acc"),
    "matthews": Metric("Matthews correlation",
                       lambda o: float(matthews_corrcoef(o.labels, o.pred)),
                       lambda cfg: "0 (Matthews correlation of a constant prediction)"),
    "f1": Metric("F1 of the positive class",
                 lambda o: float(f1_score(o.labels, o.pred, pos_label=1, zero_division=0)),
                 lambda cfg: always_positive_f1(build_task(cfg))),
    "spearman": Metric("Spearman correlation", lambda o: spearman(o.grade, o.gold),
                       lambda cfg: "0 (Spearman of a constant or random prediction)"),
}
"""GLUE's metrics (Wang et al. 2019) by the name paper_table's columns give; scikit-learn's
and scipy's implementations. Accuracy's chance is the majority class (the training split's most
frequent class, on the test split)."""

GOLD: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "distance": lambda d: 1 / (1 + d),  # WordNet path distance (tasks/gloss_pairs.py)
    "score": lambda x: x / 100,  # STS-B's 0-5 score, x 100 (tasks/glue.py)
}
"""A graded task's gold similarity, from the batch metadata key that carries it (the Spearman
correlation's gold)."""


@torch.no_grad()
def run_outputs(run_dir: Path, n: int, batch_size: int | None = None) -> Outputs:
    """The run's final model on n examples of its task's test split (rng 0: the same examples
    for every run of a task config), in forward passes of `batch_size` (default: the run's
    eval_batch_size), on the device the run trained on."""
    config, model = load_run_model(run_dir, device="run")
    task = build_task(config.task)
    batch = task.sample(np.random.default_rng(0), n, "test")
    device = next(model.parameters()).device
    # in batches of the run's eval_batch_size: the paper scale's 5,000 pairs of 127 tokens in
    # one BERT-base forward pass took 23 GB (its 3072-wide MLP activations alone are 7.8 GB)
    k = batch_size or config.eval_batch_size
    logits = torch.cat([model(b.tokens, b.label_pos, b.pad_mask)[:, 0].float()  # [k, classes]
                        for b in (batch[i: i + k].to(device) for i in range(0, n, k))])
    gold = next((f(batch.meta[key][:, 0].double().numpy()) for key, f in GOLD.items()
                 if key in batch.meta), None)
    return Outputs(logits.softmax(-1).cpu().numpy(), batch.labels[:, 0].numpy(), gold)


def run_score(run_dir: Path, metric: str, n: int, batch_size: int | None = None) -> float:
    """METRICS[metric] of the run's final model on n examples of its test split."""
    return METRICS[metric].of(run_outputs(run_dir, n, batch_size))


def similarity_spearman(run_dir: Path, n: int, batch_size: int | None = None) -> float:
    """Spearman correlation of the predicted grade (softmax expectation) with the gold path
    similarity 1 / (1 + distance), on n pairs of held-out synsets; 0 for a constant
    prediction."""
    return run_score(run_dir, "spearman", n, batch_size)


def scores(results: Results) -> Scores:
    """task -> init -> per-seed score (seed order), each task by its column's metric, in the
    scale's column order."""
    return records_scores(score_records(results.where(phase=FINETUNE)))


# -------------------------------------------------------------------- run records


def score_records(results: Results) -> list[dict[str, Any]]:
    """Every run's numbers, one record per run in spec order: a pretraining run's corpus, seed,
    run id and final held-out masked-LM loss and accuracy; a fine-tuning run's task, init
    (a corpus, or scratch), seed, run id, the id of the pretraining run it starts from (None
    from scratch), its column's metric and score (what the verdicts read) and its final
    accuracy."""
    columns = downstream(results.scale)
    sample = RECIPES[results.scale]["eval_pairs"]  # None: each run's own n_test
    out: list[dict[str, Any]] = []
    for spec, r in results:
        f, run = spec.factors, Path(r["dir"]).name
        if f["phase"] == PRETRAIN:
            out.append({"run": run, "phase": PRETRAIN, "corpus": f["corpus"], "seed": spec.seed,
                        "loss": r["final"]["loss"], "acc": r["final"]["acc"]})
            continue
        name = columns[f["task"]].metric
        metric = METRICS[name]
        score = (float(r["final"][metric.final]) if metric.final is not None
                 else run_score(Path(r["dir"]), name,
                                results.sample_size(sample or spec.config.n_test)))
        pre = spec.config.init_run
        out.append({"run": run, "phase": FINETUNE, "task": f["task"], "init": f["init"],
                    "seed": spec.seed, "from": None if pre is None else config_id(pre),
                    "metric": name, "score": score, "acc": r["final"]["acc"]})
    return out


def records_scores(records: Iterable[Mapping[str, Any]]) -> Scores:
    """The verdicts' table from run records (`score_records`, or a runs.json read back): task ->
    init -> per-seed score in seed order; tasks in column order (paper_table.COLUMN, every
    scale's columns in their scale's order), inits in the records' order. Pretraining records
    are skipped; a (task, init, seed) given twice is an error, not a silent overwrite."""
    table: dict[str, dict[str, dict[int, float]]] = {}
    for rec in records:
        if rec["phase"] != FINETUNE:
            continue
        seeds = table.setdefault(rec["task"], {}).setdefault(rec["init"], {})
        if rec["seed"] in seeds:
            raise ValueError(f"two records of task {rec['task']}, init {rec['init']}, "
                             f"seed {rec['seed']}")
        seeds[rec["seed"]] = float(rec["score"])
    order = list(COLUMN)
    return {t: {i: np.asarray([by_seed[k] for k in sorted(by_seed)])
                for i, by_seed in table[t].items()}
            for t in sorted(table, key=order.index)}


def read_scores(path: Path) -> Scores:
    """The verdicts' table from a runs.json: what the study's verdicts read."""
    return records_scores(read_run_records(path))


def seed_table(rep: Report, results: Results, s: Scores) -> None:
    """Ours per task and averaged beside the seed's eight columns and Avg, row by row in the
    seed's order and groups; the follow-up's corpora as labelled extra rows. Where our columns
    are the seed's (GLUE, paper scale), column for column: each cell ours, then the seed's."""
    ours = list(s)
    columns = downstream(results.scale)
    same = ours == list(SEED_COLUMNS)
    header = (["", "seed row", "ours"]
              + [t if t == columns[t].like else f"{t} ({columns[t].like})" for t in ours]
              + (["Avg"] if same else ["Avg (ours)", *(f"seed {c}" for c in SEED_COLUMNS),
                                       "seed Avg"]))
    rows = []
    for g, (row, init) in zip(GROUPS, ROWS.items()):
        if init not in s[ours[0]]:
            continue
        mean = f"{avg(s, init).mean():.3f}"
        seed = [f"{v:.2f}" for v in SEED_TABLE[row]]
        if same:
            cells = [f"{fmt_seeds(s[t][init])} ({v})" for t, v in zip(ours, seed, strict=True)]
            cells.append(f"{mean} ({seed_avg(row):.3f})")
        else:
            cells = [fmt_seeds(s[t][init]) for t in ours] + [mean, *seed, f"{seed_avg(row):.3f}"]
        rows.append([str(g), row, init, *cells])
    scratch = float(avg(s, SCRATCH).mean())
    for init, (name, gain) in FOLLOWUP_GAIN.items():
        if init in s[ours[0]]:
            mean = float(avg(s, init).mean())
            follow = f"follow-up GLUE avg gain {gain:+.1f} pts"
            rows.append(["extra", f"follow-up: {name}", init]
                        + [fmt_seeds(s[t][init]) for t in ours]
                        + [f"{mean:.3f} ({100 * (mean - scratch):+.1f} pts)"
                           + (f"; {follow}" if same else "")]
                        + ([] if same else ["-"] * len(SEED_COLUMNS) + [follow]))
    base = baselines(results)
    metrics = "; ".join(f"{t}: {METRICS[columns[t].metric].name}" for t in ours)
    layout = ("each cell ours, mean ± std over units, with the seed's number in brackets"
              if same else "ours: mean ± std over units")
    rep.table("The seed's table: ours beside Chiang & Lee's", header, rows,
              after=f"Ours ({layout}), a unit one seed that pretrains and fine-tunes. "
              f"Metrics: {metrics} (GLUE's own at paper scale). Seed: the 'Results' "
              "table of the seed (frozen-pretrained-transformers.txt, second half), its Avg "
              "recomputed as the mean of its eight columns. Extra rows: corpora of the "
              "authors' follow-up (arXiv 2109.03537), its GLUE-average gain over its own "
              "from-scratch 61.6 as the reference. Chance / majority class on our test "
              "splits: " + ", ".join(f"{t} {v}" for t, v in base.items()) + ".")


def baselines(results: Results) -> dict[str, str]:
    """Chance and majority-class scores per task (the seed's No Pre-train row is the learned
    baseline): the column's own where it says one, else its metric's on the task as the runs
    read it (GLUE: from the runs' folder)."""
    columns = downstream(results.scale)
    return {t: columns[t].chance or METRICS[columns[t].metric].chance(rs.first.config.task)
            for t, rs in results.where(phase=FINETUNE).by("task").items()}


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
               f"({columns_text(s)}) beside Chiang & Lee's (8 GLUE tasks)")


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


def columns_text(s: Scores) -> str:
    """'8 GLUE tasks' / '4 WordNet tasks': what our columns are."""
    what = "GLUE" if all(COLUMN[t].reads_glue for t in s) else "WordNet"
    return f"{len(s)} {what} tasks"


def plot_seed_table(s: Scores, path: Path) -> None:
    """Average gain over scratch per seed row: ours (left bars) and the seed's (right bars)."""
    rows = [(r, i) for r, i in ROWS.items() if i in s[next(iter(s))] and i != SCRATCH]
    ours = [100 * (avg(s, i).mean() - avg(s, SCRATCH).mean()) for _, i in rows]
    seed = [100 * (seed_avg(r) - seed_avg("No Pre-train")) for r, _ in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(8.0, 0.75 * len(rows)), 4.2))
    ax.bar(x - 0.2, ours, 0.4, label=f"ours ({columns_text(s)}, mean over seeds)")
    ax.bar(x + 0.2, seed, 0.4, color="grey", label="Chiang & Lee (8 GLUE tasks)")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, [f"{r}\n{i}" for r, i in rows], rotation=45, ha="right", fontsize=7)
    ax.set(ylabel="average gain over no pretraining (points)",
           title="Pretraining without human language: gain over scratch per seed row")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
