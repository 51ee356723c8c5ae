"""The FPT studies' verdict rules (Lu et al. 2021; docs/papers.md §4), unit-tested on hand-made
numbers in tests/unit/studies/fpt/test_verdicts.py. Thresholds are constants fixed before any
run. Inputs are task -> arm -> the verdict metric per seed (`common.finals`), or the runs'
results per task and arm (`common.by_task`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from reasonlab.studies.fpt.common import CHANCE, FPT, FULL, LSTM, RANDOM, metric
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (MIN_ACCURACY_GAIN, all_of, at_least, at_most,
                                            requires, threshold_verdict)

LEARNED = 0.1
"""A comparison tests something only if the better of its arms ends this far above chance."""
MATCH = 0.05
"""FPT 'reaches' the fully trained transformer when at most this much below it (verdict
reproduced); more than 3 x MATCH below is not reproduced, in between inconclusive."""
MUCH = 0.2
"""'Much worse': the LSTM at least this far below FPT on a bit task."""
MOST = 0.75
"""'Matter most': FPT recovers at least this share of full training's gain over the read-out
alone (reproduced); at most 1 - MOST is not reproduced; in between inconclusive."""
TARGET = 0.8
"""Convergence: the fixed accuracy is chance + TARGET x (better arm's final - chance)."""
FASTER = 1.5
"""Reproduced when the geometric-mean speedup over the tasks is at least this; not reproduced
at <= 1 (random as fast or faster); inconclusive between."""


def learned(task: str, means: Iterable[float]) -> bool:
    """The better of the compared arms (their mean metrics) ends at least LEARNED above chance:
    the one rule deciding which tasks a comparison counts."""
    return max(means) >= CHANCE[task] + LEARNED


def _left_out(tasks: Iterable[str], counted: Iterable[str]) -> str:
    return ", ".join(t for t in tasks if t not in set(counted)) or "none"


# -- fpt-universal ---------------------------------------------------------------------------
def universal_verdicts(claim: Callable[[str], Claim], values: dict[str, dict[str, list[float]]]
                       ) -> list[Verdict]:
    """FPT reaches Full; frozen random is worse than FPT; the LSTM is much worse on the bits."""
    match, random_worse, lstm_worse = (claim(k) for k in ("matches-full", "random-worse",
                                                          "lstm-worse"))

    def pair_learned(t: str, other: str) -> bool:
        return learned(t, (np.mean(values[t][FPT]), np.mean(values[t][other])))

    per_task = {}
    for t, v in values.items():
        gap = float(np.mean(v[FPT]) - np.mean(v[FULL]))
        ev = f"FPT {np.mean(v[FPT]):.3f} vs Full {np.mean(v[FULL]):.3f}, gap {gap:+.3f}"
        per_task[t] = requires(threshold_verdict(match, gap, ev, at_least(-MATCH),
                                                 at_most(-3 * MATCH)),
                               pair_learned(t, FULL), f"neither arm is {LEARNED} above chance")
    counted = [t for t in values if pair_learned(t, RANDOM)]
    gains = {t: float(np.mean(values[t][FPT]) - np.mean(values[t][RANDOM])) for t in counted}
    mean_gain = float(np.mean(list(gains.values()))) if gains else float("nan")
    ev = ("FPT - frozen random per task: "
          + (", ".join(f"{t} {g:+.3f}" for t, g in gains.items()) or "none")
          + f"; mean {mean_gain:+.3f} (needs >= {MIN_ACCURACY_GAIN}; <= 0 fails); left out "
          f"(neither arm {LEARNED} above chance): " + _left_out(values, counted))
    random_v = requires(threshold_verdict(random_worse, mean_gain, ev,
                                          at_least(MIN_ACCURACY_GAIN), at_most(0)),
                        bool(gains), "no task was learned")
    bits = {}
    for t in ("bit memory", "bit XOR"):
        if t in values:
            v = values[t]
            gap = float(np.mean(v[FPT]) - np.mean(v[LSTM]))
            bits[t] = requires(threshold_verdict(
                lstm_worse, gap, f"FPT {np.mean(v[FPT]):.3f} vs LSTM {np.mean(v[LSTM]):.3f}, "
                f"gap {gap:+.3f} (needs >= {MUCH})", at_least(MUCH), at_most(0)),
                pair_learned(t, LSTM), f"neither arm is {LEARNED} above chance")
    return [all_of(match, per_task), random_v, all_of(lstm_worse, bits)]


# -- fpt-freeze-ablation ---------------------------------------------------------------------
def ablation_verdicts(claim: Callable[[str], Claim], values: dict[str, dict[str, list[float]]]
                      ) -> list[Verdict]:
    """Norms, input and positions recover most of full training's gain; attention no help."""
    most, attention = claim("norms-input-positions"), claim("attention-no-help")
    m = {t: {a: float(np.mean(v)) for a, v in arms.items()} for t, arms in values.items()}
    span = {t: p["full"] - p["output only"] for t, p in m.items()}
    counted = [t for t in m if span[t] >= MIN_ACCURACY_GAIN]  # training anything helps
    shares = {t: (m[t]["+ norms (FPT)"] - m[t]["output only"]) / span[t] for t in counted}
    share = float(np.mean(list(shares.values()))) if shares else float("nan")
    ev = ("share of full training's gain over output-only that FPT recovers: "
          + (", ".join(f"{t} {s:.2f}" for t, s in shares.items()) or "no task")
          + f"; mean {share:.2f} (needs >= {MOST}; <= {1 - MOST:.2f} fails; tasks where full "
          f"beats output-only by < {MIN_ACCURACY_GAIN} are left out: "
          + _left_out(m, counted) + ")")
    v1 = requires(threshold_verdict(most, share, ev, at_least(MOST), at_most(1 - MOST)),
                  bool(shares), "on no task does training everything beat the read-out alone")
    arms = ("FPT + attention", "+ norms (FPT)")
    counted = [t for t, p in m.items() if learned(t, (p[a] for a in arms))]
    gains = {t: m[t][arms[0]] - m[t][arms[1]] for t in counted}
    gain = float(np.mean(list(gains.values()))) if gains else float("nan")
    ev2 = ("FPT + attention - FPT per task: "
           + (", ".join(f"{t} {g:+.3f}" for t, g in gains.items()) or "none")
           + f"; mean {gain:+.3f} (reproduced when <= {MIN_ACCURACY_GAIN}; "
           f">= {2 * MIN_ACCURACY_GAIN} fails); "
           f"left out (neither {LEARNED} above chance): " + _left_out(m, counted))
    v2 = requires(threshold_verdict(attention, -gain, ev2, at_least(-MIN_ACCURACY_GAIN),
                                    at_most(-2 * MIN_ACCURACY_GAIN)), bool(gains),
                  "no task was learned")
    return [v1, v2]


# -- fpt-convergence -------------------------------------------------------------------------
def target(task: str, arms: dict[str, list[dict[str, Any]]]) -> float:
    """The fixed accuracy of a task: TARGET of the way from chance to the better arm's final."""
    best = max(np.mean([metric(r["final"]) for r in rs]) for rs in arms.values())
    return CHANCE[task] + TARGET * (best - CHANCE[task])


def first_step(curve: list[dict[str, Any]], level: float) -> float:
    """The first evaluated step whose metric reaches `level` (inf: never)."""
    return next((float(p["step"]) for p in curve if metric(p) >= level), float("inf"))


def run_length(arms: dict[str, list[dict[str, Any]]]) -> int:
    return int(next(iter(arms.values()))[0]["final"]["step"])


def speedup(steps: dict[str, list[float]], length: int) -> float:
    """Mean random steps / mean FPT steps; 'never' counts as 2 x the run's length."""
    def mean(xs: list[float]) -> float:
        return float(np.mean([x if np.isfinite(x) else 2 * length for x in xs]))
    return mean(steps[RANDOM]) / mean(steps[FPT])


def convergence_verdict(claim: Claim, steps: dict[str, dict[str, list[float]]],
                        runs: dict[str, dict[str, list[dict[str, Any]]]]) -> Verdict:
    """FPT reaches each task's fixed accuracy sooner than the frozen random transformer."""
    counted = [t for t, arms in runs.items()
               if learned(t, (np.mean([metric(r["final"]) for r in rs]) for rs in arms.values()))]
    ups = {t: speedup(steps[t], run_length(runs[t])) for t in counted}
    geo = float(np.exp(np.mean(np.log(list(ups.values()))))) if ups else float("nan")
    ev = ("speedup (random steps / FPT steps to the target) per task: "
          + (", ".join(f"{t} {u:.2f}x" for t, u in ups.items()) or "none")
          + f"; geometric mean {geo:.2f}x (needs >= {FASTER}; <= 1 fails); left out (no arm "
          f"{LEARNED} above chance): " + _left_out(runs, counted))
    return requires(threshold_verdict(claim, geo, ev, at_least(FASTER), at_most(1.0)),
                    bool(ups), "no task was learned by either arm")
