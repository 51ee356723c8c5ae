"""Calibration cases of the LEGO rules (lego/verdicts.py, lego/_support/programs.py), at the seeds
each study runs (3 per arm at every scale: lego.common.SEEDS and the kit's default) and the
per-seed noise of lego/noise.toml.

Every case is data (kit/calibration_engine.py): each arm's per-seed centre under the null and
the alternative, the noise entry and the study whose units the one engine draws them at, normal,
fit-or-not and skewed, at every scale and over the looks of --until-decided; a `*_of` function
hands the drawn per-seed values to the rule in the shape it reads (accuracy per position, loss
curves, head scores, first-pass steps). A first-pass step is drawn as its logarithm, a centre
plus the first-pass noise, and the `*_of` function rounds it up to the evaluation grid, "never"
past the run's end (`on_grid`). A seed that passes #2 or never (the plateau remedies) is a
`Mixture` (a type at a rate and a step), one that fits or not at a rate a `Types`.

Each null is the claim's effect absent at the boundary hardest for the rule: equal arms for a
gain, a difference exactly at the tolerance for non-inferiority, a share closed exactly at
CLOSED, heads exactly HEAD_MARGIN above random init, and, for the rules that read the order in
which positions or runs first reach a level, seeds whose steps are exchangeable (drawn from one
distribution, rounded up to the evaluation grid, "never" past the run's end). Every
alternative is the paper's effect where its text gives a size, else the size stated in the
case's note (or none).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from reasonlab.studies.kit.calibration import Exempt, noise_entries
from reasonlab.studies.kit.calibration_engine import Arms, Mixture, Sim, Types
from reasonlab.studies.kit.core import Claim, Verdict
from reasonlab.studies.lego._support import programs
from reasonlab.studies.lego import verdicts as v
from reasonlab.studies.lego.common import MIMIC, PRETRAINED, RANDOM

CLAIM = Claim("c", "a calibration claim", "simulation")


def mean(key: str) -> float:
    return float(noise_entries("lego")[key]["mean"])


# -- accuracies per chain position: each seed's mean over a span, drawn by the engine ----------


def finals_of(x: Arms, span: slice, positions: int = 12) -> dict[str, list[list[float]]]:
    """arm -> per-seed values  ->  arm -> seeds x positions: each seed's value on `span`, 1.0
    elsewhere (the supervised positions fitted, so the needs_fit gate passes)."""
    out = {}
    for arm, values in x.items():
        rows = np.ones((len(values), positions))
        rows[:, span] = np.asarray(values, float)[:, None]
        out[arm] = rows.tolist()
    return out


def extrapolation_of(x: Arms) -> Verdict:
    """extrapolation_gain of ALBERT over BERT on #6-#8, each seed's #6-#11 at its value."""
    return v.extrapolation_gain(CLAIM, finals_of(x, slice(6, 12)), "ALBERT", "BERT", 6)


def span_of(x: Arms) -> Verdict:
    """span_gain of a over b on #6-#10, each seed's #5-#10 at its value, #0-#4 fitted."""
    return v.span_gain(CLAIM, finals_of(x, slice(5, 11)), "a", "b", slice(6, 11), slice(0, 5))


def closed_of(x: Arms) -> Verdict:
    """closed_verdict on #4-#6 of 8 positions, each seed's #4-#7 at its value."""
    return v.closed_verdict(CLAIM, finals_of(x, slice(4, 8), positions=8), slice(4, 7),
                            "mean accuracy #4-#6")


def edge_of(x: Arms) -> Verdict:
    """edge_verdict on the drawn final accuracies, the majority class at 0.205."""
    return programs.edge_verdict(CLAIM, {a: vals.tolist() for a, vals in x.items()},
                                 majority=0.205)


def fit_gain_of(x: Arms) -> Verdict:
    """fit_gain_verdict with each seed's #0-#5 at its value, #6-#11 at chance."""
    return v.fit_gain_verdict(CLAIM, {a: [[float(m)] * 6 + [0.5] * 6 for m in vals]
                                      for a, vals in x.items()}, "a", "b", 6)


# -- steps to a level: orders --------------------------------------------------------------------


def on_grid(x: np.ndarray, every: int, horizon: float = math.inf) -> np.ndarray:
    """Drawn log first-pass steps -> steps rounded up to the evaluation grid, inf past
    `horizon` (never within the run): what `steps` draws, from the engine's values."""
    s = np.ceil(np.exp(np.asarray(x, float)) / every) * every
    return np.where(s > horizon, math.inf, s)


def converge_of(horizon: float = math.inf) -> Callable[[Arms], Verdict]:
    """converge_verdict on the drawn log steps on a grid of 25, a run past `horizon` never
    converging (inf: every run converges)."""
    return lambda x: v.converge_verdict(CLAIM, on_grid(x["fast"], 25, horizon).tolist(),
                                        on_grid(x["slow"], 25, horizon).tolist(),
                                        ("fast", "slow"))


def curve(passes: np.ndarray, every: int, horizon: int) -> list[dict[str, object]]:
    """An accuracy curve on which each position first reaches 0.95 at its pass step."""
    return [{"step": s, "acc_by_depth": [0.95 if s >= p else 0.5 for p in passes]}
            for s in range(every, horizon + 1, every)]


MIDDLE = tuple(f"#{k}" for k in range(1, 11))


def positions(lead: float) -> dict[str, float]:
    """Log first-pass steps of #1-#10 around step 300, #11 `lead` times earlier."""
    return {**{p: math.log(300) for p in MIDDLE}, "#11": math.log(300 / lead)}


def last_first_of(every: int, horizon: int = 750) -> Callable[[Arms], Verdict]:
    """last_first_verdict on one curve per seed: #0 passing at the first evaluation, #1-#11 at
    their drawn steps on the grid."""
    def call(x: Arms) -> Verdict:
        cols = [on_grid(x[p], every, horizon) for p in (*MIDDLE, "#11")]
        return v.last_first_verdict(CLAIM, [curve(np.array([every, *(c[i] for c in cols)]),
                                                  every, horizon)
                                            for i in range(len(x["#11"]))])
    return call


ORDER_UNITS = 4
"""Seeds per arm at which an exact order or Fisher test of two arms can decide (1/70 and 1/70
for a complete split, <= ALPHA); at the study's 3 (1/20) neither can."""

MODES = ("fixed (paper)", "given (authors' code)")
SEP = "|"


def stairs(one: float, random_later: float) -> dict[str, float]:
    """Log first-pass steps of the one-token seeds' #0 (around 100) and #1 (`one` times
    later; 1: exchangeable with #0) in both root modes, and of the random root (`random_later`
    times the one-token #0's; inf: never)."""
    return {**{f"{m}{SEP}#0": math.log(100) for m in MODES},
            **{f"{m}{SEP}#1": math.log(100 * one) for m in MODES},
            "random": math.log(100 * random_later)}


def staircase_of(x: Arms) -> Verdict:
    """staircase_verdict on the drawn first passes (every 75 of 750 steps), #2-#11 never; the
    random root's one step stands for every position (both drawn)."""
    passes = {m: [[a, b, *[math.inf] * 10] for a, b in zip(on_grid(x[f"{m}{SEP}#0"], 75, 750),
                                                           on_grid(x[f"{m}{SEP}#1"], 75, 750))]
              for m in MODES}
    passes["random (both drawn)"] = [[s] * 12 for s in on_grid(x["random"], 75, 750)]
    return v.staircase_verdict(CLAIM, passes, 750)


# -- head scores of one fixed checkpoint vs random init -----------------------------------------


ASSOC, MANIP = 0.63, 0.98
"""all-MiniLM-L6-v2's best association and manipulation heads (lego/README.md)."""


def heads_of(x: dict[str, np.ndarray]) -> Verdict:
    """heads_verdict on the pretrained heads above and one random-init model per unit with
    the drawn best heads; positional controls far below."""
    def grid(v: float) -> torch.Tensor:
        t = torch.zeros(2, 2)
        t[1, 0] = float(v)
        return t

    controls = {PRETRAINED: {"variables": grid(ASSOC), "variables, permuted": grid(0.0),
                             "positional head": torch.tensor(0.0)},
                RANDOM: [{"variables": grid(a)} for a in x["assoc"]]}
    scores = {PRETRAINED: {"manipulation": grid(MANIP)},
              RANDOM: [{"manipulation": grid(m)} for m in x["manip"]]}
    return v.heads_verdict(CLAIM, scores, controls)


def classical_of(x: dict[str, np.ndarray]) -> Verdict:
    """classical_verdict with each seed's #0-#5 at its drawn value, #6-#11 at 0.5."""
    return v.classical_verdict(CLAIM, {arm: [[float(a)] * 6 + [0.5] * 6 for a in vals]
                                       for arm, vals in x.items()})


# -- validation-loss curves (LEGO §5) ----------------------------------------------------------

STEPS = np.arange(50, 501, 50)
FPS = {"BERT": 1.0, "Hardcode": 0.88, "Hybrid": 0.988}
"""FLOPs per step relative to BERT's at cpu scale (lego/README.md: 0.88x, 0.988x)."""


def curves_of(x: Arms) -> dict[str, list[list[tuple]]]:
    """arm -> per-seed shift  ->  arm -> seeds' validation-loss curves 5.5 -> 4.5 over 500
    steps, each moved by its seed's shift at every step."""
    base = 4.5 + np.exp(-STEPS / 150)
    return {a: [list(zip(STEPS.tolist(), (base + o).tolist())) for o in vals]
            for a, vals in x.items()}


def early_of(x: Arms) -> Verdict:
    return v.faster_early(CLAIM, curves_of(x), FPS, "Hardcode", "BERT", 100)


def late_of(x: Arms) -> Verdict:
    return v.worse_at_end(CLAIM, curves_of(x), FPS, "Hardcode", "BERT")


def as_low_of(x: Arms) -> Verdict:
    return v.at_least_as_low(CLAIM, curves_of(x), FPS, "Hybrid", "BERT")


CASES = [
    *(Sim(v.extrapolation_gain, extrapolation_of, {"ALBERT": 0.5, "BERT": 0.5},
          {"ALBERT": 0.8, "BERT": 0.5}, key, "lego-extrapolation", label=key,
          note="null: equal #6-#8; alternative +0.30 (§3 Fig. 3: ALBERT near-perfect on #6-#7, "
          "BERT somewhat above chance on #6)") for key in ("extrapolated", "partly-fitted")),
    *(Sim(v.span_gain, span_of, {"a": 0.5, "b": 0.5}, {"a": 0.8, "b": 0.5}, key,
          "lego-shortcut", label=key,
          note="null: equal #6-#10; alternative +0.30 (§4.3: 'significantly degraded')")
      for key in ("extrapolated", "partly-fitted")),
    *(Sim(v.classical_verdict, classical_of, {"BERT": v.CLASSICAL_THRESHOLD, "ALBERT": 1.1},
          {"BERT": 1.1, "ALBERT": 1.1}, key, "lego-extrapolation", center="median",
          clip=(0.0, 1.0), decides_at=6, label=key,
          note="null: half of one arm's seeds reach 0.95 on #0-#5 (fit-or-not: fit 1.0 or "
          "not); alternative: every seed fits (§3 Fig. 3); a unanimous share decides from 6 "
          "seeds, the study runs 3") for key in ("supervised", "partly-fitted")),
    Sim(v.converge_verdict, converge_of(), {"fast": math.log(100), "slow": math.log(100)},
        {"fast": math.log(100), "slow": math.log(100 * v.SPEEDUP)}, "first-pass",
        "lego-pretraining", side=-1.0, decides_at=6, label="every run converges",
        note="null: exchangeable log steps on a grid of 25; alternative 2x fewer steps (power "
        "0.24 at the study's 3 seeds, 0.80 at 6)"),
    Sim(v.converge_verdict, converge_of(200), {"fast": math.log(150), "slow": math.log(150)},
        {"fast": math.log(100), "slow": math.log(800)}, "first-pass", "lego-pretraining",
        side=-1.0, decides_at=ORDER_UNITS, label="censored at 200 steps",
        note="null: exchangeable, most runs never converge; alternative: the fast arm near "
        "step 100, the slow one past the run (8x). At the 2x of the uncensored case the power "
        "under this censoring stays below 0.3 at any units: the exact order test needs every "
        "fast run before every slow one, and 4% of fast runs pass 200 steps"),
    Sim(v.heads_verdict, heads_of, {"assoc": ASSOC - v.HEAD_MARGIN, "manip": mean(
        "random-init-manipulation")}, {"assoc": mean("random-init-association"),
                                       "manip": mean("random-init-manipulation")},
        "random-init-association", "lego-pretraining", center="median", side=-1.0,
        clip=(0.0, 1.0), decides_at=6,
        note="null: half the random-init seeds' best association head within HEAD_MARGIN of "
        "the pretrained one (manipulation far); alternative: the gaps all-MiniLM-L6-v2 shows "
        "(0.63 / 0.98 vs 0.03 / 0.09)"),
    Sim(v.heads_verdict, heads_of, {"assoc": mean("random-init-association"),
                                    "manip": MANIP - v.HEAD_MARGIN},
        {"assoc": mean("random-init-association"), "manip": mean("random-init-manipulation")},
        "random-init-manipulation", "lego-pretraining", center="median", side=-1.0,
        clip=(0.0, 1.0), decides_at=6, label="manipulation at the margin"),
    # closed_verdict: random at 0.55, pretrained 0.30 above it, mimicking a share of the gap
    *(Sim(v.closed_verdict, closed_of,
          {RANDOM: 0.55, PRETRAINED: 0.85, MIMIC: 0.55 + v.CLOSED * 0.3},
          {RANDOM: 0.55, PRETRAINED: 0.85, MIMIC: 0.55 + 0.9 * 0.3}, key, "lego-mimicking",
          label=key, note="null: a gap of 0.30 closed exactly half; alternative 90% closed "
          "(§4.2.2: mimicking 'closes the gap')") for key in ("minilm-extrapolated",
                                                              "partly-fitted")),
    *(Sim(v.closed_verdict, closed_of, {RANDOM: 0.55, PRETRAINED: 0.55, MIMIC: 0.85},
          {RANDOM: 0.55, PRETRAINED: 0.85, MIMIC: 0.55 + 0.9 * 0.3}, key, "lego-mimicking",
          label=f"no gap, {key}", note="null: no pretrained advantage (the precondition), "
          "mimicking 0.30 above random; alternative as above")
      for key in ("minilm-extrapolated", "partly-fitted")),
    Sim(v.last_first_verdict, last_first_of(75), positions(1.0), positions(4.0), "first-pass",
        "lego-shortcut", side=-1.0,
        note="null: #11 exchangeable with #1-#10 (evaluated every 75 of 750 steps); "
        "alternative #11 4x earlier (Fig. 3a)"),
    Sim(v.last_first_verdict, last_first_of(250), positions(1.0), None, "first-pass",
        "lego-shortcut", side=-1.0, stress=True, label="coarse grid",
        note="null on 3 evaluations (every 250 of 750 steps): many positions tie, so the rule "
        "decides nothing either way at any units (power at 4x earlier: 0.04); its power is "
        "the fine grid's above"),
    Sim(v.staircase_verdict, staircase_of, stairs(1.0, math.inf), stairs(3.0, math.inf),
        "first-pass", "lego-staircase", side=-1.0, label="no staircase",
        note="null: #0 and #1 exchangeable, the random root never leaves; alternative #1 3x "
        "after #0"),
    Sim(v.staircase_verdict, staircase_of, stairs(3.0, 1.0), stairs(3.0, math.inf),
        "first-pass", "lego-staircase", side=-1.0, label="no plateau",
        note="null: the random root as fast as a one-token #0; alternative: it never leaves "
        "the plateau within the run (our finding at cpu and long scale). At 5x later the power "
        "stays below 0.3 at any units: every random seed must pass 2x after every one-token "
        "#0"),
    Sim(v.faster_early, early_of, {"Hardcode": 0.0, "BERT": 0.0}, None, "mlm-loss",
        "lego-hardcoded-attention",
        note="null: the same loss at every step; the paper gives no early size"),
    Sim(v.worse_at_end, late_of, {"Hardcode": 0.0, "BERT": 0.0}, {"Hardcode": 0.17, "BERT": 0.0},
        "mlm-loss", "lego-hardcoded-attention", decides_at=6,
        note="null: the same final loss; alternative +0.17 (§5: 1.66 vs 1.49), about twice the "
        "per-seed SD (0.08): power 0.3 at the study's 3 seeds"),
    Sim(v.at_least_as_low, as_low_of, {"Hybrid": v.LOSS_TOL, "BERT": 0.0},
        {"Hybrid": -0.02, "BERT": 0.0}, "mlm-loss", "lego-hardcoded-attention", side=-1.0,
        decides_at=72,
        note="null: Hybrid LOSS_TOL above BERT; alternative 0.02 below (§5: 1.47 vs 1.49): "
        "0.04 from the bound at a per-seed SD of 0.08, which about 70 seeds per arm resolve"),
    *(Sim(programs.edge_verdict, edge_of, {programs.CONV: 0.335, programs.SOFTMAX: 0.335},
          None, key, "lego-conv-qkv-programs", label=key,
          note="null: equal accuracy; the abstract gives no size")
      for key in ("programs-accuracy", "partly-fitted")),
    Exempt(v.needs_fit, "a gate: only ever turns a verdict inconclusive (kit `requires`); its "
           "futility bound (mean_of) only curtails a sequential run, calibrated over the looks "
           "through span_gain", through=(v.span_gain,)),
    Exempt(v.last_first_every_arm, "all_of over arms of last_first_verdict, calibrated above",
           parts=(v.last_first_verdict,)),
    Exempt(v.cheaper, "FLOPs per token counted from the config: deterministic, read exactly",
           example=lambda: v.cheaper(CLAIM, {"64 x 512": (0.721, 1.0),
                                             "parameters": (0.813, 1.0)})),
    Exempt(v._both_views, "the two views (same step, same FLOPs) of the loss rules",
           through=(v.at_least_as_low,)),
    Exempt(v._loss_gain, "the loss-gain form of _both_views", through=(v.faster_early,
                                                                       v.worse_at_end)),
]


# -- the wall at #2 (lego-plateau): 3 seeds per arm, 3000 steps evaluated every 100 --------------

PLATEAU_STEPS, PLATEAU_EVERY = 3000, 100


def second_of(x: Arms) -> Verdict:
    """plateau_verdict on the drawn log first-pass steps of #2, remedy r against base."""
    return v.plateau_verdict(CLAIM, {a: on_grid(x[a], PLATEAU_EVERY, PLATEAU_STEPS).tolist()
                                     for a in ("r", "base")}, "r", "base")


def mixed_second_of(x: Arms) -> Verdict:
    """second_of on the drawn seeds' values (a seed that never passes: inf)."""
    return second_of({a: x[a].value for a in x})


def never(p: float, center: float = 1500.0) -> dict[str, tuple[float, float]]:
    """A seed never passes #2 with probability p, else passes around step `center` (log)."""
    return {"pass": (1.0 - p, math.log(center)), "never": (p, math.inf)}


def passing(p_remedy: float, p_recipe: float) -> dict[str, dict[str, float]]:
    """#2 passes in a seed of the remedy (r) and of the recipe (base) at these rates."""
    return {"r": {"pass": p_remedy}, "base": {"pass": p_recipe}}


def passes_of(x: Arms) -> Verdict:
    """more_seeds_verdict on the drawn outcomes: a passing seed's first pass at step 1000 (the
    rule counts passes), the others never."""
    return v.more_seeds_verdict(CLAIM, {a: [1000.0 if k == "pass" else math.inf for k in x[a]]
                                        for a in ("r", "base")}, "r", "base")


def fit_or_not_of(x: Arms) -> Verdict:
    """fit_gain_verdict on drawn fit-or-not seeds: a seed's #0-#5 mean 0.99 when it fits, else
    the one-hop rule's 0.667, exactly (ties within a mode)."""
    return v.fit_gain_verdict(CLAIM, {a: [[0.99 if k == "fit" else 0.667] * 6 + [0.5] * 6
                                          for k in x[a]] for a in ("a", "b")}, "a", "b", 6)


CASES += [
    *(Mixture(v.plateau_verdict, mixed_second_of, {"r": never(p), "base": never(p)},
              {"r": never(0.0, 500), "base": never(1.0)}, "first-pass", "lego-plateau",
              side=-1.0, decides_at=ORDER_UNITS, label=label,
              note=f"null: #2's first pass exchangeable between arms, never in {p:.0%} of "
              "seeds; alternative: every remedy seed passes near step 500, no recipe seed "
              "passes (what Hoffmann et al.'s fixes do to the intermediate step); 3 seeds per "
              "arm cannot decide")
      for p, label in ((0.6, "exchangeable, most never pass"), (0.9, "exchangeable, rare"))),
    Sim(v.plateau_verdict, second_of, {"r": math.log(1500), "base": math.log(1500)},
        {"r": math.log(500), "base": math.log(2000)}, "first-pass", "lego-plateau", side=-1.0,
        decides_at=ORDER_UNITS, label="every seed passes",
        note="null: #2's log first-pass steps exchangeable between arms (a slow seed may pass "
        "after the run: never); alternative: the remedy 4x sooner; 3 seeds per arm cannot "
        "decide"),
    *(Types(v.more_seeds_verdict, passes_of, passing(p, p), passing(0.95, 0.05), "first-pass",
            "lego-plateau", decides_at=5, label=f"p = {p:g}",
            note=f"null: #2 passes with probability {p:g} in either arm; alternative: 0.95 "
            "against 0.05 (a 'much higher likelihood to learn the intermediate task'); 3 per arm "
            "cannot decide, 4 (a complete split only) has power 0.64")
      for p in (0.3, 0.7)),
    *(Sim(v.fit_gain_verdict, fit_gain_of, {"a": 0.667, "b": 0.667},
          {"a": 0.667 + 0.15, "b": 0.667}, key, "lego-plateau", label=key,
          note="null: equal #0-#5 means at the one-hop rule's 0.667; alternative +0.15 (#2 "
          "learned: one of six positions from 0.5 to 1.0 is +0.083, two +0.17)")
      for key in ("supervised", "partly-fitted")),
    Types(v.fit_gain_verdict, fit_or_not_of, {"a": {"fit": 0.4}, "b": {"fit": 0.4}},
          {"a": {"fit": 1.0}, "b": {"fit": 0.0}}, "supervised", "lego-plateau", rest="not",
          label="fit-or-not", note="null: seeds fit (0.99) or sit at the one-hop rule (0.667) "
          "with the same probability 0.4 in both arms; alternative: every seed of a fits, none "
          "of b"),
]
