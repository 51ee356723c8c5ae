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
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from reasonlab.config import deep_merge
from reasonlab.errors import ConfigError
from reasonlab.studies.kit.stats import Estimate, Status
from reasonlab.train.config import TrainConfig

Scale = Literal["smoke", "cpu", "long", "paper"]
SCALES: tuple[Scale, ...] = ("smoke", "cpu", "long", "paper")
"""smoke: seconds, for the tests; cpu: the default, about 15 minutes on 2 cores; long: at most
about 2 hours on 2 cores, for the studies whose verdicts need a model the cpu budget cannot fit
(a study lists it in `Study.scales` only where it defines it); paper: the authors' sizes."""


@dataclass(frozen=True)
class Claim:
    key: str
    """Unique within its study: the verdict, verdicts.json and the ledger name it by this."""
    text: str
    source: str
    """The paper and where in it: section, table, figure (or "our finding")."""
    paper_numbers: str = ""
    """The paper's own numbers behind the claim, where it gives them."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a study: the arm it belongs to (e.g. "BERT"), its seed, its config, and its
    factors as data: the arm and the sweep point's named factors (e.g. {"arm": "FPT", "task":
    "bit XOR"}), recorded by `grid`, so that `Results` selects and groups runs by them and no
    analysis parses a name back (HELM's run specs)."""

    arm: str
    seed: int
    config: TrainConfig
    factors: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass
class Verdict:
    claim: Claim
    status: Status
    evidence: str
    """The numbers behind the status and the rule that read them."""
    effect: Estimate | None = None
    """The effect the status was decided from, with its interval and units per arm (None: a
    verdict joined from several, whose parts carry theirs in the evidence)."""
    why: str = ""
    """For an inconclusive verdict, why: 'too few units (...)', 'underpowered (power 0.31 at 3
    units ...)', 'precondition not met (...)', 'rows not run at this scale'."""
    look: int | None = None
    """A sequential run's (`--until-decided`, kit/sequential.py) look that decided the claim,
    or its last look when none did; None for a run at a fixed seed count."""
    looks: int | None = None
    """The looks the sequential run planned."""
    units: int | None = None
    """The units (seeds) the study had at that look."""
    curtailed: bool = False
    """An inconclusive verdict whose precondition is out of reach of the units a sequential run
    could still add (one that every unit must meet, failed by one; one missed even were every
    unit to come perfect; a mean confidently below its bar): the run adds no units for it
    (kit/sequential.py)."""

    def summary(self) -> str:
        """The effect with its interval and, for an inconclusive verdict, why: one table cell;
        a sequential run's verdict also says at which look it was decided and with how many
        units."""
        parts = [self.effect.text()] if self.effect is not None else []
        if self.status == "inconclusive" and self.why:
            parts.append(self.why)
        if self.look is not None:
            parts.append(self.sequence_text())
        return "; ".join(parts)

    def sequence_text(self) -> str:
        """'decided at look 2 of 4 (6 units)' / 'undecided after look 4 of 4 (12 units)' /
        'stopped at look 1 of 4 (3 units): ...' (curtailed)."""
        at = f"look {self.look} of {self.looks} ({self.units} unit{'s' * (self.units != 1)})"
        if self.status != "inconclusive":
            return f"decided at {at}"
        if self.curtailed and self.look != self.looks:
            return f"stopped at {at}: its precondition is out of reach of the units to come"
        return f"undecided after {at}"


merge = deep_merge
"""The one deep merge (reasonlab.config.deep_merge), under the name the studies use."""


def grid(recipe: Mapping[str, Any], arms: Mapping[str, Mapping[str, Any]],
         sweep: Iterable[Mapping[str, Any]] | Mapping[Any, Mapping[str, Any]] = ({},),
         seeds: int = 1, factors: Mapping[str, Any] | None = None,
         sweep_factor: str = "point") -> list[RunSpec]:
    """Every (arm, sweep point, seed), in that nesting order: the recipe deep-merged with the
    arm's overrides, then the point's, then {"seed": seed}.

    Each spec records its factors: `factors` (shared by the whole grid), {"arm": arm} and,
    when `sweep` is a mapping label -> overrides, {sweep_factor: label}."""
    labelled = isinstance(sweep, Mapping)
    points = list(sweep.items()) if labelled else [(None, p) for p in sweep]
    return [RunSpec(arm, seed, TrainConfig.build(merge(recipe, over, point, {"seed": seed})),
                    {**(factors or {}), "arm": arm, **({sweep_factor: label} if labelled else {})})
            for arm, over in arms.items() for label, point in points for seed in range(seeds)]


def by_n_train(spec: RunSpec) -> int:
    return spec.config.n_train


class Results(list[tuple[RunSpec, dict[str, Any]]]):
    """A study's finished runs, (spec, result) in spec order, with the scale and seed count they
    were run at and the command line's recipe overrides (`reasonlab run STUDY key=value`). A
    study with `trains = False` gets an empty one, and reads its scale here."""

    def __init__(self, pairs: Iterable[tuple[RunSpec, dict[str, Any]]], scale: Scale,
                 seeds: int, overrides: Mapping[str, Any] | None = None) -> None:
        super().__init__(pairs)
        self.scale, self.seeds = scale, seeds
        self.overrides: Mapping[str, Any] = overrides or {}

    def subset(self, pairs: Iterable[tuple[RunSpec, dict[str, Any]]]) -> Results:
        """Some of these runs, with the same scale, seed count and overrides."""
        return Results(pairs, self.scale, self.seeds, self.overrides)

    def sample_size(self, n: int) -> int:
        """How many fresh examples an analysis of these runs draws where the study asks for
        `n`: n, or the overridden test-set size when that is smaller. A trial of the paper scale
        (`n_test=64`) then evaluates its analyses on 64 examples as it evaluates its runs,
        instead of pushing thousands through a paper-sized model on the CPU; the study's own
        recipes (no override) keep their sizes."""
        n_test = self.overrides.get("n_test")
        return min(n, n_test) if isinstance(n_test, int) and n_test > 0 else n

    @property
    def first(self) -> RunSpec:
        """The first run's spec: what every arm shares (task, recipe) is read from it."""
        return self[0][0]

    def where(self, **factors: Any) -> Results:
        """The runs whose factors have these values (same scale and seed count)."""
        return self.subset((s, r) for s, r in self
                          if all(k in s.factors and s.factors[k] == v
                                 for k, v in factors.items()))

    def by(self, factor: str) -> dict[Any, Results]:
        """factor value -> its runs, values in spec order (runs without the factor left out)."""
        out: dict[Any, list[tuple[RunSpec, dict[str, Any]]]] = {}
        for s, r in self:
            if factor in s.factors:
                out.setdefault(s.factors[factor], []).append((s, r))
        return {v: self.subset(rs) for v, rs in out.items()}

    def arms(self) -> dict[str, list[dict[str, Any]]]:
        """arm -> its results in seed order, arms in spec order."""
        out: dict[str, list[dict[str, Any]]] = {}
        for s, r in self:
            out.setdefault(s.arm, []).append(r)
        return out

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


# ----------------------------------------------------------------------------- overrides

DERIVED_MODEL_KEYS = ("vocab_size", "n_classes", "max_seq_len", "d_input", "outputs_per_token")
"""ModelConfig fields TrainConfig fills from the task: dropped before an override is merged,
so that an override of the task (e.g. task.n_clauses) derives them anew."""


def override(config: TrainConfig, overrides: Mapping[str, Any]) -> TrainConfig:
    """`config` with `overrides` (nested dicts, as `reasonlab run STUDY key=value` parses them)
    deep-merged in: the same overrides for every run of a study (`run_study`).

    A run's pretraining run (`init_from`, a TrainConfig) is a run of the study too: it gets the
    same overrides, with `init_from.KEY=...` for it alone. An override inside an optional
    section a run does not have (`mimic.steps` for a run without mimicking) leaves that run
    alone; `overridden` checks that every override reaches some run."""
    if not overrides:
        return config
    data = config.model_dump(mode="json", exclude_defaults=True)
    data["task"] = config.task.model_dump(mode="json")  # with its name
    data["model"] = {k: v for k, v in data["model"].items() if k not in DERIVED_MODEL_KEYS}
    # init_from.KEY reaches the pretraining run, below, never this run's own fields
    sections = {"mimic": config.mimic, "init_from": None}
    own = {k: v for k, v in overrides.items()
           if not (isinstance(v, Mapping) and k in sections and sections[k] is None)}
    if config.init_run is not None:
        pre = merge({k: v for k, v in overrides.items() if k != "init_from"},
                    overrides.get("init_from") or {})
        data["init_from"] = override(config.init_run, pre)
    return TrainConfig.build(merge(data, own))


OPTIONAL_SECTIONS = ("mimic", "init_from")
"""TrainConfig sections that are None in runs without them (override: left alone there);
`init_from` is a section where it gives a pretraining run (a name replaces it whole)."""


def overridden(specs: list[RunSpec], overrides: Mapping[str, Any]) -> list[RunSpec]:
    """Every spec with `overrides` applied; one ConfigError line naming the override when it
    does not fit the study's configs (unknown key, bad value) or reaches no run."""
    if not overrides:
        return specs
    for section in OPTIONAL_SECTIONS:
        if section in overrides and not any(
                _has(s.config, section) for s in specs):
            raise ConfigError(f"override {section}.*: no run of this study has a {section} "
                              "section; remove the override")
    try:  # the factors stay: analyses select and group runs by them (Results.by, .where)
        return [replace(s, config=override(s.config, overrides)) for s in specs]
    except ConfigError as e:
        raise ConfigError(f"override does not fit the study's runs: {e}") from None


def _has(config: TrainConfig, section: str) -> bool:
    if (config.init_run if section == "init_from" else getattr(config, section)) is not None:
        return True
    return config.init_run is not None and _has(config.init_run, section)
