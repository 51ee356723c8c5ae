"""Every verdict rule driven by simulation: under its null (the paper's effect absent) it must
read "reproduced" at most MAX_FALSE of the time, at the noise our own runs show; under the
paper's effect, its power at the study's seed count is reported (`reasonlab calibrate`).

A family lists its cases in `<family>/calibration.py` as `CASES`, one or more per rule; the
per-seed noise they draw with is data, `<family>/noise.toml` (each entry: `sd` and the store
and report it was measured from). tests/unit/studies/test_calibration.py runs every case and
fails when a rule that judges a claim (a public function of a family module, or of the kit's
verdicts, that returns a Verdict) has none.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from reasonlab.studies.kit.core import Verdict
from reasonlab.studies.kit.families import SUPPORT_PACKAGE

MAX_FALSE = 0.05
"""The most a rule may read "reproduced" under its null."""
NULL_DRAWS = 1000
POWER_DRAWS = 300
NOISE_FILE = "noise.toml"

Draw = Callable[[np.random.Generator], Verdict]


@dataclass(frozen=True)
class Case:
    """One simulated setting of one rule.

    `null(rng)` draws one study's numbers with the claim's effect absent (no difference; for
    "no better" and "about equal" claims, a difference at the margin) and returns the rule's
    verdict on them; `alternative(rng)` the same at the paper's effect size (None: the paper
    gives none we can simulate). `units`: replication units per arm the study runs at cpu
    scale. `noise`: the noise.toml entry the draws use (its sd is read with `noise(...)`)."""

    rule: Callable[..., Any]
    null: Draw
    alternative: Draw | None
    units: int
    noise: str
    label: str = ""
    note: str = ""
    """What the null and the alternative are, in a few words."""

    @property
    def name(self) -> str:
        return qualified(self.rule)


@dataclass(frozen=True)
class Exempt:
    """A rule that no noise can move: it reads a deterministic quantity (a FLOP count, a
    property of one fixed pretrained checkpoint) or combines other rules' verdicts."""

    rule: Callable[..., Any]
    why: str

    @property
    def name(self) -> str:
        return qualified(self.rule)


@dataclass
class Outcome:
    case: Case
    false_rate: float
    power: float | None
    statuses: dict[str, float] = field(default_factory=dict)


def qualified(f: Callable[..., Any]) -> str:
    return f"{f.__module__}.{f.__qualname__}"


@cache
def _noise_file(family: str) -> dict[str, Any]:
    from reasonlab.studies.kit.families import package

    pkg = "reasonlab.studies.kit" if family == "kit" else package(family)
    return tomllib.loads(resources.files(pkg).joinpath(NOISE_FILE).read_text(encoding="utf-8"))


def noise(family: str, key: str) -> float:
    """The measured per-unit standard deviation `key` of the family's noise.toml."""
    entry = _noise_file(family).get(key)
    if entry is None or "sd" not in entry or "source" not in entry:
        raise KeyError(f"{family}/{NOISE_FILE} has no entry {key!r} with sd and source")
    return float(entry["sd"])


def noise_entries(family: str) -> dict[str, Any]:
    return dict(_noise_file(family))


def rate(draw: Draw, draws: int, seed: int) -> dict[str, float]:
    """Share of each status over `draws` simulated studies (one generator, fixed seed: the
    calibration is deterministic)."""
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(draws):
        s = draw(rng).status
        counts[s] = counts.get(s, 0) + 1
    return {k: v / draws for k, v in counts.items()}


def run_case(case: Case, seed: int = 0, null_draws: int = NULL_DRAWS,
             power_draws: int = POWER_DRAWS) -> Outcome:
    null = rate(case.null, null_draws, seed)
    power = (rate(case.alternative, power_draws, seed + 1).get("reproduced", 0.0)
             if case.alternative is not None else None)
    return Outcome(case, null.get("reproduced", 0.0), power, null)


def families_cases(only: str | None = None) -> Iterator[tuple[str, Sequence[Case | Exempt]]]:
    """(family, its CASES) for the kit and every family (plugins' too), or the one keyed
    `only`; a family without a calibration module has none."""
    from reasonlab.studies.kit.families import families

    if only in (None, "kit"):
        yield "kit", importlib.import_module("reasonlab.studies.kit.calibration_cases").CASES
    for f, pkg in families().items():
        if only not in (None, f):
            continue
        try:
            mod = importlib.import_module(f"{pkg}.calibration")
        except ModuleNotFoundError as e:
            if e.name != f"{pkg}.calibration":  # the module exists and fails inside
                raise
            yield f, ()
            continue
        yield f, mod.CASES


def rule_functions(only: str | None = None) -> dict[str, Callable[..., Any]]:
    """Every public function that judges a claim: those of the kit's verdicts and of every
    module of every family (its `_support/` subpackage's too; plugins' families too; or of the
    one keyed `only`) annotated to return a Verdict (or a list of them)."""
    import inspect

    from reasonlab.studies.kit.families import families

    modules = ["reasonlab.studies.kit.verdicts"] if only in (None, "kit") else []
    for f, name in families().items():
        if only not in (None, f):
            continue
        pkg = importlib.import_module(name)
        top = resources.files(pkg)
        for sub, folder in (("", top), (f"{SUPPORT_PACKAGE}.", top.joinpath(SUPPORT_PACKAGE))):
            modules += [f"{name}.{sub}{c.name.removesuffix('.py')}"
                        for c in (folder.iterdir() if folder.is_dir() else ())
                        if c.name.endswith(".py") and c.name not in ("__init__.py",
                                                                     "calibration.py")]
    out = {}
    for m in modules:
        mod = importlib.import_module(m)
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("_") or fn.__module__ != m:
                continue
            if "Verdict" in str(inspect.signature(fn).return_annotation):
                out[qualified(fn)] = fn
    return out


def table(outcomes: Sequence[Outcome]) -> str:
    """A Markdown table: rule, case, units, noise, false "reproduced" under the null, power."""
    rows = ["| rule | case | units per arm | noise | false reproduced (null) | power (paper's "
            "effect) |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        c = o.case
        family = c.rule.__module__.replace(f".{SUPPORT_PACKAGE}.", ".").split(".")[-2]
        rows.append(f"| `{c.rule.__qualname__}` ({family}) | "
                    f"{c.label or '-'} | {c.units} | {c.noise} | {o.false_rate:.3f} | "
                    + ("-" if o.power is None else f"{o.power:.2f}") + " |")
    return "\n".join(rows)
