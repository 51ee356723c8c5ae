"""The field's plateau remedies on LEGO as data, shared by lego-plateau and lego-short-chain
(our finding; docs/papers.md §7): each remedy's overrides of the recipe, the two combinations,
the attention diagnostics every such run logs, and the per-run records their reports write.
Not a study module: what two studies share lives in _support/ (docs/design.md §1)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from reasonlab.store import write_text_atomic
from reasonlab.studies.kit.base import Report, Results, Scale, merge
from reasonlab.studies.lego.analysis import (accuracy_report, first_pass_section,
                                             fitted_section, on_plateau,
                                             plateau_diagnostics_section, wall_per_1000)
from reasonlab.studies.lego.common import PASS, recipe
from reasonlab.studies.lego.verdicts import first_pass_steps

RECIPE = "recipe"
NORMSOFTMAX, TEMPERATURE, HEAT, SMALL_INIT = ("NormSoftmax", "temperature 1",
                                              "heat treatment", "small init")
DIAGNOSED = {"diagnostics": ["attention"]}
REMEDIES: dict[str, dict[str, Any]] = {
    # gamma 1: a row of logits with a spread below 1 is brought to unit spread (at init the
    # recipe's rows have a spread of ~0.6: std 0.1 weights, d_model 64, d_head 16)
    NORMSOFTMAX: {"model": {"attention": {"name": "norm_softmax", "gamma": 1.0}}},
    # tau 1 in place of sqrt(d_head) = 4: logits 4x larger, attention sharper
    TEMPERATURE: {"model": {"attention": {"name": "temperature", "tau": 1.0}}},
    # the same temperature for the first third of training (1000 of 3000 steps: past #1, which
    # the recipe learns by step 400-600, into the plateau), then the standard one
    HEAT: {"model": {"attention": {"name": "heat_treatment", "tau": 1.0, "steps": 1000}}},
    # the paper's small-init side read directly at our width: std (1/d_in)^0.8, 0.036 for
    # d_in 64 (the recipe's 0.1 is gamma ~ 0.55, the usual 1/sqrt(d_in) side)
    SMALL_INIT: {"model": {"init": {"name": "rate", "gamma": 0.8}}},
}
"""Each remedy alone: overrides of the recipe (numbers fixed before any run; docs/papers.md §7
says where each comes from)."""

COMBINATION = "NormSoftmax + small init"
CURRICULUM = "NormSoftmax + small init + curriculum"
COMBINED: dict[str, dict[str, Any]] = {
    # Chosen on the screening seed (seed 0 of every arm, run first; README, "The wall at #2"):
    # no arm passed #2, so "best" is the staircase below it -- #1's first pass: NormSoftmax
    # 300, small init 700, the recipe 1100, heat treatment 1200, temperature 1 never.
    COMBINATION: merge(REMEDIES[NORMSOFTMAX], REMEDIES[SMALL_INIT]),
    # ... and with the short-chain curriculum of Musat 2024 (mixed lengths 3-12: a tenth of
    # the training sentences have 3 clauses, 17 tokens, where #2 is the chain's end).
    CURRICULUM: merge(REMEDIES[NORMSOFTMAX], REMEDIES[SMALL_INIT], {"task": {"min_clauses": 3}}),
}
"""The best two remedies combined, run after the remedy arms (configs/lego_plateau_combined.json
is the curriculum arm's seed-0 config, run first as a screening run; a test keeps the two
equal)."""


def combined_config(scale: Scale, seed: int = 0) -> dict[str, Any]:
    """The config of the curriculum combination's run at this scale (COMBINED)."""
    return merge(recipe(scale), DIAGNOSED, COMBINED[CURRICULUM], {"seed": seed})


def write_run_records(results: Results, path: Path) -> None:
    """Every run's numbers as data (runs.json beside the report; the family keeps a copy of the
    measured one in _support/, so its README never depends on a store): arm, seed, run id,
    first step at PASS per chain position (null: never), final accuracy per position, the
    attention diagnostics on the #2 plateau and the wall time per 1,000 steps. One run per
    line, written atomically."""
    rows = []
    for spec, r in results:
        first = first_pass_steps(r["curve"])
        rows.append({"arm": spec.arm, "seed": spec.seed, "run": Path(r["dir"]).name,
                     "steps": spec.config.steps,
                     "first_pass": [x if math.isfinite(x) else None for x in first],
                     "final_acc": r["final"]["acc_by_depth"],
                     "plateau": on_plateau(r["curve"]),
                     "wall_s_per_1000": wall_per_1000(Path(r["dir"]))})
    write_text_atomic(path, "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")


def staircase_report(title: str, results: Results, out: Path, n_train: int
                     ) -> tuple[Report, dict[str, list[list[float]]], dict[str, list[float]]]:
    """What both plateau studies report first: the accuracy per chain position, the staircase
    (first pass of every position), what fitted #0..#n_train-1, the attention on the #2 plateau,
    and the run records (runs.json). Returns the report, the finals [arm -> seeds x positions]
    and #2's first pass per seed [arm -> seeds] (inf: never), which their verdicts read."""
    passes = {a: [first_pass_steps(c) for c in cs] for a, cs in results.curves().items()}
    rep, finals = accuracy_report(title, results, out, n_train)
    first_pass_section(rep, passes, PASS, f"First step at which a position reaches {PASS}",
                       results.first.config.steps, log=False)
    fitted_section(rep, passes, finals, n_train)
    plateau_diagnostics_section(rep, results, out)
    write_run_records(results, out / "runs.json")
    return rep, finals, {a: [p[2] for p in ps] for a, ps in passes.items()}
