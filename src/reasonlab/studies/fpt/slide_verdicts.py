"""Verdict rules of the FPT studies that each reproduce one more slide table (Lu et al. 2021,
slides: "Weight initialization", "Importance of language pre-training", "Over- and
underfitting", "Scaling with size", "GPT-2 - first layer attention"), unit-tested on hand-made
numbers in tests/unit/studies/fpt/test_slide_verdicts.py. Thresholds are constants fixed before
any run. Inputs are means over seeds, task -> arm -> value, for ONE backbone; a study judges
each backbone and joins them with `both_backbones`.
"""

from __future__ import annotations

from collections.abc import Mapping

from reasonlab.studies.fpt.common import CHANCE
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (MIN_ACCURACY_GAIN, all_of, at_least, at_most,
                                            requires, threshold_verdict)

LEARNED = 0.1
"""A task counts only if the best compared arm ends this far above chance (fpt/verdicts.py's
rule, restated here so that these rules read alone)."""
RECOVERS = 0.5
"""Statistics Only 'recovers much' of pretraining's gain over Default: at least this share
(the slides' shares on memory / ListOps / MNIST: 1.0 / 0.76 / 0.87); at most 0 fails."""
BETTER = 0.02
"""One arm 'transfers better' than another: mean gain over the counted tasks at least this
(the slides' FPT - Bit gaps: ListOps 3.0, MNIST 0.2, C10 5.6 points); at most 0 fails."""
UNDERFIT = 0.05
"""FPT 'underfits': train - test accuracy at most this (the slides: 38.5 - 38.6 = -0.1 point);
more than 2 x UNDERFIT fails."""
OVERFIT = 0.1
"""The from-scratch transformer 'overfits': its train - test gap exceeds FPT's by at least
this (the slides: vanilla transformer 70 - 42 = 28 points)."""
SCALES_UP = 0.02
"""'Larger backbones transfer better': FPT's accuracy rises by at least this from the smallest
to the largest backbone (the slides' CIFAR-10: +3.9 points from Small to Large); <= 0 fails."""
LIFT = 2.0
"""First-layer attention 'shows the task's structure': its mass on the keys the task needs is
at least LIFT x what uniform attention puts there; below MIN_LIFT fails."""
MIN_LIFT = 1.25
LEARNS = 0.05
"""... and at least this above the same model's mass before training (the authors' demo: "the
model learns to attend to the relevant bits"); at or below it fails."""


def learned(task: str, *means: float) -> bool:
    return max(means) >= CHANCE[task] + LEARNED


def _listed(values: Mapping[str, float], digits: int = 3) -> str:
    return ", ".join(f"{t} {v:+.{digits}f}" for t, v in values.items()) or "none"


def _mean(values: Mapping[str, float]) -> float:
    return sum(values.values()) / len(values) if values else float("nan")


def both_backbones(claim: Claim, verdicts: Mapping[str, Verdict]) -> Verdict:
    """One verdict from each backbone's (title -> verdict): reproduced when both are, not
    reproduced when either is not (kit.verdicts.all_of)."""
    return all_of(claim, verdicts)


# -- Weight initialization ---------------------------------------------------------------------
def statistics_verdict(claim: Claim, m: Mapping[str, Mapping[str, float]], pretrained: str,
                       statistics: str, default: str) -> Verdict:
    """Statistics Only recovers at least RECOVERS of (Pretrained - Default) on the tasks where
    pretraining beats Default by MIN_ACCURACY_GAIN (others test nothing)."""
    counted = [t for t, a in m.items() if a[pretrained] - a[default] >= MIN_ACCURACY_GAIN]
    shares = {t: (m[t][statistics] - m[t][default]) / (m[t][pretrained] - m[t][default])
              for t in counted}
    share = _mean(shares)
    ev = (f"share of pretraining's gain over Default that Statistics Only recovers: "
          f"{_listed(shares, 2)}; mean {share:.2f} (needs >= {RECOVERS}; <= 0 fails); tasks "
          f"where Pretrained beats Default by < {MIN_ACCURACY_GAIN} left out: "
          + (", ".join(t for t in m if t not in counted) or "none"))
    return requires(threshold_verdict(claim, share, ev, at_least(RECOVERS), at_most(0)),
                    bool(shares), f"Pretrained beats Default by >= {MIN_ACCURACY_GAIN} on no "
                    "task")


# -- Importance of language pre-training ------------------------------------------------------
def better_verdict(claim: Claim, m: Mapping[str, Mapping[str, float]], better: str,
                   worse: str) -> Verdict:
    """`better` transfers better than `worse`: mean gain >= BETTER over the tasks either
    learns."""
    gains = {t: a[better] - a[worse] for t, a in m.items() if learned(t, a[better], a[worse])}
    gain = _mean(gains)
    ev = (f"{better} - {worse} per task: {_listed(gains)}; mean {gain:+.3f} (needs >= "
          f"{BETTER}; <= 0 fails); left out (neither {LEARNED} above chance): "
          + (", ".join(t for t in m if t not in gains) or "none"))
    return requires(threshold_verdict(claim, gain, ev, at_least(BETTER), at_most(0)),
                    bool(gains), "neither arm learned any task")


def better_on_both(claim: Claim, m: Mapping[str, Mapping[str, Mapping[str, float]]],
                   better: str, worse: str) -> Verdict:
    """`better_verdict` on each backbone (m: backbone title -> task -> arm -> mean), joined by
    `both_backbones`."""
    return both_backbones(claim, {b: better_verdict(claim, v, better, worse)
                                  for b, v in m.items()})


# -- Over- and underfitting -------------------------------------------------------------------
def fitting_verdict(claim: Claim, task: str, fpt: tuple[float, float],
                    scratch: tuple[float, float], names: tuple[str, str]) -> Verdict:
    """FPT underfits (train - test <= UNDERFIT) where the transformer trained from scratch
    overfits (its gap >= FPT's + OVERFIT). (train, test) accuracies, means over seeds."""
    gap_f, gap_s = fpt[0] - fpt[1], scratch[0] - scratch[1]
    ev = (f"{task}: {names[0]} train {fpt[0]:.3f} / test {fpt[1]:.3f} (gap {gap_f:+.3f}, needs "
          f"<= {UNDERFIT}); {names[1]} train {scratch[0]:.3f} / test {scratch[1]:.3f} (gap "
          f"{gap_s:+.3f}, needs >= FPT's + {OVERFIT})")
    if gap_f <= UNDERFIT and gap_s - gap_f >= OVERFIT:
        status = "reproduced"
    elif gap_f > 2 * UNDERFIT or gap_s <= gap_f:
        status = "not reproduced"
    else:
        status = "inconclusive"
    return requires(Verdict(claim, status, ev), learned(task, fpt[1], scratch[1]),
                    f"neither model is {LEARNED} above chance on the test set")


# -- Scaling with size --------------------------------------------------------------------------
def scaling_verdict(claim: Claim, task: str, by_size: Mapping[int, float]) -> Verdict:
    """FPT's accuracy rises from the smallest to the largest backbone by >= SCALES_UP."""
    lo, hi = min(by_size), max(by_size)
    rise = by_size[hi] - by_size[lo]
    ev = (f"{task}, FPT by layers: " + ", ".join(f"{k}: {v:.3f}" for k, v in
                                                 sorted(by_size.items()))
          + f"; rise {rise:+.3f} from {lo} to {hi} layers (needs >= {SCALES_UP}; <= 0 fails)")
    return requires(threshold_verdict(claim, rise, ev, at_least(SCALES_UP), at_most(0)),
                    learned(task, *by_size.values()), "FPT learned the task at no size")


def lead_verdict(claim: Claim, task: str, fpt: Mapping[int, float],
                 random: Mapping[int, float]) -> Verdict:
    """FPT beats the frozen random backbone of the same size at every size by >= BETTER;
    not reproduced when random is as good or better at some size."""
    leads = {f"{k} layers": fpt[k] - random[k] for k in sorted(fpt)}
    low = min(leads.values())
    ev = (f"{task}, FPT - Random per size: {_listed(leads)}; smallest lead {low:+.3f} (needs "
          f">= {BETTER} at every size; <= 0 at some size fails)")
    return requires(threshold_verdict(claim, low, ev, at_least(BETTER), at_most(0)),
                    learned(task, *fpt.values(), *random.values()), "no arm learned the task")


# -- First-layer attention maps -----------------------------------------------------------------
def attention_verdict(claim: Claim, task: str, trained: float, initial: float, uniform: float,
                      accuracy: float) -> Verdict:
    """The trained model's first layer (mean over heads) puts >= LIFT x uniform attention's mass
    on the keys the task needs, and >= LEARNS more than before training."""
    lift = trained / uniform
    ev = (f"{task}: first-layer mass on the needed keys {trained:.3f} after training, "
          f"{initial:.3f} before, {uniform:.3f} under uniform attention (lift {lift:.2f}, needs "
          f">= {LIFT} and >= {LEARNS} over before; lift < {MIN_LIFT} or no rise fails); "
          f"accuracy {accuracy:.3f}")
    if lift >= LIFT and trained - initial >= LEARNS:
        status = "reproduced"
    elif lift < MIN_LIFT or trained <= initial:
        status = "not reproduced"
    else:
        status = "inconclusive"
    return requires(Verdict(claim, status, ev), learned(task, accuracy),
                    "the model did not learn the task (the slides draw a trained model)")
