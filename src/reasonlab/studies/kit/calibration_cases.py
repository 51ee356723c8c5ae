"""Calibration of the kit's generic rules (kit/verdicts.py), as data for the one engine
(kit/calibration_engine.py): each arm's per-unit centre under the null and the alternative, at
the per-seed noise of kit/noise.toml and the kit's usual 3 units per arm (the studies that use
these rules calibrate them again at their own units where they differ)."""

from __future__ import annotations

from reasonlab.studies.kit import verdicts as v
from reasonlab.studies.kit.calibration import Exempt, noise
from reasonlab.studies.kit.calibration_engine import Sim
from reasonlab.studies.kit.core import Claim

CLAIM = Claim("c", "a calibration claim", "simulation")
AT = {"cpu": 3}
AB = ("a", "b")
M = v.MIN_ACCURACY_GAIN
SD = noise("kit", "accuracy")
"""The per-seed SD the margin rules read beside their units (the same entry the draws use)."""


def _gain(x):
    return v.gain_verdict(CLAIM, x["a"], x["b"], AB, "accuracy")


def _no_gain(x):
    return v.no_gain_verdict(CLAIM, x["a"], x["b"], AB, "accuracy", noise=SD)


def _no_worse(x):
    return v.no_worse_verdict(CLAIM, x["a"], x["b"], AB, "accuracy", noise=SD)


def _equal(x):
    return v.equal_verdict(CLAIM, x["a"], x["b"], AB, "accuracy", 0.1, noise=SD)


def _trend(x):
    return v.trend_verdict(CLAIM, {1: x["x1"], 2: x["x2"], 4: x["x4"]}, 0.05, "acc")


def _every(x):
    return v.every_unit_verdict(CLAIM, x["a"], v.at_least(0.95), ">= 0.95", "accuracy")


CASES = [
    Sim(v.gain_verdict, _gain, {"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.5}, "accuracy", None,
        at=AT, note="null: equal means; alternative: +0.20"),
    Sim(v.gain_verdict, _gain, {"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.5}, "accuracy-noisy",
        None, at=AT, decides_at=6, label="noisy"),
    # The margin rules' nulls lie AT the margin, drawn two-mode too: with every seed of both
    # arms in the upper mode (0.9^6 = 53% of 3 + 3 draws) the Welch interval collapses onto
    # the margin, which the old rules read as within it (stats.at_noise). The centres are
    # written so that the collapsed difference rounds to just inside the margin ((0.55 + d) -
    # (0.6 + d) = -0.04999...; 0.6 - M would round outside): a rule that reads a zero-width
    # interval fails here, not by luck of rounding.
    Sim(v.no_gain_verdict, _no_gain, {"a": 0.55, "b": 0.5}, {"a": 0.4, "b": 0.5},
        "accuracy", None, at=AT, side=-1.0,
        note="null: a better by the margin; alternative: a 0.10 worse"),
    Sim(v.no_worse_verdict, _no_worse, {"a": 0.55, "b": 0.6}, {"a": 0.65, "b": 0.6},
        "accuracy", None, at=AT, decides_at=6,
        note="null: a worse by the margin; alternative: a 0.05 better"),
    Sim(v.equal_verdict, _equal, {"a": 0.6, "b": 0.5}, {"a": 0.5, "b": 0.5}, "accuracy", None,
        at=AT, decides_at=8,
        note="null: a difference at the margin 0.1; alternative: none (TOST power at 0)"),
    Sim(v.trend_verdict, _trend, {"x1": 0.5, "x2": 0.5, "x4": 0.5},
        {"x1": 0.5, "x2": 0.6, "x4": 0.7}, "accuracy", None, at=AT,
        note="null: flat; alternative: +0.20 end to end"),
    Sim(v.every_unit_verdict, _every, {"a": 0.95}, {"a": 1.1}, "accuracy", None,
        at={"cpu": 3, "long": 6}, center="median", decides_at=6,
        note="null: half the units at or above 0.95; alternative: every unit well above it "
        "(pass probability 0.98); a unanimous share decides from 6 units"),
    Exempt(v.exact_verdict, "reads a deterministic quantity",
           example=lambda: v.exact_verdict(CLAIM, 0.4, "FLOPs ratio", v.below(0.5))),
    Exempt(v.verdict, "reads a deterministic yes/no",
           example=lambda: v.verdict(CLAIM, True, "a FLOP count below the budget")),
    Exempt(v.decided, "wraps a kit/stats decision, calibrated through the rules that use it",
           through=(v.gain_verdict, v.no_gain_verdict, v.no_worse_verdict, v.equal_verdict,
                    v.trend_verdict, v.every_unit_verdict)),
    Exempt(v.requires, "a gate: only ever turns a verdict inconclusive", parts=()),
    Exempt(v.all_of, "combines: reproduced only when every part is (intersection-union)",
           parts=()),
    Exempt(v.all_of_each, "all_of per claim", parts=(v.all_of,)),
]
