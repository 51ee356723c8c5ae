"""LEGO shortcut solutions (Zhang et al. 2022, §4.3 and Appendix A).

(a) Random-init models supervised on all 12 variables learn the LAST variable of the chain
    early: it appears only once and its value is the parity of the minus signs. The paper's
    claim covers BERT and ALBERT, so (a) has a BERT-like and an ALBERT-like (tied) arm, at
    every scale (the tied arm is one more cpu run: the study stays within 15 minutes). At
    paper scale accuracy is evaluated every 120 steps (one epoch of 120k sentences at batch
    1000, the paper's per-epoch curves); a position passing 0.9 at the same evaluation as #11
    is a tie and counts half, not as "not earlier".
(b) Supervising #0-#4 plus #11 (the shortcut is available) instead of #0-#5 degrades
    extrapolation to the unsupervised middle #6-#10.
(c) Mimicking initialisation (association + manipulation heads, train/mimic.py) prevents
    that damage. (Pretrained init is studied in `lego-pretraining`; it needs the MiniLM
    architecture, so it is not mixed into this study's small recipe.)
All arms but the ALBERT-like one are BERT-like with the `lego-extrapolation` recipe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.report import final_by_depth, mean_std, plot_curves, plot_positions, table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.studies.lego_common import (PASS, arm_model, by_arm, first_pass_steps,
                                           gain_verdict, needs_fit, recipe, span_means, spec)
from reasonlab.studies.lego_extrapolation import N_CLAUSES, lego_task

ALL, FIRST6, SHORTCUT, SHORTCUT_MIMIC = "#0-#11", "#0-#5", "#0-#4 + #11", "#0-#4 + #11, mimic"
ALL_TIED = "#0-#11, ALBERT"
ARMS = (ALL, ALL_TIED, FIRST6, SHORTCUT, SHORTCUT_MIMIC)  # display order
EVAL_EVERY: dict[Scale, int] = {"paper": 120}
"""Evaluation period overriding the recipe's: the paper's curves are per epoch (120 steps)."""
SHORTCUT_POS = [0, 1, 2, 3, 4, N_CLAUSES - 1]
MIDDLE = slice(6, N_CLAUSES - 1)  # #6-#10: unsupervised in both (b) arms
COMMON = slice(0, 5)  # #0-#4: supervised in every arm
EARLY_FRACTION = 0.8
"""(a) holds in a seed when #11 passes PASS before at least this fraction of #1-#10."""

MIMIC_SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(steps=3, batch_size=16, lr=1e-3),
    # lr 3e-3 as in the README's recipe table, where mimicking at 3e-3 (200 x 64) let ALBERT
    # learn #0 by step 300; 150 x 32 keeps the arm within the study's 15 minutes.
    "cpu": dict(steps=150, batch_size=32, lr=3e-3),
    "paper": dict(steps=1000, batch_size=200, lr=5e-5),
}


def last_first_verdict(claim: Claim, curves: list[list[dict[str, Any]]]) -> Verdict:
    """Per seed, the fraction of #1-#10 that #11 passes PASS before, a tie (same evaluation)
    counting half; the claim holds in a seed when that fraction is >= EARLY_FRACTION."""
    per_seed, parts = [], []
    for c in curves:
        steps = first_pass_steps(c)
        last, middle = steps[-1], steps[1:-1]
        earlier = sum(last < s for s in middle)
        tied = sum(last == s for s in middle if np.isfinite(s))
        frac = (earlier + 0.5 * tied) / len(middle)
        per_seed.append((np.isfinite(last), frac))
        parts.append(f"#11 at {last:g}, #1-#10 at {[f'{s:g}' for s in middle]} (#11 earlier "
                     f"than {earlier}, tied with {tied})")
    ev = (f"first step at accuracy >= {PASS} per seed: " + "; ".join(parts)
          + f"; needs #11 before >= {EARLY_FRACTION:.0%} of #1-#10 (a tie counts half) in a "
          "majority of seeds")
    if not any(fin for fin, _ in per_seed):
        return Verdict(claim, "inconclusive", ev + " (#11 never passed)")
    ok = sum(fin and f >= EARLY_FRACTION for fin, f in per_seed) > len(per_seed) / 2
    return Verdict(claim, "reproduced" if ok else "not reproduced", ev)


def all_of(claim: Claim, verdicts: dict[str, Verdict]) -> Verdict:
    """One verdict for a claim made of every arm's: reproduced when all are, not reproduced
    when any is not, else inconclusive."""
    statuses = {v.status for v in verdicts.values()}
    status = ("reproduced" if statuses == {"reproduced"} else
              "not reproduced" if "not reproduced" in statuses else "inconclusive")
    ev = "; ".join(f"{arm} ({v.status}): {v.evidence}" for arm, v in verdicts.items())
    return Verdict(claim, status, ev)  # type: ignore[arg-type]


@STUDIES.register("lego-shortcut")
class LegoShortcut(Study):
    name = "lego-shortcut"
    title = "LEGO: shortcut solutions through the last variable"
    claims = (
        Claim("last-first", "Supervised on all 12 variables, the last variable (#11) is "
              "learned before the middle ones, by BERT and by ALBERT",
              "Zhang et al. 2022, §4.3, Fig. 3a"),
        Claim("shortcut-hurts", "Supervising #0-#4 + #11 instead of #0-#5 degrades #6-#10",
              "Zhang et al. 2022, §4.3"),
        Claim("mimic-prevents", "Mimicking init improves #6-#10 under #0-#4 + #11 supervision",
              "Zhang et al. 2022, §4.3 and Appendix A"),
    )
    cpu_minutes = 8.9  # measured: 535 s after lego-extrapolation (4 new runs)
    cpu_after = "lego-extrapolation"
    # cpu: one seed, so the 4 runs not shared with lego-extrapolation fit 2 cores in 15 minutes
    default_seeds = {"smoke": 1, "cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        mimic = {"heads": {0: "manipulation", 1: "association"}, **MIMIC_SCALES[scale]}
        # (a) reads curves: its arms evaluate every EVAL_EVERY steps; the others keep the
        # recipe's period (their verdicts read final accuracy; #0-#5 stays lego-extrapolation's)
        curve = {"eval_every": EVAL_EVERY[scale]} if scale in EVAL_EVERY else {}
        arms = {ALL: ({"n_train_vars": N_CLAUSES}, curve),
                ALL_TIED: ({"n_train_vars": N_CLAUSES}, {**curve,
                                                        "model": arm_model(True, scale)}),
                FIRST6: ({}, {}),
                SHORTCUT: ({"supervised": SHORTCUT_POS}, {}),
                SHORTCUT_MIMIC: ({"supervised": SHORTCUT_POS}, {"mimic": mimic})}
        out = []
        for arm, (task_kw, over) in arms.items():
            task = {**lego_task(), **task_kw}
            if "supervised" in task_kw:
                task.pop("n_train_vars")
            out += [spec(arm, seed, base, task, **over) for seed in range(seeds)]
        # the longest runs (mimicking first) start first, so that 2 workers finish together
        return sorted(out, key=lambda s: s.arm != SHORTCUT_MIMIC)

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        arms = by_arm(results)
        finals = {arm: final_by_depth(arms[arm]) for arm in ARMS}
        plot_curves({a: [r["curve"] for r in arms[a]] for a in (ALL, ALL_TIED)},
                    out / "curves_all12.png",
                    "all 12 variables supervised: accuracy per chain position")
        plot_positions({a: finals[a] for a in (FIRST6, SHORTCUT, SHORTCUT_MIMIC)},
                       out / "accuracy_by_position.png", "final test accuracy per position")
        rep = Report(self.title)
        rows = [[arm] + [f"{x:.3f}" for x in mean_std(f)[0]] for arm, f in finals.items()]
        rep.sections.append("## Final test accuracy per chain position (mean over seeds; arm = "
                            "supervised positions)\n\n"
                            + table(["arm"] + [f"#{i}" for i in range(N_CLAUSES)], rows))
        passes = [[a, str(i)] + [f"{s:g}" for s in first_pass_steps(r["curve"])]
                  for a in (ALL, ALL_TIED) for i, r in enumerate(arms[a])]
        every = next(s.config.eval_every for s, _ in results if s.arm == ALL)
        rep.sections.append(f"## First step at accuracy >= {PASS}, all 12 supervised "
                            f"(evaluated every {every} steps)\n\n"
                            + table(["arm", "seed"] + [f"#{i}" for i in range(N_CLAUSES)],
                                    passes))
        rep.figures += [("curves_all12.png", "All 12 supervised, BERT-like and ALBERT-like: "
                         "accuracy per position during training (#11 is the brightest)"),
                        ("accuracy_by_position.png", "Final accuracy per position under #0-#5, "
                         "#0-#4 + #11, and #0-#4 + #11 after mimicking init")]
        what = "mean accuracy #6-#10"
        rep.verdicts = [
            all_of(self.claims[0], {
                a: last_first_verdict(self.claims[0], [r["curve"] for r in arms[a]])
                for a in (ALL, ALL_TIED)}),
            needs_fit(gain_verdict(self.claims[1], span_means(finals[FIRST6], MIDDLE),
                                   span_means(finals[SHORTCUT], MIDDLE), (FIRST6, SHORTCUT),
                                   what), {a: finals[a] for a in (FIRST6, SHORTCUT)}, COMMON),
            needs_fit(gain_verdict(self.claims[2], span_means(finals[SHORTCUT_MIMIC], MIDDLE),
                                   span_means(finals[SHORTCUT], MIDDLE),
                                   (SHORTCUT_MIMIC, SHORTCUT), what),
                      {a: finals[a] for a in (SHORTCUT, SHORTCUT_MIMIC)}, COMMON),
        ]
        return rep
