"""Every verdict rule driven by simulation: under its null (the paper's effect absent) it must
read "reproduced" at most MAX_FALSE of the time, at the noise our own runs show; under the
paper's effect, its power at the study's seed count is reported (`reasonlab calibrate`).

A family lists its cases in `<family>/calibration.py` as `CASES`; the per-seed noise they draw
with is data, `<family>/noise.toml` (each entry: `sd` and the store and report it was measured
from). Every case is data for one engine (kit/calibration_engine.py): `Sim` (`Types` for
units drawn as types at a rate, `Mixture` for a type and a value), the rule's null and
alternative -- the per-unit mean (or median) of each arm under each, the noise entry, the study
whose units it runs -- and a one-line `call` that hands the drawn arms to the rule. The engine
draws every case at the study's units at each of its scales, under normal, fit-or-not
(two-mode) and skewed noise, checks false "reproduced" <= MAX_FALSE under the null, at a fixed
seed count and over the looks of `--until-decided`, false "not reproduced" <= MAX_FALSE under
the alternative, and the power at the alternative (>= MIN_POWER at the planned units, or
`decides_at`: the units at which it reaches TARGET_POWER, written in the ledger).

tests/unit/studies/test_calibration.py runs every case and fails when a rule that judges a
claim has none. The rules are found from the code, not from an annotation (`rule_functions`):
every function, method, static method, nested function or lambda of a family module (or the
kit's verdicts) that builds a Verdict or calls a rule. `Exempt` is for the three kinds of rule
no noise reaches directly, each checked: a combinator of other rules (`parts`), a helper
calibrated through the rules that call it (`through`), and a rule on a quantity computed
exactly (`example`: a call whose verdict must be exact and the same twice).
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


from reasonlab.studies.kit.core import Verdict
from reasonlab.studies.kit.families import SUPPORT_PACKAGE
from reasonlab.studies.kit.rules import code_key
from reasonlab.studies.kit.stats import TARGET_POWER

MAX_FALSE = 0.05
"""The most a rule may read "reproduced" under its null (and "not reproduced" under its
alternative)."""
MIN_POWER = 0.5
"""Below this power at the study's units a case must declare `decides_at`."""
MIN_DECIDED = 0.01
"""A rule that decides in fewer of its draws than this (null and alternative together) is
always inconclusive: its null test would pass vacuously."""
NOISE_FILE = "noise.toml"



@dataclass(frozen=True)
class Exempt:
    """A rule no noise reaches directly, of one of three checked kinds (exactly one given):
    `parts`, the calibrated rules it combines or gates (its code may compute no interval);
    `through`, the calibrated rules that call it (a shared helper); `example`, a call on
    representative inputs of a rule on a quantity computed exactly (a FLOP count, a property
    of one fixed checkpoint): its verdict must be exact and the same on a second call, and its
    code may compute no interval."""

    rule: Callable[..., Any]
    why: str
    parts: tuple[Callable[..., Any], ...] | None = None
    through: tuple[Callable[..., Any], ...] | None = None
    example: Callable[[], Verdict] | None = None

    @property
    def name(self) -> str:
        return qualified(self.rule)


def qualified(f: Any) -> str:
    """module.qualname of a rule; a lambda's also names its line (module.<lambda>@12), a
    static method is its function's."""
    f = getattr(f, "__func__", f)
    code = f.__code__
    return code_key(f.__module__, code)


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


def families_cases(only: str | None = None) -> Iterator[tuple[str, Sequence[Any]]]:
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


def rule_modules(only: str | None = None) -> list[str]:
    """The modules whose rules are calibrated: the kit's verdicts and every module of every
    family (its `_support/` subpackage's too; plugins' families too; or of the one keyed
    `only`), calibration modules aside."""
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
    return modules


def rule_functions(only: str | None = None) -> dict[str, Any]:
    """Every piece of code that judges a claim, found from the code itself (kit/rules.py):
    qualified name -> its code object."""
    from reasonlab.studies.kit.rules import rules

    return rules(rule_modules(only))


# ----------------------------------------------------------------------------- checks


def _code(f: Any) -> Any:
    return getattr(f, "__func__", f).__code__


def exempt_problems(e: Exempt, cases: Sequence[Any]) -> list[str]:
    """Why an Exempt does not hold (empty: it does). `cases`: every case and Exempt of the
    suite (a part or caller must itself be calibrated)."""
    from reasonlab.studies.kit.rules import ESTIMATORS, names

    kinds = [k for k in ("parts", "through", "example") if getattr(e, k) is not None]
    if len(kinds) != 1:
        return [f"{e.name}: an Exempt gives exactly one of parts, through, example "
                f"(got {kinds or 'none'})"]
    calibrated = {c.name for c in cases if not isinstance(c, Exempt)}
    covered = {c.name for c in cases}
    out = []
    own = names(_code(e.rule))
    if e.through is not None:
        if not e.through:
            out.append(f"{e.name}: `through` names no rule")
        for f in e.through:
            if qualified(f) not in calibrated:
                out.append(f"{e.name}: {qualified(f)} has no calibration case")
            if _code(e.rule).co_name not in names(_code(f)):
                out.append(f"{e.name}: {qualified(f)} does not call it")
        return out
    if own & ESTIMATORS:  # it computes an interval itself: a case must calibrate it
        out.append(f"{e.name}: computes from noisy units ({', '.join(sorted(own & ESTIMATORS))})"
                   "; it needs a calibration case, not an Exempt")
    for f in e.parts or ():
        if qualified(f) not in covered:
            out.append(f"{e.name}: part {qualified(f)} is not calibrated")
    if e.example is not None:
        a, b = e.example(), e.example()
        if a.effect is not None and not a.effect.exact or "exact" not in a.evidence:
            out.append(f"{e.name}: its example's verdict is not exact ({a.evidence})")
        if (a.status, a.evidence) != (b.status, b.evidence):
            out.append(f"{e.name}: two calls of its example differ: not deterministic")
    return out


def sim_problems(o: Any) -> list[str]:
    """Why a Sim's outcome fails the suite (empty: it passes)."""
    c, out = o.case, []
    for (shape, n), r in o.false_rate.items():
        if r > MAX_FALSE:
            out.append(f"false 'reproduced' {r:.3f} under the {shape} null at {n} units")
    for shape, r in o.sequential_false.items():
        if r > MAX_FALSE:
            out.append(f"false 'reproduced' {r:.3f} over the looks of --until-decided "
                       f"({shape} null)")
    for n, r in o.false_not.items():
        if r > MAX_FALSE:
            out.append(f"false 'not reproduced' {r:.3f} under the alternative at {n} units")
    if c.stress and c.alternative is not None:
        out.append("a stress case has no alternative (its rule's power is another case's)")
    scales = c.units()
    if not scales:
        out.append("no units: give the study (or `at`)")
    if c.alternative is None:
        if o.decided_null < MIN_DECIDED and not c.stress:
            out.append(f"always inconclusive: decides in {o.decided_null:.3f} of null draws "
                       "and has no alternative")
        return out
    low = {s: n for s, n in scales.items() if o.power.get(n, 0.0) < MIN_POWER}
    if low and c.decides_at is None:
        out.append("power " + ", ".join(f"{o.power.get(n, 0.0):.2f} at {n} units ({s})"
                                        for s, n in low.items())
                   + f" < {MIN_POWER}: declare decides_at (the units that reach power "
                   f"{TARGET_POWER})")
    if low and c.decides_at is not None and o.power.get(c.decides_at, 0.0) < TARGET_POWER:
        out.append(f"declares decides_at {c.decides_at} but its power there is "
                   f"{o.power.get(c.decides_at, 0.0):.2f} < {TARGET_POWER}")
    if max(o.power.values(), default=0.0) < MIN_DECIDED and o.decided_null < MIN_DECIDED:
        out.append("always inconclusive")
    return out


def stress_problems(cases: Sequence[Any]) -> list[str]:
    """A null-only stress case (`Sim.stress`) whose rule has no other case with an alternative:
    nothing would show the rule can decide. (Every engine case has `stress`; an Exempt does
    not. Read by attribute: the engine imports this module.)"""
    sims = [c for c in cases if hasattr(c, "stress")]
    powered = {c.name for c in sims if not c.stress and c.alternative is not None}
    return [f"{c.name} ({c.label}): a stress case, but no case of its rule has an alternative"
            for c in sims if c.stress and c.name not in powered]
