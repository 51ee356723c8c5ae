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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from reasonlab.analysis.solutions import FIT_THRESHOLD, MAJORITY, SOLUTION_TYPES, classify
from reasonlab.studies.anchors import verdicts as v
from reasonlab.studies.anchors.common import CLAIM_MAJORITY
from reasonlab.studies.anchors.embedding_norm import AnchorsEmbeddingNorm
from reasonlab.studies.anchors.init_phase import AnchorsInitPhase
from reasonlab.studies.anchors.lr_weight_decay import MIN_INFERENTIAL_GAIN, AnchorsLrWeightDecay
from reasonlab.studies.anchors.mechanism import AnchorsMechanism
from reasonlab.studies.kit.calibration import Case, Exempt, noise, noise_entries
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


def _majority(rates: Rates, n: int, kind: str) -> Callable[[np.random.Generator], Verdict]:
    return lambda rng: v.majority_verdict(CLAIM, runs(rng, rates, n), kind, "symmetric", "g",
                                          "runs")


def _phase(key: str, small: Rates, large: Rates, seeds: int
           ) -> Callable[[np.random.Generator], Verdict]:
    """The phase study's verdict `key` on a simulated grid: `small` rates at the largest gamma,
    `large` at the smallest, at both depths, `seeds` independent runs per cell."""
    index = {"small-init": 0, "large-init": 1, "no-fit": 2}[key]

    def draw(rng: np.random.Generator) -> Verdict:
        cells = {(g, L): runs(rng, rates, seeds) for g, rates in zip(GAMMAS, (large, small))
                 for L in DEPTHS}
        return v.phase_verdicts(lambda k: Claim(k, k, "simulation"), cells, GAMMAS,
                                DEPTHS)[index]
    return draw


def _no_fit(large: float, small: float, n: int) -> Callable[[np.random.Generator], Verdict]:
    return lambda rng: v.no_fit_verdict(CLAIM, runs(rng, {"unfit": large}, n),
                                        runs(rng, {"unfit": small}, n), "depth 3", GAMMAS)


def phase_cases(seeds: int) -> list[Case]:
    half, paper = CLAIM_MAJORITY, PAPER_SHARE
    pooled = seeds * len(DEPTHS)
    unfit = measured_rate("unfit-rate")
    return [
        Case(v.majority_verdict, _majority({"inferential": half}, pooled, "inferential"),
             _majority({"inferential": paper}, pooled, "inferential"), pooled, "type-share",
             f"{pooled} runs", note=f"null: share {half}; alternative: {paper}"),
        Case(v.phase_verdicts, _phase("small-init", {"inferential": half}, {"unfit": 1.0}, seeds),
             _phase("small-init", {"inferential": paper}, {"unfit": 1.0}, seeds), pooled,
             "type-share", "small-init", note=f"null: inferential {half} at the largest gamma; "
             f"alternative: {paper}"),
        Case(v.phase_verdicts, _phase("large-init", {}, {"symmetric": half * 0.9, "unfit": 0.1},
                                      seeds),
             _phase("large-init", {}, {"symmetric": paper}, seeds), pooled, "type-share",
             "large-init", note=f"null: symmetric {half} of fitted runs (10% unfit); "
             f"alternative: {paper} of runs, all fitted"),
        Case(v.phase_verdicts, _phase("large-init", {}, {"symmetric": half * 0.5, "unfit": 0.5},
                                      seeds),
             None, pooled, "type-share", "large-init, half unfit",
             note="null: symmetric half of the fitted runs, half the runs unfit"),
        Case(v.no_fit_verdict, _no_fit(half, 0.0, seeds), _no_fit(paper, 1 - paper, seeds),
             seeds, "unfit-rate", "majority boundary",
             note=f"null: unfit {half} at the large init, 0 at the small; alternative: "
             f"{paper} vs {1 - paper:.1f}"),
        *[Case(v.no_fit_verdict, _no_fit(p, p, seeds), None, seeds, "unfit-rate",
               f"equal rates {p:g}", note=f"null: unfit {p:g} in both cells")
          for p in (0.5, unfit, 0.8, 0.9)],
    ]


# -- lr and weight decay (anchors-lr-weight-decay) -----------------------------------------------


def _beta(mean: float, sd: float) -> tuple[float, float]:
    """Beta parameters with this mean and SD."""
    k = mean * (1 - mean) / (sd * sd) - 1
    return mean * k, (1 - mean) * k


def _effect(rise: float, seeds: int, fit_lo: float = 1.0, mean: float | None = None
            ) -> Callable[[np.random.Generator], Verdict]:
    """An lr x wd grid: each run's inferential fraction from a Beta at the measured mean (or
    `mean`) and SD, + `rise` at the larger lr, when it fits the seen pairs, at most 0.1 when it
    does not; runs at the smaller lr fit with probability `fit_lo`, at the larger always."""
    sd = noise("anchors", "inferential-fraction")
    mean = float(noise_entries("anchors")["inferential-fraction"]["mean"]) if mean is None \
        else mean
    shapes = {1.0: _beta(mean, sd), 3.0: _beta(mean + rise, sd)}

    def draw(rng: np.random.Generator) -> Verdict:
        recs = []
        for lr, (a, b) in shapes.items():
            for wd in (0.01, 1.0):
                for s in range(seeds):
                    fits = lr == 3.0 or rng.random() < fit_lo
                    inf = float(rng.beta(a, b)) if fits else rng.uniform(0, 0.1)
                    sym = rng.uniform(0, 1 - inf)
                    seen = rng.uniform(FIT_THRESHOLD, 1.0) if fits else rng.uniform(
                        0.3, FIT_THRESHOLD - 1e-3)
                    recs.append({"verdict": classify(seen, inf, sym), "seen_acc": seen,
                                 "inferential": inf, "symmetric": sym, "lr": lr, "wd": wd,
                                 "seed": s})
        return v.effect_verdict(CLAIM, recs, "lr", [1.0, 3.0], MIN_INFERENTIAL_GAIN, "wd")
    return draw


def effect_cases(seeds: int) -> list[Case]:
    return [Case(v.effect_verdict, _effect(0.0, seeds), _effect(0.3, seeds), seeds,
                 "inferential-fraction", f"{seeds} seeds",
                 note="null: no rise (a fitted run's fraction from a Beta at the measured mean "
                 "and sd, noise.toml); alternative: a rise of 0.30 (3x the minimum)"),
            Case(v.effect_verdict, _effect(0.0, seeds, fit_lo=0.5, mean=0.5), None, seeds,
                 "inferential-fraction", "rise from fitting only",
                 note="null for the precondition: fitted runs alike at both lrs (mean 0.5), "
                 "half the runs at the smaller lr unfit (fractions below 0.1): the mean rises "
                 "by about 0.2 from fitting alone")]


# -- mechanism (anchors-mechanism) ---------------------------------------------------------------


def _gap(key: str, sign: int, gap: float, min_gap: float, seeds: int
         ) -> Callable[[np.random.Generator], Verdict]:
    sd = noise("anchors", key)
    rates = measured_types()  # gamma 0.93, depth 2

    def draw(rng: np.random.Generator) -> Verdict:
        recs = runs(rng, rates, seeds) + runs(rng, {"unfit": 1.0}, seeds)  # + gamma 0.21
        for r in recs:
            r[key] = rng.normal(sign * gap if r["verdict"] == "inferential" else 0.0, sd)
        inf = [r for r in recs if r["verdict"] == "inferential"]
        sym = [r for r in recs if r["verdict"] == "symmetric"]
        return v.group_gap_verdict(CLAIM, inf, sym, key, sign, min_gap)
    return draw


def _gap_fixed(n: int, sd: float, gap: float, min_gap: float
               ) -> Callable[[np.random.Generator], Verdict]:
    def draw(rng: np.random.Generator) -> Verdict:
        inf = [{"x": x} for x in rng.normal(-gap, sd, n)]
        sym = [{"x": x} for x in rng.normal(0.0, sd, n)]
        return v.group_gap_verdict(CLAIM, inf, sym, "x", -1, min_gap)
    return draw


def mechanism_cases(seeds: int) -> list[Case]:
    sd = noise("anchors", "heldout-resid")
    return [
        Case(v.group_gap_verdict, _gap("heldout-resid", -1, 0.0, v.MIN_RESID_GAP, seeds),
             _gap("heldout-resid", -1, 2 * v.MIN_RESID_GAP, v.MIN_RESID_GAP, seeds), seeds,
             "heldout-resid", f"additive, {seeds} seeds",
             note="null: equal residuals; alternative: inferential lower by 0.2 (2x the "
             "minimum); types drawn at the measured rates (noise.toml mechanism-types: 1 "
             "inferential, 2 symmetric of 12 runs)"),
        Case(v.group_gap_verdict, _gap("order-corr", +1, 0.0, v.MIN_ORDER_GAP, seeds),
             _gap("order-corr", +1, 2 * v.MIN_ORDER_GAP, v.MIN_ORDER_GAP, seeds), seeds,
             "order-corr", f"embedding, {seeds} seeds",
             note="null: equal correlations; alternative: inferential higher by 0.4"),
        Case(v.group_gap_verdict, _gap_fixed(3, sd, 0.0, v.MIN_RESID_GAP),
             _gap_fixed(3, sd, 2 * v.MIN_RESID_GAP, v.MIN_RESID_GAP), 3, "heldout-resid",
             "3 runs of each type", note="null: equal means; alternative: lower by 0.2"),
    ]


# -- the embedding LayerNorm (anchors-embedding-norm) --------------------------------------------


def _undoes(without: float, with_: float, seeds: int, fit: float = 1.0
            ) -> Callable[[np.random.Generator], Verdict]:
    def draw(rng: np.random.Generator) -> Verdict:
        a = runs(rng, {"inferential": without}, seeds, layer1_rms=0.065)
        b = runs(rng, {"inferential": with_ * fit, "unfit": 1 - fit}, seeds, layer1_rms=1.0)
        return v.undoes_verdict(CLAIM, a, b)
    return draw


def undoes_cases(seeds: int) -> list[Case]:
    measured = measured_rate("inferential-rate-small-init")
    paper = PAPER_SHARE
    return [
        *[Case(v.undoes_verdict, _undoes(p, p, seeds), None, seeds,
               "inferential-rate-small-init", f"equal rates {p:g}",
               note=f"null: inferential {p:g} with and without the LayerNorm, all fitted")
          for p in (measured, 0.7, 0.8, 0.9)],
        Case(v.undoes_verdict, _undoes(paper, 1 - paper, seeds, fit=0.5),
             _undoes(paper, 1 - paper, seeds), seeds, "inferential-rate-small-init",
             "LayerNorm arm half unfit",
             note=f"null: {paper} vs {1 - paper:.1f} inferential among fitted runs, but the "
             "LayerNorm runs fit at 1/2 only (its precondition's boundary); alternative: the "
             "same, all fitted"),
    ]


CASES: list[Case | Exempt] = [
    *phase_cases(cpu_seeds(AnchorsInitPhase)),
    *effect_cases(cpu_seeds(AnchorsLrWeightDecay)),
    *mechanism_cases(cpu_seeds(AnchorsMechanism)),
    *undoes_cases(cpu_seeds(AnchorsEmbeddingNorm)),
]
