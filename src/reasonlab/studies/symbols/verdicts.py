"""Verdict rules of the abstract-symbols studies (Boix-Adsera et al. 2024), tested on
hand-made numbers in tests/unit/test_verdicts.py.
"""

from __future__ import annotations

import numpy as np

from reasonlab.report import fmt_seeds, fmt_sweep
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (at_least, at_most, below, gain_status, never,
                                            requires, standard_error, threshold_verdict,
                                            verdict)


def n_to_reach(by_n: dict[int, list[float]], target: float) -> float | None:
    """Smallest n at which the mean accuracy reaches `target`, interpolating linearly in
    log n between grid points; None if the grid never reaches it."""
    ns = sorted(by_n)
    acc = [float(np.mean(by_n[n])) for n in ns]
    if acc[0] >= target:
        return float(ns[0])
    for (n0, a0), (n1, a1) in zip(zip(ns, acc), zip(ns[1:], acc[1:])):
        if a0 < target <= a1:
            t = (target - a0) / (a1 - a0)
            return float(np.exp(np.log(n0) + t * (np.log(n1) - np.log(n0))))
    return None


def fmt_n(n: float | None) -> str:
    return "not reached" if n is None else f"{n:.0f}"


def fmt_ratio(n_plain: float | None, n_mod: float | None, n_max: int) -> str:
    if n_mod is None:
        return "-"
    if n_plain is None:
        return f"> {n_max / n_mod:.1f}"
    return f"{n_plain / n_mod:.1f}"


def ratio_verdict(claim: Claim, plain: dict[int, list[float]], mod: dict[int, list[float]],
                  target: float, min_ratio: float, no_gain: float) -> Verdict:
    """The samples the plain model needs to reach `target` (n_to_reach) over those the
    modified one needs: reproduced at a ratio >= min_ratio; not reproduced below no_gain or
    when the modified model never reaches the target; inconclusive between, or when the plain
    model never reaches it (the ratio is then a lower bound: its largest n over n_mod)."""
    n_p, n_m = n_to_reach(plain, target), n_to_reach(mod, target)
    ev = (f"n to reach {target}: transformer {fmt_n(n_p)}, + identity {fmt_n(n_m)}; ratio "
          f"{fmt_ratio(n_p, n_m, max(plain))}; reproduced if >= {min_ratio:.2f}, not "
          f"reproduced if < {no_gain} or the modified model never reaches {target}")
    if n_m is None:
        return Verdict(claim, "not reproduced", ev)
    ratio = (n_p if n_p is not None else max(plain)) / n_m  # a lower bound when n_p is None
    return threshold_verdict(claim, ratio, ev, at_least(min_ratio),
                             below(no_gain) if n_p is not None else never)


def perplexity_verdict(claim: Claim, p: np.ndarray, m: np.ndarray) -> Verdict:
    """Final validation perplexity per seed of the plain model (p) and the modified one (m):
    gain_status of the drop p - m with its SE, needing > 0, > 2 SE and >= 2 seeds (one seed
    has no error bar); not reproduced when the drop is <= 0."""
    diff = float(p.mean() - m.mean())  # > 0: the modification is better
    se = standard_error(p, m)
    ev = (f"final validation perplexity: transformer {p.mean():.4f} (seeds "
          f"{', '.join(f'{x:.4f}' for x in p)}), + identity {m.mean():.4f} (seeds "
          f"{', '.join(f'{x:.4f}' for x in m)}); improvement {diff:+.4f} "
          f"({100 * diff / p.mean():+.2f}%), standard error {se:.4f}; reproduced if the "
          "improvement is > 0 and > 2 SE over >= 2 seeds, not reproduced if <= 0")
    return Verdict(claim, gain_status(diff, se, 0.0, len(p), min_seeds=2), ev)


def chance_verdict(claim: Claim, test: dict[int, list[float]], train: dict[int, list[float]],
                   chance: float, most: float, who: str = "MLP") -> Verdict:
    """'Stays at chance on unseen symbols': the mean test accuracy is <= `most` at every n of
    the sweep; the evidence shows the training accuracy at the smallest n beside it."""
    n0 = min(test)
    return threshold_verdict(claim, max(float(np.mean(v)) for v in test.values()),
                             f"{who} test accuracy {fmt_sweep(test)} (train accuracy at n={n0}: "
                             f"{fmt_seeds(train[n0])}); chance {chance}, needs <= {most} at "
                             "every n", at_most(most))


def reaches_verdict(claim: Claim, test: dict[int, list[float]], need: float,
                    who: str = "transformer") -> Verdict:
    """'Generalises given enough samples': the mean test accuracy at the largest n is >= need."""
    n_max = max(test)
    return threshold_verdict(claim, float(np.mean(test[n_max])), f"{who} test accuracy "
                             f"{fmt_sweep(test)}; needs >= {need} at n={n_max}", at_least(need))


MIN_CONDITION_RATIO = 2.0
"""The modification 'improves the conditioning' when cond(N) drops by at least this factor on
every task."""


def conditioning_verdict(claim: Claim, conds: dict[str, dict[str, float]], modified: str
                         ) -> Verdict:
    """task -> setting -> cond(N): reproduced when cond(N) of "plain" over that of `modified`
    is >= MIN_CONDITION_RATIO on every task, not reproduced otherwise."""
    ok = all(c["plain"] / c[modified] >= MIN_CONDITION_RATIO for c in conds.values())
    ev = "; ".join(f"{t}: cond(N) plain {c['plain']:.3g}, {modified} {c[modified]:.3g} (ratio "
                   f"{c['plain'] / c[modified]:.3g})" for t, c in conds.items())
    ev += f"; needs a ratio >= {MIN_CONDITION_RATIO} on every task"
    return verdict(claim, ok, ev)


READOUT_MIN = 0.9
"""Read-out-only training 'generalises' when its mean test accuracy reaches this at the
largest n."""
MIN_LEAD = 0.1
"""Full training 'needs fewer samples' when its accuracy exceeds the read-out arm's by at least
this on average over the grid (not reproduced if the lead is <= 0)."""


def readout_verdict(claim: Claim, ro: dict[int, list[float]], ro_train: dict[int, list[float]],
                    widest: tuple[str, list[float]]) -> Verdict:
    """The converged read-out's test accuracy (n -> per seed) reaches READOUT_MIN at the
    largest n; its training accuracy and the widest frozen network are reported beside."""
    n_max = max(ro)
    ev = ("read-out only (converged): " + ", ".join(
        f"n={n}: {fmt_seeds(v)} (train {np.mean(ro_train[n]):.3f})" for n, v in ro.items())
        + f"; needs >= {READOUT_MIN} at n={n_max}; widest frozen network ({widest[0]}): "
        f"{fmt_seeds(widest[1])}")
    return threshold_verdict(claim, float(np.mean(ro[n_max])), ev, at_least(READOUT_MIN))


def lead_verdict(claim: Claim, full: dict[int, list[float]], ro: dict[int, list[float]]
                 ) -> Verdict:
    """All layers vs the converged read-out: the mean lead over the read-out's n grid is
    >= MIN_LEAD (reproduced) or <= 0 (not reproduced)."""
    lead = float(np.mean([np.mean(full[n]) - np.mean(ro[n]) for n in ro]))
    ev = (f"all layers: {fmt_sweep(full)}; mean lead over the converged read-out "
          f"{lead:+.3f} (needs >= {MIN_LEAD})")
    return threshold_verdict(claim, lead, ev, at_least(MIN_LEAD), at_most(0))


MIN_DROP = 0.2
"""Inverse scaling: the plain model's mean accuracy at the smallest width minus at the largest
must be at least this."""
B_MIN = 0.9
"""The b term removes the fall: its accuracy at the largest width reaches this and its own drop
stays below MIN_DROP / 2."""


def b_fixes_verdict(claim: Claim, plain: dict[int, list[float]], b: dict[int, list[float]],
                    fall: Verdict) -> Verdict:
    """width -> per-seed accuracy of the plain model and of the b term: the b term reaches
    B_MIN at the largest width and drops by less than MIN_DROP / 2; inconclusive unless the
    plain model's fall (`fall`, the inverse-scaling verdict) reproduced -- no fall, nothing to
    remove (a precondition added after the first cpu run, see the family README)."""
    lo, hi = min(plain), max(plain)
    b_drop = float(np.mean(b[lo]) - np.mean(b[hi]))
    lead = float(np.mean(b[hi]) - np.mean(plain[hi]))
    ev = (f"+ b term: d={lo} {fmt_seeds(b[lo])}, d={hi} {fmt_seeds(b[hi])}; drop "
          f"{b_drop:+.3f}; lead over the plain model at d={hi}: {lead:+.3f}; needs >= "
          f"{B_MIN} at d={hi} and drop < {MIN_DROP / 2}")
    ok = float(np.mean(b[hi])) >= B_MIN and b_drop < MIN_DROP / 2
    return requires(verdict(claim, ok, ev), fall.status == "reproduced",
                    "the plain model shows no fall to remove")
