"""Calibration cases of the abstract-symbols rules (symbols/verdicts.py, and the kit's
trend_verdict as symbols-copy-embedding-dim uses it): each rule driven under its null (the
paper's effect absent: at the rule's threshold, where a null is a boundary) and at the paper's
effect, with the per-seed noise of symbols/noise.toml, at the seeds each study runs (its
`default_seeds`). Accuracies are clipped to [0, 1]. Every case is data for the one engine
(kit/calibration_engine.py: normal, fit-or-not and skewed draws at every scale the study runs);
cond(N) is drawn on the log scale, its `call` exponentiating; a fitted MLP's training accuracy
is clipped at its ceiling. Where a unit is more than a centre plus a spread, its parts are
latent arms that `call` assembles deterministically: a learning curve is its seed's log
crossing n plus each grid point's error in binomial SDs; a seed's two language-model runs are
its shared perplexity plus each run's own deviation (paired)."""

from __future__ import annotations

import math

import numpy as np

from reasonlab.studies.kit import verdicts as kv
from reasonlab.studies.kit.calibration import Exempt, noise
from reasonlab.studies.kit.calibration_engine import Sim
from reasonlab.studies.kit.core import Claim, Verdict
from reasonlab.studies.symbols import data_efficiency as de
from reasonlab.studies.symbols import language_model as lm
from reasonlab.studies.symbols import mlp_vs_transformer as mvt
from reasonlab.studies.symbols import verdicts as v

CLAIM = Claim("c", "a calibration claim", "simulation")


# -- symbols-mlp-vs-transformer ---------------------------------------------------------------

NS = (1000, 10_000)


def chance_of(x) -> Verdict:
    """chance_verdict on the drawn test accuracies per n, the MLP fitted (1.000)."""
    return v.chance_verdict(CLAIM, {int(n): a.tolist() for n, a in x.items()},
                            {int(n): [1.0] * len(a) for n, a in x.items()}, mvt.CHANCE,
                            mvt.MLP_MAX)


TEST_SPREAD = noise("symbols", "mlp-test-accuracy") / noise("symbols", "mlp-train-accuracy")
"""The test accuracies' per-seed SD as a multiple of the training accuracies' (the Sim's
noise entry)."""


def fits_of(x) -> Verdict:
    """chance_verdict on the drawn test ("test n") and training ("train n") accuracies per n:
    the precondition (the MLP fits) read from the drawn training accuracies."""
    return v.chance_verdict(CLAIM, {n: x[f"test {n}"].tolist() for n in NS},
                            {n: x[f"train {n}"].tolist() for n in NS}, mvt.CHANCE, mvt.MLP_MAX)


def chance_and_train(train: float) -> dict[str, float]:
    """Test accuracy at chance (0.5) at every n, training accuracy at `train`."""
    return {**{f"test {n}": 0.5 for n in NS}, **{f"train {n}": train for n in NS}}


def reaches_of(need: float, who: str = "transformer"):
    """reaches_verdict on the drawn test accuracies at both n (the rule reads the largest)."""
    return lambda x: v.reaches_verdict(CLAIM, {n: x["acc"].tolist() for n in NS}, need, who)


# -- symbols-data-efficiency ------------------------------------------------------------------

GRID = de.N_TRAIN["cpu"]
SLOPE = 2.4
"""Steepness of a seed's accuracy curve, logistic in ln n from 0.5 to 1: 0.08 x SLOPE = 0.19
accuracy per unit of ln n at the 0.9 crossing, the plain arm's measured slope between its 0.75
and 0.9 crossings (381 and 831 samples, README)."""
N_TEST = 1000
"""Test examples per evaluation at cpu scale: each point's binomial noise."""
ERR_SPREAD = 1 / noise("symbols", "samples-log-n")
"""The per-point error arms' spread: drawn in SD units (centre 0, SD 1), so that the adapter
scales them by each point's own binomial SD."""
ARMS = ("plain", "mod")


def crossing(ratio: float, n_mod: float) -> dict[str, float]:
    """Arm "plain" / "mod": ln of the n at which a seed's curve crosses the target 0.9 (the
    modified arm at n_mod, measured 265 (README), the plain one at ratio x n_mod), and arm
    "<arm> err n": the error of its point at grid n in binomial SDs (centre 0)."""
    return {"plain": math.log(ratio * n_mod), "mod": math.log(n_mod),
            **{f"{a} err {n}": 0.0 for a in ARMS for n in GRID}}


def curves(x, arm: str) -> dict[int, list[float]]:
    """Per-seed accuracy curves of `arm`: logistic in ln n through 0.9 at the seed's drawn
    crossing, plus each point's drawn error x its binomial SD, clipped to [0, 1]."""
    grid = np.array(GRID, float)
    mid = x[arm] - math.log(4) / SLOPE  # sigmoid 0.8 (accuracy 0.9) at the crossing
    a = 0.5 + 0.5 / (1 + np.exp(-SLOPE * (np.log(grid)[:, None] - mid[None, :])))  # [n, seeds]
    err = np.stack([x[f"{arm} err {n}"] for n in GRID])  # [n, seeds]
    a = np.clip(a + err * np.sqrt(a * (1 - a) / N_TEST), 0, 1)
    return {int(n): a[i].tolist() for i, n in enumerate(GRID)}


def ratio_of(x) -> Verdict:
    """ratio_verdict on the drawn plain and modified curves."""
    return v.ratio_verdict(CLAIM, curves(x, "plain"), curves(x, "mod"), de.TARGET, de.MIN_RATIO,
                           de.NO_GAIN, de.PAPER_RATIO)


# -- symbols-language-model -------------------------------------------------------------------

PPL = 7.764
"""The plain model's final validation perplexity at cpu scale (the store of 2026-11-27, 7
seeds)."""
OWN_SPREAD = (noise("symbols", "lm-perplexity-difference") / math.sqrt(2)
              / noise("symbols", "lm-perplexity"))
"""A run's own deviation from its seed's perplexity as a multiple of the seed's SD (the Sim's
noise entry): lm-perplexity-difference / sqrt 2, so that the paired difference has the
measured SD."""


def paired(drop: float) -> dict[str, float]:
    """Arm "seed": the perplexity a seed's two runs share (its data and initial weights); arms
    "own p" / "own m": each run's own deviation from it, the modified run's `drop` x PPL
    lower."""
    return {"seed": PPL, "own p": 0.0, "own m": -drop * PPL}


def perplexity_of(x) -> Verdict:
    """perplexity_verdict on p = seed + own p, m = seed + own m."""
    return v.perplexity_verdict(CLAIM, x["seed"] + x["own p"], x["seed"] + x["own m"],
                                lm.EXPECTED_DROP * PPL)


# -- symbols-kernel ---------------------------------------------------------------------------

COND = {"same/different": (4.8e5, 90.0), "variable binding": (5.8e7, 1.3e5),
        "random": (2.5e5, 622.0)}
"""cond(N) plain and a + b (zero diag) per task at cpu scale, replicate 0 (README)."""


def log_conds(ratio: float | None) -> dict[str, float]:
    """Arm "plain t" / "mod t": ln cond(N) of each setting of task t (each drawn per replicate,
    independently: no pairing gain); `ratio`: the true plain / modified ratio of the first
    task (None: the measured ones)."""
    out = {}
    for i, (task, (p, m)) in enumerate(COND.items()):
        if i == 0 and ratio is not None:
            p = m * ratio
        out |= {f"plain {task}": math.log(p), f"mod {task}": math.log(m)}
    return out


def conditioning_of(x) -> Verdict:
    """conditioning_verdict on cond(N) = exp of the drawn ln cond(N) per replicate."""
    return v.conditioning_verdict(CLAIM, {t: {"plain": np.exp(x[f"plain {t}"]).tolist(),
                                              "mod": np.exp(x[f"mod {t}"]).tolist()}
                                          for t in COND}, "mod")


# -- symbols-readout-vs-full ------------------------------------------------------------------

RO_NS = (1000, 10_000, 30_000)


def readout_of(x) -> Verdict:
    """readout_verdict on the drawn read-out accuracies at every n, fitted (1.000), the widest
    frozen network at 0.95."""
    n = len(x["acc"])
    return v.readout_verdict(CLAIM, {k: x["acc"].tolist() for k in RO_NS},
                             {k: [1.0] * n for k in RO_NS}, ("widest", [0.95] * n))


def lead_of(x) -> Verdict:
    """lead_verdict: arm "full n" / "ro n" the all-layers / read-out accuracies at n."""
    return v.lead_verdict(CLAIM, {n: x[f"full {n}"].tolist() for n in RO_NS},
                          {n: x[f"ro {n}"].tolist() for n in RO_NS})


def leading(lead: float) -> dict[str, float]:
    """Both arms at 0.85 on average, all layers `lead` above at every n."""
    return {**{f"full {n}": 0.85 + lead for n in RO_NS}, **{f"ro {n}": 0.85 for n in RO_NS}}


# -- symbols-copy-embedding-dim ---------------------------------------------------------------

WIDTHS = (64, 128, 256)


def fall_of(x) -> Verdict:
    """trend_verdict of the transformer's accuracy falling with the width, arm "d" per width."""
    return kv.trend_verdict(CLAIM, {w: x[str(w)].tolist() for w in WIDTHS}, v.MIN_DROP,
                            "transformer", "d", falling=True)


def falling(lo: float, hi: float) -> dict[str, float]:
    """Accuracy falling linearly in log width from `lo` to `hi`."""
    return {str(w): lo + (hi - lo) * i / (len(WIDTHS) - 1) for i, w in enumerate(WIDTHS)}


def b_fixes_of(x) -> Verdict:
    """b_fixes_verdict on arms "plain d" / "b d" per width d, the plain model's fall judged
    by trend_verdict on its own arms (as the study does)."""
    plain = {w: x[f"plain {w}"].tolist() for w in WIDTHS}
    fall = kv.trend_verdict(CLAIM, plain, v.MIN_DROP, "transformer", "d", falling=True)
    return v.b_fixes_verdict(CLAIM, plain, {w: x[f"b {w}"].tolist() for w in WIDTHS}, fall)


def sweeps(plain: tuple[float, float], b: tuple[float, float]) -> dict[str, float]:
    """The plain model and the b term each falling linearly in log width (lo, hi)."""
    return {**{f"plain {k}": c for k, c in falling(*plain).items()},
            **{f"b {k}": c for k, c in falling(*b).items()}}


FELL = (0.9, 0.2)
"""The plain model's fall in the alternative: 0.9 at the smallest width to 0.2 at the largest
(Fig. 3a's shape, our reading)."""

CASES = [
    Sim(v.chance_verdict, chance_of, {"1000": 0.5, "10000": mvt.MLP_MAX},
        {"1000": 0.5, "10000": 0.5}, "mlp-test-accuracy", "symbols-mlp-vs-transformer",
        center="median", side=-1.0, clip=(0.0, 1.0), decides_at=6,
        label="above chance at one n",
        note="null: at n=10k half the seeds above MLP_MAX (0.55: generalise-or-not), fitted; "
        "alternative: 0.5 at every n; a unanimous share decides from 6 seeds, the study runs "
        "5"),
    Sim(v.chance_verdict, fits_of, chance_and_train(v.MLP_FIT_MIN), chance_and_train(1.0),
        "mlp-train-accuracy", "symbols-mlp-vs-transformer", clip=(0.0, 1.0),
        spread={f"test {n}": TEST_SPREAD for n in NS}, decides_at=6, label="does not fit",
        note="null: at chance but the training accuracy only at MLP_FIT_MIN (0.9); "
        "alternative: fitted (1.000, clipped there: a fitted MLP's noise lies below the "
        "ceiling); the test accuracies at their own SD (mlp-test-accuracy); a unanimous share "
        "decides from 6 seeds, the study runs 5"),
    *(Sim(v.reaches_verdict, reaches_of(need, who), {"acc": need}, {"acc": measured}, key,
          "symbols-mlp-vs-transformer", clip=(0.0, 1.0), label=who,
          note=f"null: {need} at the largest n; alternative: {measured} (measured, README)")
      for who, need, measured, key in (
          ("transformer", mvt.TRANSFORMER_MIN, 0.996, "transformer-test-accuracy"),
          ("MLP shared table", mvt.SHARED_MIN, 0.944, "shared-table-accuracy"))),
    *(Sim(v.ratio_verdict, ratio_of, crossing(de.NO_GAIN, null), crossing(de.PAPER_RATIO, alt),
          "samples-log-n", "symbols-data-efficiency",
          spread={f"{a} err {n}": ERR_SPREAD for a in ARMS for n in GRID}, label=label,
          note=note)
      for label, null, alt, note in (
          ("ratio 1.5", 265.0, 265.0, "null: the plain arm needs 1.5x the samples (no gain); "
           "alternative: 10x (the paper's order of magnitude); the cpu grid 100..10k at every "
           "scale"),
          ("seeds beyond the grid", 5000.0, 800.0, "null: ratio 1.5 near the grid's top (5000 "
           "vs 7500: plain seeds often never reach 0.9 by 10k and are left out); alternative: "
           "10x from 800"))),
    Sim(v.perplexity_verdict, perplexity_of, paired(0.0), paired(lm.EXPECTED_DROP),
        "lm-perplexity", "symbols-language-model", spread={"own p": OWN_SPREAD,
                                                           "own m": OWN_SPREAD}, decides_at=5,
        note="null: equal perplexity; alternative: a 1.7% drop (our first cpu run); a seed's "
        "two runs share its perplexity (paired), each with its own deviation; power 0.99 at "
        "the cpu scale's 7 seeds, about 0.5 at the paper scale's 3, 0.94 at 5"),
    Sim(v.conditioning_verdict, conditioning_of, log_conds(v.MIN_CONDITION_RATIO),
        log_conds(None), "kernel-log-cond", "symbols-kernel",
        note="ln cond(N) drawn per setting; null: on one task the ratio is "
        "MIN_CONDITION_RATIO (2); alternative: the measured ratios (>= 400)"),
    Sim(v.readout_verdict, readout_of, {"acc": v.READOUT_MIN}, {"acc": 0.932},
        "readout-test-accuracy", "symbols-readout-vs-full", clip=(0.0, 1.0), decides_at=6,
        note="null: 0.9 at the largest n; alternative: 0.932 (measured at n=30k, README), "
        "power about 0.5 at the paper scale's 3 seeds"),
    Sim(v.lead_verdict, lead_of, leading(0.0), leading(2 * v.MIN_LEAD),
        "readout-test-accuracy", "symbols-readout-vs-full", clip=(0.0, 1.0),
        note="null: no lead; alternative: a lead of 0.2 (2 x MIN_LEAD; the paper gives no "
        "size)"),
    Sim(kv.trend_verdict, fall_of, falling(0.5, 0.5), falling(*FELL), "copy-accuracy",
        "symbols-copy-embedding-dim", clip=(0.0, 1.0), label="inverse scaling",
        note="null: flat in width; alternative: 0.9 -> 0.2"),
    *(Sim(v.b_fixes_verdict, b_fixes_of, sweeps(*null), sweeps(FELL, (0.99, 0.98)),
          "copy-accuracy", "symbols-copy-embedding-dim", clip=(0.0, 1.0), label=label,
          note=f"null: {note}; alternative: the plain model falls 0.9 -> 0.2, the b term "
          "0.99 -> 0.98")
      for label, null, note in (
          ("b term falls", (FELL, (0.99, 0.99 - v.MIN_DROP / 2)),
           "the plain model falls and the b term drops by MIN_DROP / 2 (0.99 -> 0.89)"),
          ("b term at B_MIN", (FELL, (v.B_MIN, v.B_MIN)), "the b term flat at B_MIN (0.9)"),
          ("no fall to remove", ((0.5, 0.5), (0.99, 0.98)),
           "the plain model does not fall (a perfect b term reads nothing)"))),
    Exempt(v._joined, "all_of carrying the part nearest to failing",
           through=(v.chance_verdict, v.conditioning_verdict, v.b_fixes_verdict)),
]
