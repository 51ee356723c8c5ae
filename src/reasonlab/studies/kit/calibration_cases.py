"""Calibration cases of the kit's generic rules (kit/verdicts.py): each drawn under its null
at the per-seed noise of kit/noise.toml, with the study's usual 3 units per arm."""

from __future__ import annotations

import numpy as np

from reasonlab.studies.kit import verdicts as v
from reasonlab.studies.kit.calibration import Case, Exempt, noise
from reasonlab.studies.kit.core import Claim

CLAIM = Claim("c", "a calibration claim", "simulation")
N = 3


def _draw(rng: np.random.Generator, mean: float, sd: float, n: int = N) -> np.ndarray:
    return rng.normal(mean, sd, n)


def _gain(effect: float, key: str):
    sd = noise("kit", key)
    return lambda rng: v.gain_verdict(CLAIM, _draw(rng, 0.5 + effect, sd), _draw(rng, 0.5, sd),
                                      ("a", "b"), "accuracy")


def _no_gain(effect: float):
    sd = noise("kit", "accuracy")
    return lambda rng: v.no_gain_verdict(CLAIM, _draw(rng, 0.5 + effect, sd),
                                         _draw(rng, 0.5, sd), ("a", "b"), "accuracy")


def _no_worse(effect: float):
    sd = noise("kit", "accuracy")
    return lambda rng: v.no_worse_verdict(CLAIM, _draw(rng, 0.5 + effect, sd),
                                          _draw(rng, 0.5, sd), ("a", "b"), "accuracy")


def _equal(effect: float):
    sd = noise("kit", "accuracy")
    return lambda rng: v.equal_verdict(CLAIM, _draw(rng, 0.5 + effect, sd), _draw(rng, 0.5, sd),
                                       ("a", "b"), "accuracy", 0.1)


def _trend(effect: float):
    sd = noise("kit", "accuracy")
    return lambda rng: v.trend_verdict(CLAIM, {1: _draw(rng, 0.5, sd),
                                               2: _draw(rng, 0.5 + effect / 2, sd),
                                               4: _draw(rng, 0.5 + effect, sd)}, 0.05, "acc")


M = v.MIN_ACCURACY_GAIN
CASES = [
    Case(v.gain_verdict, _gain(0.0, "accuracy"), _gain(0.2, "accuracy"), N, "accuracy",
         note="null: equal means; alternative: +0.20"),
    Case(v.gain_verdict, _gain(0.0, "accuracy-noisy"), _gain(0.2, "accuracy-noisy"), N,
         "accuracy-noisy", "noisy"),
    Case(v.no_gain_verdict, _no_gain(M), _no_gain(-0.1), N, "accuracy",
         note="null: a better by the margin; alternative: a 0.10 worse"),
    Case(v.no_worse_verdict, _no_worse(-M), _no_worse(0.05), N, "accuracy",
         note="null: a worse by the margin; alternative: a 0.05 better"),
    Case(v.equal_verdict, _equal(0.1), _equal(0.0), N, "accuracy",
         note="null: a difference at the margin 0.1; alternative: none"),
    Case(v.trend_verdict, _trend(0.0), _trend(0.2), N, "accuracy",
         note="null: flat; alternative: +0.20 end to end"),
    Exempt(v.exact_verdict, "reads a deterministic quantity"),
    Exempt(v.verdict, "reads a deterministic yes/no"),
    Exempt(v.decided, "wraps a kit/stats decision, calibrated through the rules that use it"),
    Exempt(v.requires, "combines: only ever turns a verdict inconclusive"),
    Exempt(v.all_of, "combines: reproduced only when every part is (intersection-union)"),
    Exempt(v.all_of_each, "all_of per claim"),
]
