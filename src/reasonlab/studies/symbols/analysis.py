"""Reading abstract-symbols models (Boix-Adsera et al. 2024; docs/papers.md §2 Abstract
symbols): the sample-sweep section, read-outs of trained and of frozen random networks, and
the templates x templates kernel matrix N at initialization.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.kernel import condition_number, template_kernel_matrix
from reasonlab.analysis.readout import converged_readout
from reasonlab.model.config import ModelConfig
from reasonlab.model.transformer import Transformer
from reasonlab.model.variants import INITS
from reasonlab.report import fmt_seeds, plot_matrices, table
from reasonlab.runs import load_run_model
from reasonlab.studies.kit.base import Report, Results, RunSpec, grid
from reasonlab.studies.kit.core import overridden
from reasonlab.studies.symbols.common import recipe, width
from reasonlab.studies.symbols.verdicts import ratio_estimate, reach_cell
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model, make_data
from reasonlab.train.metrics import evaluate

TEST_HEADING = "Test accuracy on unseen symbols (mean ± std over seeds)"


def samples_section(rep: Report, test: dict[str, dict[Any, list[float]]], before: str = "",
                    heading: str = TEST_HEADING) -> Report:
    """The same/different sweep over training samples: table and figure (chance 0.5)."""
    return rep.sweep(test, "n_train", heading, xlabel="training samples n",
                     title="same/different, unseen symbols", name="accuracy_vs_samples.png",
                     caption="Test accuracy on unseen symbols against training samples, log "
                     "scale (band: ±1 std over seeds)", chance=0.5, before=before)


def targets_section(rep: Report, plain: dict[int, list[float]], mod: dict[int, list[float]],
                    targets: tuple[float, ...]) -> Report:
    """Samples each seed of each arm needs to reach each target accuracy (n_to_reach along its
    own curve; seeds with no crossing inside the grid named, not imputed), and the
    geometric-mean ratio with its interval (ratio_estimate)."""
    rows = []
    for target in targets:
        est = ratio_estimate(plain, mod, target)
        rows.append([f"{target}", *(reach_cell(by, target) for by in (plain, mod)),
                     "-" if est is None else est.text(2)])
    return rep.table("Samples needed to reach a target accuracy, per seed (log-linear "
                     "interpolation)", ["target", "transformer", "+ identity",
                                        "ratio (geometric mean)"], rows)


READOUTS = ("all tokens", "test symbols")
"""The two read-outs every run is evaluated with."""


def readout_accuracies(result: dict[str, Any]) -> dict[str, float]:
    """A finished run's test accuracy under both read-outs: argmax over every token, and
    argmax among the test symbols."""
    config, model = load_run_model(Path(result["dir"]), device="run")
    _, test = make_data(config)
    task = build_task(config.task)
    only_test = torch.zeros(len(task.vocab), dtype=torch.bool)
    only_test[torch.from_numpy(task.symbol_ids["test"])] = True
    return {key: float(evaluate(model, test, config.eval_batch_size, classes=mask)["acc"])
            for key, mask in zip(READOUTS, (None, only_test))}


def frozen_readout(cfg: TrainConfig, n: int | None = None) -> dict[str, float]:
    """The converged read-out on the run's initial (random) network and its data, fitted on
    the first n training examples (all by default; a trial run caps n, Results.sample_size)."""
    train, test = make_data(cfg)
    model = build_model(cfg)
    return converged_readout(model, train[: n or len(train)], test, cfg.model.n_classes)


def readout_of_initial_networks(results: Results, ns: list[int]
                                ) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """(test, training) accuracy per n_train in `ns` and seed of the converged read-out of each
    run's initial network (frozen_readout): the read-out-only arm beside the trained runs; a trial
    run (n_test=N) fits on its first N examples (Results.sample_size)."""
    fits = {n: [frozen_readout(s.config, results.sample_size(n))
                for s, _ in results if s.config.n_train == n] for n in ns}
    return ({n: [f["test_acc"] for f in fs] for n, fs in fits.items()},
            {n: [f["train_acc"] for f in fs] for n, fs in fits.items()})


def frozen_networks(results: Results, label: str, n: int, widths: list[int],
                    seeds: int | None = None) -> list[RunSpec]:
    """The frozen random same/different networks of a width sweep (d_mlp = 4 d_model), one per
    width and seed (the first `seeds` of the study's, all by default), as specs of the study:
    the command line's overrides reach them, and a trial run (n_test=N) fits them on N
    examples."""
    k = results.seeds if seeds is None else min(seeds, results.seeds)
    return overridden(grid(recipe(results.scale, preset="same_different"),
                           {label: {"n_train": results.sample_size(n)}},
                           [{"model": {"d_model": w, "d_mlp": 4 * w}} for w in widths], k),
                      results.overrides)


def frozen_width_section(rep: Report, frozen: list[RunSpec], widths: list[int], n: int,
                         label: str) -> tuple[str, list[float]]:
    """The converged read-out of the frozen random networks `frozen` (one per width and seed,
    n training samples): table and figure; returns (label, test accuracies per seed) at the
    largest width, the evidence of readout_verdict."""
    sweep = {w: [frozen_readout(s.config) for s in frozen if s.config.model.d_model == w]
             for w in widths}
    rep.sweep({f"{label}, n={n}": {w: [f["test_acc"] for f in v] for w, v in sweep.items()},
               f"{label}, n={n}: training accuracy": {
                   w: [f["train_acc"] for f in v] for w, v in sweep.items()}},
              "d_model", f"Width sweep of the frozen network (n = {n})",
              title="converged read-out, unseen symbols", name="readout_vs_width.png",
              caption=f"Converged read-out on frozen random networks of growing width, n = {n}",
              chance=0.5)
    w_max = max(widths)
    return f"d_model {w_max}, n={n}", [f["test_acc"] for f in sweep[w_max]]


def drop_note(name: str, by: dict[int, list[float]]) -> str:
    """'name: d=lo acc, d=hi acc, drop +x': accuracy at the smallest and largest width of a
    width sweep (x -> per seed), for the evidence beside a trend verdict."""
    lo, hi = min(by), max(by)
    return (f"{name}: d={lo} {fmt_seeds(by[lo])}, d={hi} {fmt_seeds(by[hi])}, "
            f"drop {float(np.mean(by[lo]) - np.mean(by[hi])):+.3f}")


def copy_sections(rep: Report, results: Results
                  ) -> tuple[dict[str, dict[int, list[float]]],
                             dict[str, dict[str, dict[int, list[float]]]]]:
    """Copy accuracy on unseen symbols against the embedding dimension: every arm read out as
    it was trained (one figure), then every arm under each read-out of READOUTS; returns
    (arm -> width -> per seed as trained, read-out -> the same)."""
    both = readout_sweeps(results, width)
    test = results.sweep(x=width)  # each arm read out as it trains: its `final` accuracy
    chance = 1 / results.first.config.task.n_test_symbols  # type: ignore[attr-defined]
    rep.sweep(test, "d_model", "Copy accuracy on unseen symbols (mean ± std over seeds)",
              xlabel="embedding dimension d_model", title="copy `$w0 $w1 -> $w0`, unseen symbols",
              name="accuracy_vs_width.png", chance=chance, caption="Copy accuracy on unseen "
              "symbols against the embedding dimension (band: ±1 std over seeds)",
              before="Each arm read out as it was trained: the authors' arms over all tokens, "
              "the BERT-init arm among the test symbols.")
    for key in READOUTS:
        rep.sweep(both[key], "d_model", f"Every arm read out over {key}")
    return test, both


def readout_sweeps(results: Results, x: Callable[[RunSpec], Any]
                   ) -> dict[str, dict[str, dict[Any, list[float]]]]:
    """read-out (READOUTS) -> arm -> x(spec) -> every run's test accuracy under that read-out,
    x sorted."""
    both: dict[str, dict[str, dict[Any, list[float]]]] = {key: {} for key in READOUTS}
    for spec, result in results:
        for key, acc in readout_accuracies(result).items():
            both[key].setdefault(spec.arm, {}).setdefault(x(spec), []).append(acc)
    return {k: {a: dict(sorted(v.items())) for a, v in by.items()} for k, by in both.items()}


def ab_values(setting: tuple[bool, bool, bool], d_model: int) -> tuple[float, float]:
    """(a, b) of a setting (a on, b on, zero diag): a = 1 / sqrt(d_model), so that a X X^T
    between two equal symbols (X after LayerNorm) is sqrt(d_model), the size of an aligned
    q.k logit; b = 1."""
    a_on, b_on, _ = setting
    return (1 / math.sqrt(d_model) if a_on else 0.0), (1.0 if b_on else 0.0)


def kernel_matrices(tasks: dict[str, dict[str, Any]],
                    settings: dict[str, tuple[bool, bool, bool]], model: dict[str, Any],
                    symbols: dict[str, int], n_inits: int, n_per: int,
                    device: torch.device | str = "cpu", replicate: int = 0
                    ) -> dict[str, dict[str, np.ndarray]]:
    """task -> setting -> N (analysis/kernel.py) of randomly initialised models of shape `model`
    (ModelConfig keys) with identity attention, a and b fixed by the setting (a on, b on, zero
    diag) (`ab_values`), on the templates task with the symbol alphabets `symbols`, averaged
    over n_inits initializations, n_per examples per template, computed on `device`.
    `replicate` r draws its own initializations (1000 + r * n_inits + i) and examples (seed r),
    the same for every setting: replicate 0 is the study's first estimate."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, spec in tasks.items():
        task = build_task({"name": "templates", **symbols, **spec})
        out[name] = {}
        for setting, (a_on, b_on, zero_diag) in settings.items():
            cfg = kernel_model_config(model, zero_diag, len(task.vocab), task.n_classes,
                                      task.seq_len)
            a, b = ab_values((a_on, b_on, zero_diag), cfg.d_model)
            # one model per setting, on the device, re-initialised there for each init
            # (INITS.apply redraws every parameter): no model of the 100,000-symbol paper
            # alphabet built on the CPU per init; on the CPU the weights are those of a model
            # built with the same generator
            net = Transformer(cfg, generator=torch.Generator().manual_seed(1000)).to(device)

            def make(i: int, a: float = a, b: float = b, m: Transformer = net) -> Transformer:
                g = torch.Generator(device=device).manual_seed(1000 + replicate * n_inits + i)
                INITS[cfg.init.name].apply(m, cfg, g)
                with torch.no_grad():
                    for layer in m.layers:
                        layer.attn.a.fill_(a)
                        layer.attn.b.fill_(b)
                return m

            out[name][setting] = template_kernel_matrix(task, make, n_inits, n_per,
                                                        seed=replicate, device=device)
    return out


def kernel_model_config(model: dict[str, Any], zero_diag: bool, vocab_size: int,
                        n_classes: int, max_seq_len: int) -> ModelConfig:
    """The identity-attention model of the kernel measurement: `model`'s shape, the task's
    sizes. One ConfigError line (naming `model.KEY`) when `model` holds a bad key or value."""
    return ModelConfig.build({
        **model, "attention": {"name": "identity", "zero_diag": zero_diag},
        "vocab_size": vocab_size, "n_classes": n_classes, "max_seq_len": max_seq_len},
        where="model")


def kernel_section(rep: Report, Ns: dict[str, dict[str, np.ndarray]],
                   conds: dict[str, dict[str, float]], recipe: Any,
                   settings: dict[str, tuple[bool, bool, bool]], main: str) -> Report:
    """symbols-kernel's table (cond(N) per task and setting, and plain / `main`) and its figure
    (N of same/different per setting); `recipe` is the study's KernelRecipe."""
    d = kernel_model_config(recipe.model, True, 2, 2, 8).d_model
    a, b = ab_values(settings[main], d)
    rows = [[t, *(f"{c[s]:.3g}" for s in settings), f"{c['plain'] / c[main]:.3g}"]
            for t, c in conds.items()]
    rep.sections.append(
        f"## cond(N) at initialization (d_model {d}; a = {a:.3f}, b = {b:g}; "
        f"{recipe.n_inits} initializations, {recipe.n_per_template} examples per "
        "template)\n\nReplicate 0; the verdict reads plain and "
        f"{main} in every replicate.\n\n" + table(["task", *settings, f"plain / ({main})"], rows))
    plot_matrices({f"{s}: cond {condition_number(N):.3g}": N
                   for s, N in Ns["same/different"].items()}, rep.out / "kernel_same_different.png")
    rep.figure("kernel_same_different.png", "N for same/different (rows, columns: templates "
               "`$a $a`, `$a $b`) at initialization")
    return rep
