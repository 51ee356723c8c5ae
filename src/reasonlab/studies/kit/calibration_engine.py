"""One engine that calibrates every rule whose null and alternative are written as data (`Sim`):
the per-unit mean (or median) of each arm under the null and at the paper's effect, the
noise.toml entry, the study whose units it runs, and a `call` handing the drawn arms to the
rule. It draws each arm's units as centre + sd * a standardised shape:

- normal;
- two-mode (fit-or-not): each unit either fits or does not, the LEGO and FPT regime: 90% of
  units at +1/3 and 10% at -3 (mean 0, SD 1) when the null is on the mean, where one-arm t
  intervals collapse when every unit lands in the upper mode; half at +1 and half at -3 when
  the null is on the median (a share of units passing: half the seeds fit);
- skewed: 1 - Exp(1) (mean 0, SD 1; its median at 0 when centred on the median), a long tail
  on the claim's failing side.

`side` (+1 for "at least" claims, -1 for "at most") turns the long tails toward failing, where
they make false "reproduced" likelier.

`Types` is the same engine for rules whose unit is an outcome drawn at a rate -- a run fits or
not, is inferential, symmetric or unfit -- counted by exact intervals: each arm's centre is the
probability of each type, and its one shape is the categorical draw itself (its spread is the
rate's, not a noise entry's). `Mixture` joins the two: a unit is a type drawn at a rate and a
value around its type's centre (a seed that passes #2 at some step or never; a run of a solution
type and its mechanism measure), the value drawn in every shape. Each shape is run at the units
of every scale the study runs (its default seeds there), and over the looks of
`--until-decided` (kit/sequential.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from reasonlab.studies.kit import sequential
from reasonlab.studies.kit.core import Verdict

SHAPES = ("normal", "two-mode", "skewed")
Arms = Mapping[str, np.ndarray]


def standard(shape: str, rng: np.random.Generator, size: int,
             center: Literal["mean", "median"]) -> np.ndarray:
    """`size` standardised draws of `shape`, centred (0) on its mean or its median, with the
    long tail negative."""
    if shape == "normal":
        return rng.normal(0.0, 1.0, size)
    if shape == "two-mode":
        if center == "mean":
            return np.where(rng.random(size) < 0.9, 1 / 3, -3.0)
        return np.where(rng.random(size) < 0.5, 1.0, -3.0)
    if shape == "skewed":
        x = 1.0 - rng.exponential(1.0, size)
        return x if center == "mean" else x - (1.0 - math.log(2))
    raise ValueError(f"no shape {shape!r}; shapes: {', '.join(SHAPES)}")


@dataclass(frozen=True)
class Sim:
    """A rule's calibration as data. `null` / `alternative`: arm -> the per-unit centre under
    the claim's null (the boundary hardest for the rule) and at the paper's effect (or the
    rule's declared minimum); `call(arms)` the rule's verdict on arm -> per-unit values;
    `noise`: the family's noise.toml entry (its sd); `study`: the registered study whose units
    (default seeds at each scale but smoke) the draws use; `decides_at`: the units per arm at
    which the rule reaches TARGET_POWER, declared where its study's units give it less than
    MIN_POWER (the ledger reads it)."""

    rule: Callable[..., Any]
    call: Callable[[Arms], Verdict]
    null: Mapping[str, float]
    alternative: Mapping[str, float] | None
    noise: str
    study: str | None
    center: Literal["mean", "median"] = "mean"
    side: float = 1.0
    shapes: tuple[str, ...] = SHAPES
    decides_at: int | None = None
    clip: tuple[float, float] | None = None
    """Bounds of the quantity (an accuracy in [0, 1]): draws are clipped to them."""
    at: Mapping[str, int] | None = None
    """scale -> units, for a kit rule that no one study owns (instead of `study`)."""
    spread: Mapping[str, float] | None = None
    """arm -> its units' SD as a multiple of the noise entry's (tasks measured with different
    noise in one rule: task_sd); arms not named spread 1x."""
    stress: bool = False
    """A null-only stress test (a coarse evaluation grid where positions tie): it need not
    decide, because another case of the same rule, with an alternative, shows the rule's power
    (the suite checks that such a case exists)."""
    label: str = ""
    note: str = ""

    @property
    def name(self) -> str:
        from reasonlab.studies.kit.calibration import qualified

        return qualified(self.rule)

    def units(self) -> dict[str, int]:
        """scale -> units per arm the study runs there (smoke aside: it decides nothing)."""
        from reasonlab.studies import STUDIES

        if self.study is None:
            return dict(self.at or {})
        cls = STUDIES[self.study]
        return {s: cls.default_seeds[s] for s in cls.scales if s != "smoke"}

    def draw(self, rng: np.random.Generator, centres: Mapping[str, float], n: int, sd: float,
             shape: str) -> dict[str, np.ndarray]:
        out = {}
        for arm, c in centres.items():
            k = (self.spread or {}).get(arm, 1.0)
            x = c + self.side * sd * k * standard(shape, rng, n, self.center)
            out[arm] = np.clip(x, *self.clip) if self.clip else x
        return out


@dataclass(frozen=True)
class Types(Sim):
    """A rule's calibration as data where a unit is a type drawn at a rate: `null` and
    `alternative` map each arm to {type: probability} (the remainder is `rest`), and `call`
    gets each arm's drawn types as an array of strings. `noise` names the noise.toml entry of
    the measured rate the centres come from."""

    shapes: tuple[str, ...] = ("categorical",)
    rest: str = "neither"
    """The type of the probability the centres leave over."""

    def draw(self, rng: np.random.Generator, centres: Mapping[str, Any], n: int, sd: float,
             shape: str) -> dict[str, np.ndarray]:
        out = {}
        for arm, rates in centres.items():
            kinds = [*rates, self.rest]
            p = np.array([*rates.values(), 0.0])
            p[-1] = max(0.0, 1.0 - p[:-1].sum())
            out[arm] = np.asarray(kinds, dtype=object)[rng.choice(len(kinds), n, p=p / p.sum())]
        return out


@dataclass(frozen=True)
class Mixture(Sim):
    """A rule's calibration as data where a unit is a type drawn at a rate AND a value: a run
    that fits or not and, when it fits, passes #2 at some step; a run of a solution type and
    its mechanism measure. `null` and `alternative` map each arm to {type: (rate, centre)}
    (the rates sum to 1); a unit's value is its type's centre plus the noise entry's SD drawn
    in each of the engine's shapes (an infinite centre stays infinite: a run that never
    passes). `call` gets each arm as a record array with fields `type` and `value`."""

    def draw(self, rng: np.random.Generator, centres: Mapping[str, Any], n: int, sd: float,
             shape: str) -> dict[str, np.ndarray]:
        out = {}
        for arm, mix in centres.items():
            kinds = list(mix)
            p = np.array([r for r, _ in mix.values()], float)
            if not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
                raise ValueError(f"{self.name}: the rates of arm {arm!r} sum to {p.sum():g}")
            pick = rng.choice(len(kinds), n, p=p / p.sum())
            k = (self.spread or {}).get(arm, 1.0)
            # an infinite centre (never passes) plus finite noise stays infinite
            x = (np.array([c for _, c in mix.values()], float)[pick]
                 + self.side * sd * k * standard(shape, rng, n, self.center))
            if self.clip:
                x = np.clip(x, *self.clip)
            out[arm] = np.rec.fromarrays([np.asarray(kinds, dtype=object)[pick], x],
                                         names="type,value")
        return out


@dataclass
class SimOutcome:
    case: Sim
    sd: float
    false_rate: dict[tuple[str, int], float] = field(default_factory=dict)
    """(shape, units) -> false "reproduced" under the null at a fixed unit count."""
    sequential_false: dict[str, float] = field(default_factory=dict)
    """shape -> false "reproduced" over the looks of --until-decided (first look at the cpu
    units, cap MAX_FACTOR times them)."""
    power: dict[int, float] = field(default_factory=dict)
    """units -> share reproduced at the alternative (normal noise)."""
    false_not: dict[int, float] = field(default_factory=dict)
    """units -> share "not reproduced" at the alternative."""
    decided_null: float = 0.0
    """Share of null draws (normal, planned units) that decide either way."""


def rates(case: Sim, centres: Mapping[str, float], n: int, sd: float, shape: str,
          draws: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(draws):
        s = case.call(case.draw(rng, centres, n, sd, shape)).status
        counts[s] = counts.get(s, 0) + 1
    return {k: v / draws for k, v in counts.items()}


def sequential_rate(case: Sim, centres: Mapping[str, float], first: int, sd: float,
                    shape: str, draws: int, seed: int, cap: int | None = None
                    ) -> dict[str, float]:
    """Statuses of `draws` sequential studies: units drawn once at the cap, each look judging
    the first n of every arm at its nominal level (seed k is the same unit at every look)."""
    looks = sequential.plan(first, cap or sequential.MAX_FACTOR * first)
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(draws):
        full = case.draw(rng, centres, looks[-1].units, sd, shape)
        s = sequential.simulate(lambda n: case.call({a: x[:n] for a, x in full.items()}),
                                looks)
        counts[s] = counts.get(s, 0) + 1
    return {k: v / draws for k, v in counts.items()}


def run_sim(case: Sim, sd: float, null_draws: int = 600, power_draws: int = 200,
            seq_draws: int = 0, seed: int = 0) -> SimOutcome:
    """Every check of one Sim (see the module docstring)."""
    out = SimOutcome(case, sd)
    scales = case.units()
    planned = scales.get("cpu", min(scales.values()))
    at = sorted({*scales.values(), *([case.decides_at] if case.decides_at else [])})
    for shape in case.shapes:
        for n in at:
            r = rates(case, case.null, n, sd, shape, null_draws, seed)
            out.false_rate[(shape, n)] = r.get("reproduced", 0.0)
            if shape == "normal" and n == planned:
                out.decided_null = 1.0 - r.get("inconclusive", 0.0)
        if seq_draws:
            out.sequential_false[shape] = sequential_rate(
                case, case.null, planned, sd, shape, seq_draws, seed + 2).get("reproduced", 0.0)
    if case.alternative is not None:
        for n in at:
            r = rates(case, case.alternative, n, sd, "normal", power_draws, seed + 1)
            out.power[n] = r.get("reproduced", 0.0)
            out.false_not[n] = r.get("not reproduced", 0.0)
    return out


def sim_table(outcomes: list[SimOutcome]) -> str:
    """A Markdown table of Sim outcomes: the worst false "reproduced" over shapes at each
    scale's units, over the looks of --until-decided, the power at the alternative per units,
    and the units declared to decide."""
    rows = ["| rule | case | units (scale) | false reproduced, worst shape | sequential | "
            "power (units) | false not reproduced | decides at |",
            "|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        c = o.case
        units = ", ".join(f"{n} ({s})" for s, n in c.units().items())
        worst = ", ".join(f"{max(r for (sh, m), r in o.false_rate.items() if m == n):.3f} "
                          f"at {n}" for n in sorted({m for _, m in o.false_rate}))
        seq = f"{max(o.sequential_false.values()):.3f}" if o.sequential_false else "-"
        power = ", ".join(f"{p:.2f} ({n})" for n, p in o.power.items()) or "-"
        fnot = f"{max(o.false_not.values()):.3f}" if o.false_not else "-"
        rows.append(f"| `{c.rule.__qualname__}` | {c.label or '-'} | {units} | {worst} | {seq} "
                    f"| {power} | {fnot} | {c.decides_at or '-'} |")
    return "\n".join(rows)
