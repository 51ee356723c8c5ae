"""Calibration cases of the anchor rules (anchors/verdicts.py), at the runs each study gives at
cpu scale (its default seeds) and the per-run noise of anchors/noise.toml.

A run is simulated as its solution type, drawn at a rate per cell, with fractions and a seen
accuracy consistent with that type (`typed_runs`). Each rule's null is its effect absent, at the
boundary that is hardest for it: a share of exactly CLAIM_MAJORITY for a majority, two equal
rates for a comparison of shares (at several rates: the exact tests' error depends on it), no
rise for a paired mean. The alternatives stand for the paper's effect; the text of the paper we
have (its abstract) gives no per-run rates or sizes, so each is stated in its case's note: the
phase diagram's regions as 90% of runs of one type, and mean effects at a few times the rule's
minimum.

Every case is data for the one engine (kit/calibration_engine.py, at the study's units at every
scale): a `Sim` where a unit is a centre plus a spread (a fitted run's inferential fraction, a
mechanism measure of runs of one type), drawn normal, fit-or-not and skewed; a `Types` where it
is a run's solution type drawn at a rate (counted by exact intervals: the share rules' nulls); a
`Mixture` where it is both, a type drawn at a rate and a value around that type's centre, so
that the number of runs of each type the mechanism groups get and the fit status the lr
precondition reads are themselves drawn at rates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from reasonlab.analysis.solutions import FIT_THRESHOLD, MAJORITY, SOLUTION_TYPES, classify
from reasonlab.studies.anchors import verdicts as v
from reasonlab.studies.anchors.common import CLAIM_MAJORITY
from reasonlab.studies.anchors.init_phase import AnchorsInitPhase
from reasonlab.studies.anchors.lr_weight_decay import MIN_INFERENTIAL_GAIN
from reasonlab.studies.anchors.mechanism import AnchorsMechanism
from reasonlab.studies.kit.calibration import Exempt, noise, noise_entries
from reasonlab.studies.kit.calibration_engine import Mixture, Sim, Types
from reasonlab.studies.kit.core import Claim, Verdict

CLAIM = Claim("c", "a calibration claim", "simulation")
Rates = Mapping[str, float]
"""solution type -> its probability per run (the rest: neither)."""

PAPER_SHARE = 0.9
"""The alternative's share of runs of the type a region of the phase diagram "gives"."""
DEPTHS = (2, 3)
GAMMAS = (0.21, 0.93)


def typed_runs(rng: np.random.Generator, kinds: Sequence[str], **fields: Any
               ) -> list[dict[str, Any]]:
    """Simulated runs of the solution types `kinds`: a seen accuracy and held-out fractions
    drawn so that analysis/solutions.classify gives each type back (checked)."""
    k = np.array([SOLUTION_TYPES.index(t) for t in kinds], int)
    unfit, inf_, sym_ = (k == SOLUTION_TYPES.index(t) for t in ("unfit", "inferential",
                                                                 "symmetric"))
    u = rng.uniform(size=(4, len(k)))
    seen = np.where(unfit, 0.03 + u[0] * (FIT_THRESHOLD - 0.031),
                    FIT_THRESHOLD + u[0] * (1 - FIT_THRESHOLD))
    major = MAJORITY + u[1] * (1 - MAJORITY)  # the named answer's fraction
    minor = u[2] * (1 - major)  # the other one's, beside it
    low = u[1:3] * np.where(unfit, 0.3, MAJORITY - 1e-3)  # neither / unfit: both low
    inf = np.select([inf_, sym_], [major, minor], low[0])
    sym = np.select([inf_, sym_], [minor, major], low[1])
    out = [{"verdict": t, "seen_acc": float(a), "inferential": float(i), "symmetric": float(s),
            "neither": float(max(0.0, 1 - i - s)), **fields}
           for t, a, i, s in zip(kinds, seen, inf, sym)]
    assert all(classify(r["seen_acc"], r["inferential"], r["symmetric"]) == r["verdict"]
               for r in out)
    return out


def run(rng: np.random.Generator, kind: str, **fields: Any) -> dict[str, Any]:
    """One simulated run of solution type `kind` (typed_runs)."""
    return typed_runs(rng, [kind], **fields)[0]


def runs(rng: np.random.Generator, rates: Rates, n: int, **fields: Any) -> list[dict[str, Any]]:
    """n runs whose types are drawn at `rates` (the remainder is 'neither')."""
    p = np.array([rates.get(t, 0.0) for t in SOLUTION_TYPES])
    p[SOLUTION_TYPES.index("neither")] += 1 - p.sum()
    return typed_runs(rng, [SOLUTION_TYPES[i] for i in rng.choice(4, n, p=p)], **fields)


def cpu_seeds(study: type) -> int:
    return study.default_seeds["cpu"]


def measured_rate(key: str) -> float:
    """The measured rate of a noise.toml entry (its `rate`)."""
    noise("anchors", key)  # the entry exists, with sd and source
    return float(noise_entries("anchors")[key]["rate"])


def measured_types() -> Rates:
    """The measured rate of each solution type in the mechanism study's cell (noise.toml
    `mechanism-types`; the remainder is 'neither')."""
    noise("anchors", "mechanism-types")
    entry = noise_entries("anchors")["mechanism-types"]
    return {t: float(entry[t]) for t in ("inferential", "symmetric", "unfit")}


# -- the phase diagram (anchors-init-phase) ------------------------------------------------------


TEMPLATES = {r["verdict"]: r for r in typed_runs(np.random.default_rng(0), SOLUTION_TYPES)}
"""One simulated run of each solution type (typed_runs): the share rules read the types alone,
so every drawn run of a type is a copy of its template."""


def typed(kinds: np.ndarray, **fields: Any) -> list[dict[str, Any]]:
    """Runs of the drawn solution types, with fractions and a seen accuracy consistent with
    each (TEMPLATES)."""
    return [{**TEMPLATES[str(k)], **fields} for k in kinds]


def majority_of(x: Mapping[str, np.ndarray]) -> Verdict:
    return v.majority_verdict(CLAIM, typed(x["runs"]), "inferential", "symmetric", "g", "runs")


def grid(small: Rates, large: Rates) -> dict[str, Rates]:
    """Arm "g L" per cell: `small` rates at the largest gamma, `large` at the smallest."""
    return {f"{g} {L}": rates for g, rates in zip(GAMMAS, (large, small)) for L in DEPTHS}


def phase_of(key: str) -> Callable[[Mapping[str, np.ndarray]], Verdict]:
    """The phase study's verdict `key` on the drawn grid."""
    index = {"small-init": 0, "large-init": 1, "no-fit": 2}[key]

    def call(x: Mapping[str, np.ndarray]) -> Verdict:
        cells = {(g, L): typed(x[f"{g} {L}"]) for g in GAMMAS for L in DEPTHS}
        return v.phase_verdicts(lambda k: Claim(k, k, "simulation"), cells, GAMMAS,
                                DEPTHS)[index]
    return call


def no_fit_of(x: Mapping[str, np.ndarray]) -> Verdict:
    return v.no_fit_verdict(CLAIM, typed(x["large"]), typed(x["small"]), "depth 3", GAMMAS)


def unfit(large: float, small: float) -> dict[str, Rates]:
    return {"large": {"unfit": large}, "small": {"unfit": small}}


def phase_cases() -> list[Types]:
    half, paper = CLAIM_MAJORITY, PAPER_SHARE
    study = "anchors-init-phase"
    pooled = {s: AnchorsInitPhase.default_seeds[s] * len(DEPTHS)  # a column, depths pooled
              for s in AnchorsInitPhase.scales if s != "smoke"}
    return [
        Types(v.majority_verdict, majority_of, {"runs": {"inferential": half}},
              {"runs": {"inferential": paper}}, "type-share", None, at=pooled,
              label="a column's runs", note=f"null: share {half}; alternative: {paper}; the "
              "units are a grid column's runs, both depths pooled"),
        Types(v.phase_verdicts, phase_of("small-init"), grid({"inferential": half},
                                                             {"unfit": 1.0}),
              grid({"inferential": paper}, {"unfit": 1.0}), "type-share", study,
              label="small-init", note=f"null: inferential {half} at the largest gamma; "
              f"alternative: {paper}"),
        Types(v.phase_verdicts, phase_of("large-init"),
              grid({}, {"symmetric": half * 0.9, "unfit": 0.1}), grid({}, {"symmetric": paper}),
              "type-share", study, label="large-init",
              note=f"null: symmetric {half} of fitted runs (10% unfit); alternative: {paper} "
              "of runs, all fitted"),
        Types(v.phase_verdicts, phase_of("large-init"),
              grid({}, {"symmetric": half * 0.5, "unfit": 0.5}), grid({}, {"symmetric": paper}),
              "type-share", study, label="large-init, half unfit",
              note="null: symmetric half of the fitted runs, half the runs unfit"),
        Types(v.no_fit_verdict, no_fit_of, unfit(half, 0.0), unfit(paper, 1 - paper),
              "unfit-rate", study, label="majority boundary",
              note=f"null: unfit {half} at the large init, 0 at the small; alternative: "
              f"{paper} vs {1 - paper:.1f}"),
        *[Types(v.no_fit_verdict, no_fit_of, unfit(p, p), unfit(paper, 1 - paper), "unfit-rate",
                study, label=f"equal rates {p:g}", note=f"null: unfit {p:g} in both cells; "
                f"alternative: {paper} vs {1 - paper:.1f}")
          for p in (0.5, measured_rate("unfit-rate"), 0.8, 0.9)],
    ]


# -- lr and weight decay (anchors-lr-weight-decay) -----------------------------------------------


LRS, WDS = (1.0, 3.0), (0.01, 1.0)


def lr_grid(rise: float) -> dict[str, float]:
    """Arm "lr L wd W" per (lr, wd) cell: a fitted run's inferential fraction at the measured
    mean (noise.toml inferential-fraction), + `rise` at the larger lr."""
    mean = float(noise_entries("anchors")["inferential-fraction"]["mean"])
    return {f"lr {lr:g} wd {wd:g}": mean + (rise if lr == LRS[-1] else 0.0)
            for lr in LRS for wd in WDS}


UNFIT_SEEN = FIT_THRESHOLD / 2
"""An unfit run's seen accuracy: any below FIT_THRESHOLD makes classify read it unfit."""


def lr_run(lr: float, wd: float, seed: int, frac: float, fits: bool = True) -> dict[str, Any]:
    """A run of the lr x wd grid as the study records it: inferential fraction `frac`, the rest
    of its answers symmetric, and a seen accuracy of 1.0 when it fits (UNFIT_SEEN when not)."""
    seen = 1.0 if fits else UNFIT_SEEN
    return {"verdict": classify(seen, frac, 1.0 - frac), "seen_acc": seen, "inferential": frac,
            "symmetric": 1.0 - frac, "lr": lr, "wd": wd, "seed": seed}


def effect_of(x: Mapping[str, np.ndarray]) -> Verdict:
    """effect_verdict on the drawn fractions, seed i the i-th unit of every cell, every run
    fitted."""
    recs = [lr_run(lr, wd, s, float(f))
            for lr in LRS for wd in WDS for s, f in enumerate(x[f"lr {lr:g} wd {wd:g}"])]
    return v.effect_verdict(CLAIM, recs, "lr", list(LRS), MIN_INFERENTIAL_GAIN, "wd")


FIT_MEAN, UNFIT_MEAN = 0.5, 0.05
"""A fitted run's inferential fraction in the fitting-only case (high, so that unfit runs pull
the smaller lr's mean far down), and an unfit run's (below 0.1)."""


def fitting(fit_lo: float, rise: float) -> dict[str, dict[str, tuple[float, float]]]:
    """Arm "lr L wd W" per cell, types "fit" / "unfit" (rate, inferential fraction): at the
    smaller lr a run fits at `fit_lo`, its fraction around FIT_MEAN, else around UNFIT_MEAN;
    at the larger lr every run fits, its fraction around FIT_MEAN + `rise`."""
    return {f"lr {lr:g} wd {wd:g}": ({"fit": (1.0, FIT_MEAN + rise)} if lr == LRS[-1] else
                                     {"fit": (fit_lo, FIT_MEAN),
                                      "unfit": (1.0 - fit_lo, UNFIT_MEAN)})
            for lr in LRS for wd in WDS}


def fitting_of(x: Mapping[str, np.ndarray]) -> Verdict:
    """effect_verdict on the drawn runs, seed i the i-th unit of every cell, each fitted or not
    as drawn (an unfit run's seen accuracy below FIT_THRESHOLD)."""
    recs = [lr_run(lr, wd, s, float(r["value"]), r["type"] == "fit")
            for lr in LRS for wd in WDS for s, r in enumerate(x[f"lr {lr:g} wd {wd:g}"])]
    return v.effect_verdict(CLAIM, recs, "lr", list(LRS), MIN_INFERENTIAL_GAIN, "wd")


def effect_cases() -> list[Sim]:
    study = "anchors-lr-weight-decay"
    return [Sim(v.effect_verdict, effect_of, lr_grid(0.0), lr_grid(0.3), "inferential-fraction",
                study, clip=(0.0, 1.0), label="fitted runs",
                note="null: no rise (a fitted run's fraction at the measured mean 0.030, sd "
                "0.069, noise.toml); alternative: a rise of 0.30 (3x the minimum)"),
            Mixture(v.effect_verdict, fitting_of, fitting(0.5, 0.0), fitting(1.0, 0.3),
                    "inferential-fraction", study, clip=(0.0, 1.0),
                    label="rise from fitting only",
                    note="null for the precondition: fitted runs alike at both lrs (mean 0.5), "
                    "half the runs at the smaller lr unfit (fractions about 0.05): the mean "
                    "rises by about 0.2 from fitting alone; alternative (so that the case "
                    "decides: its null reads reproduced only about 1% of the time): every run "
                    "fits and the fraction rises by 0.30 (3x the minimum), as the fitted "
                    "runs' case")]


# -- mechanism (anchors-mechanism) ---------------------------------------------------------------

MECHANISM_ARMS = ("small init", "large init")


def typed_gap(gap: float) -> dict[str, dict[str, tuple[float, float]]]:
    """The mechanism study's two arms, types (rate, centre of the measure): "small init"
    (gamma 0.93, depth 2) at the measured rates (noise.toml mechanism-types; the remainder
    neither), an inferential run's measure `gap` from the other types' 0; "large init"
    (gamma 0.21) every run unfit, as measured (noise.toml unfit-rate: 12 of 12)."""
    rates = measured_types()
    small = {t: (rates[t], gap if t == "inferential" else 0.0) for t in rates}
    return {"small init": {**small, "neither": (1.0 - sum(rates.values()), 0.0)},
            "large init": {"unfit": (1.0, 0.0)}}


def grouped_of(sign: int, gap: float) -> Callable[[Mapping[str, np.ndarray]], Verdict]:
    """group_gap_verdict on the drawn runs of both arms, grouped by their drawn type (as the
    study groups by the measured one)."""
    def call(x: Mapping[str, np.ndarray]) -> Verdict:
        runs = np.concatenate([x[a] for a in MECHANISM_ARMS])
        inf, sym = ([{"x": float(r["value"])} for r in runs if r["type"] == t]
                    for t in ("inferential", "symmetric"))
        return v.group_gap_verdict(CLAIM, inf, sym, "x", sign, gap)
    return call


def gap_of(x: Mapping[str, np.ndarray]) -> Verdict:
    """group_gap_verdict on the drawn held-out residuals of the two groups."""
    return v.group_gap_verdict(CLAIM, [{"x": a} for a in x["inferential"]],
                               [{"x": b} for b in x["symmetric"]], "x", -1, v.MIN_RESID_GAP)


def mechanism_cases(seeds: int) -> list[Sim]:
    study = "anchors-mechanism"
    return [
        Mixture(v.group_gap_verdict, grouped_of(-1, v.MIN_RESID_GAP), typed_gap(0.0),
                typed_gap(-2 * v.MIN_RESID_GAP), "heldout-resid", study, side=-1.0,
                decides_at=300, label=f"additive, {seeds} seeds",
                note="null: equal residuals; alternative: inferential lower by 0.2 (2x the "
                "minimum); types drawn at the measured rates (noise.toml mechanism-types: 1 "
                "inferential, 2 symmetric of 12 runs at small init; every run unfit at large "
                "init), so 12 seeds give about 1 inferential run: power 0.00 there, 0.8 from "
                "about 260 seeds per arm (0.87 at 300)"),
        Mixture(v.group_gap_verdict, grouped_of(+1, v.MIN_ORDER_GAP), typed_gap(0.0),
                typed_gap(2 * v.MIN_ORDER_GAP), "order-corr", study, decides_at=60,
                label=f"embedding, {seeds} seeds",
                note="null: equal correlations; alternative: inferential higher by 0.4; power "
                "0.02 at 12 seeds, 0.8 from about 55 per arm (0.88 at 60)"),
        Sim(v.group_gap_verdict, gap_of, {"inferential": 0.0, "symmetric": 0.0},
            {"inferential": -2 * v.MIN_RESID_GAP, "symmetric": 0.0}, "heldout-resid", None,
            side=-1.0, at={"cpu": 3}, decides_at=28, label="3 runs of each type",
            note="null: equal means; alternative: lower by 0.2; the units are runs of each "
            "MEASURED type, not the study's seeds (at the measured rates a cpu study has about "
            "1 inferential run of 12: the two Mixtures above), so the rule's least decidable "
            "count (3 of each) stands for them; power 0.07 there, 0.8 from 28 of each"),
    ]


# -- the embedding LayerNorm (anchors-embedding-norm) --------------------------------------------


def undoes_of(x: Mapping[str, np.ndarray]) -> Verdict:
    return v.undoes_verdict(CLAIM, typed(x["without"], layer1_rms=0.065),
                            typed(x["with"], layer1_rms=1.0))


def layernorm_arms(without: float, with_: float, fit: float = 1.0) -> dict[str, Rates]:
    """Inferential `without` / `with_` the embedding LayerNorm, the runs with it fitting at
    `fit`."""
    return {"without": {"inferential": without},
            "with": {"inferential": with_ * fit, "unfit": 1 - fit}}


def undoes_cases() -> list[Types]:
    paper, study = PAPER_SHARE, "anchors-embedding-norm"
    return [
        *[Types(v.undoes_verdict, undoes_of, layernorm_arms(p, p),
                layernorm_arms(paper, 1 - paper), "inferential-rate-small-init", study,
                label=f"equal rates {p:g}", note=f"null: inferential {p:g} with and without "
                f"the LayerNorm, all fitted; alternative: {paper} vs {1 - paper:.1f}")
          for p in (measured_rate("inferential-rate-small-init"), 0.7, 0.8, 0.9)],
        Types(v.undoes_verdict, undoes_of, layernorm_arms(paper, 1 - paper, fit=0.5),
              layernorm_arms(paper, 1 - paper), "inferential-rate-small-init", study,
              label="LayerNorm arm half unfit",
              note=f"null: {paper} vs {1 - paper:.1f} inferential among fitted runs, but the "
              "LayerNorm runs fit at 1/2 only (its precondition's boundary); alternative: the "
              "same, all fitted"),
    ]


CASES: list[Sim | Exempt] = [
    *phase_cases(),
    *effect_cases(),
    *mechanism_cases(cpu_seeds(AnchorsMechanism)),
    *undoes_cases(),
]
