"""The study kit's data types and `grid`, the one way a study builds its runs.

A study's runs are a recipe (a TrainConfig dict for one scale, kept in `<family>_common.py`)
deep-merged with one override dict per arm, one per sweep point, and the seed:

    grid(recipe("cpu"), arms={"BERT": {}, "ALBERT": {"model": {"tie_layers": True}}},
         sweep=[{"n_train": n} for n in (1000, 10_000)], seeds=3)

Finished runs come back to the analysis as `Results`: the (spec, result) pairs in spec order,
with the scale and seed count they were run at (docs/design.md §6 Studies).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reasonlab.train.config import TrainConfig

Scale = Literal["smoke", "cpu", "long", "paper"]
SCALES: tuple[Scale, ...] = ("smoke", "cpu", "long", "paper")
"""smoke: seconds, for the tests; cpu: the default, about 15 minutes on 2 cores; long: at most
about 2 hours on 2 cores, for the studies whose verdicts need a model the cpu budget cannot fit
(a study lists it in `Study.scales` only where it defines it); paper: the authors' sizes."""
Status = Literal["reproduced", "not reproduced", "inconclusive"]


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    source: str


@dataclass(frozen=True)
class RunSpec:
    """One run of a study: the arm it belongs to (e.g. "BERT"), its seed and its config."""

    arm: str
    seed: int
    config: TrainConfig


@dataclass
class Verdict:
    claim: Claim
    status: Status
    evidence: str


def merge(base: Mapping[str, Any], *overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: a nested dict merges key by key, any other value replaces; inputs are left
    untouched. Hand-written: nine lines, and no library we depend on has one for plain dicts."""
    out = dict(base)
    for over in overrides:
        for k, v in over.items():
            if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
                out[k] = merge(out[k], v)
            else:
                out[k] = v
    return out


def grid(recipe: Mapping[str, Any], arms: Mapping[str, Mapping[str, Any]],
         sweep: Iterable[Mapping[str, Any]] = ({},), seeds: int = 1) -> list[RunSpec]:
    """Every (arm, sweep point, seed), in that nesting order: the recipe deep-merged with the
    arm's overrides, then the point's, then {"seed": seed}."""
    points = list(sweep)
    return [RunSpec(arm, seed, TrainConfig.build(merge(recipe, over, point, {"seed": seed})))
            for arm, over in arms.items() for point in points for seed in range(seeds)]


def by_n_train(spec: RunSpec) -> int:
    return spec.config.n_train


class Results(list[tuple[RunSpec, dict[str, Any]]]):
    """A study's finished runs, (spec, result) in spec order, with the scale and seed count they
    were run at. A study with `trains = False` gets an empty one, and reads its scale here."""

    def __init__(self, pairs: Iterable[tuple[RunSpec, dict[str, Any]]], scale: Scale,
                 seeds: int) -> None:
        super().__init__(pairs)
        self.scale, self.seeds = scale, seeds

    @property
    def first(self) -> RunSpec:
        """The first run's spec: what every arm shares (task, recipe) is read from it."""
        return self[0][0]

    def arms(self) -> dict[str, list[dict[str, Any]]]:
        """arm -> its results in seed order, arms in spec order."""
        out: dict[str, list[dict[str, Any]]] = {}
        for s, r in self:
            out.setdefault(s.arm, []).append(r)
        return out

    def per_position(self) -> dict[str, list[list[float]]]:
        """arm -> final accuracy per chain position, [seeds][positions]."""
        return {a: [r["final"]["acc_by_depth"] for r in rs] for a, rs in self.arms().items()}

    def curves(self, arms: Iterable[str] | None = None) -> dict[str, list[list[dict[str, Any]]]]:
        """arm -> each seed's evaluation curve (all arms, or those named, in that order)."""
        by = self.arms()
        return {a: [r["curve"] for r in by[a]] for a in (by if arms is None else arms)}

    def sweep(self, x: Callable[[RunSpec], Any] = by_n_train, key: str = "acc"
              ) -> dict[str, dict[Any, list[float]]]:
        """arm -> swept value x(spec) (n_train by default) -> final metric per seed, x sorted."""
        out: dict[str, dict[Any, list[float]]] = {}
        for s, r in self:
            out.setdefault(s.arm, {}).setdefault(x(s), []).append(float(r["final"][key]))
        return {a: dict(sorted(by_x.items())) for a, by_x in out.items()}
