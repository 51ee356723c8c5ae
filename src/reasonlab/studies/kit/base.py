"""Study: named claims from a paper, the runs that test them, and the analysis that judges them.

A study maps a scale (`smoke`: seconds, for the tests; `cpu`: the default, minutes on 2 cores;
`paper`: the authors' sizes, for a GPU) to a list of run configs, and turns finished runs into a
report: tables, PNG figures and one verdict per claim, with the numbers behind it.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from reasonlab.config import override_lines
from reasonlab.errors import AssetError, ConfigError, PluginError
from reasonlab.execution import Executor, execute_all
from reasonlab.registry import Registry, caller, ours
from reasonlab.runs import check_runs, load_result, run_dir_for
from reasonlab.locking import RunLock
from reasonlab.store import CorruptRunError, checkpoint_meta, output_dir, write_json_atomic
from reasonlab.studies.kit.assets import check_assets, needed
from reasonlab.studies.kit.core import (SCALES, Claim, Results, RunSpec, Scale, Status, Verdict,
                                        grid, merge, overridden)
from reasonlab.studies.kit.records import RUNS_JSON, run_records, write_run_records
from reasonlab.studies.kit.reporting import Report
from reasonlab.train.config import STORAGE_ONLY
from reasonlab.studies.kit.claims import study_claims

__all__ = ["SCALES", "STUDIES", "Claim", "Report", "Results", "RunSpec", "Scale", "Status",
           "Study", "Verdict", "grid", "merge", "run_study"]


class Study(ABC):
    name: ClassVar[str]
    """Set by `STUDIES.register(name)`; never written in the class."""
    title: ClassVar[str]
    claims: ClassVar[tuple[Claim, ...]]
    scales: ClassVar[tuple[Scale, ...]] = ("smoke", "cpu", "paper")
    """The scales this study defines (`long` only where its issue needs it)."""
    cpu_after: ClassVar[tuple[str, ...]] = ()
    """The studies whose finished runs the measured cpu time assumes (shared runs folder)."""
    trains: ClassVar[bool] = True
    """False for a study that trains nothing (it computes at initialization, say): it defines
    no `runs`, and its `analyse` gets an empty Results carrying the scale."""
    unit: ClassVar[str] = ("the training seed (it draws the run's data, initialization and "
                           "example order)")
    """The replication unit of the study's comparisons: what one seed redraws, the whole
    pipeline (kit/stats.py). A study whose arms start from a pretraining run says that the seed
    pretrains as well."""
    options: ClassVar[dict[str, str]] = {}
    """Study-level keys of `reasonlab run STUDY key=value` that choose what the runs are (not
    a TrainConfig field: e.g. FPT's `backbone=`), key -> what it takes; `configure` reads
    them before `runs`."""
    default_seeds: ClassVar[dict[Scale, int]] = {"smoke": 1, "cpu": 3, "long": 3, "paper": 3}
    """Seeds per scale. A subclass lists only the scales where it differs (merged with its
    parent's by __init_subclass__), e.g. `default_seeds = {"cpu": 2}`."""

    reads_weights: ClassVar[bool] = True
    """Whether the analysis reads its runs' models (probes, attention, kernels, first layers),
    not their metrics alone. Only a study that says False may train its runs with
    keep_checkpoints="none" (train/config.py: a finished run then keeps no weights); the rest
    refuse it in one line before anything trains."""

    sequential: ClassVar[bool] = True
    """Whether `reasonlab run STUDY --until-decided` may add units (seeds) in batches
    (kit/sequential.py): its runs at n seeds must be among those at more (checked at every
    look). False for a study whose units cannot grow."""
    max_units: ClassVar[dict[Scale, int]] = {}
    """The study's budget in units for `--until-decided` per scale (default: MAX_FACTOR times
    its seeds there)."""

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        unique_keys(cls, cls.__dict__.get("claims", ()))
        if "default_seeds" in cls.__dict__:
            cls.default_seeds = {**cls.__mro__[1].default_seeds,  # type: ignore[attr-defined]
                                 **cls.__dict__["default_seeds"]}

    @classmethod
    def judged(cls, claims: tuple[Claim, ...]) -> tuple[Claim, ...]:
        """The claims the study judges, from its family file's rows for it: the same, unless a
        study judges each claim more than once (anchors: once per reading of the paper's
        gammas) and overrides this."""
        return claims

    @classmethod
    def claim(cls, key: str) -> Claim:
        """The declared claim with this key (a verdict rule is handed its claim by key)."""
        for c in cls.claims:
            if c.key == key:
                return c
        raise KeyError(f"study {cls.name} declares no claim {key!r}; its claims: "
                       f"{', '.join(c.key for c in cls.claims)}")

    @classmethod
    def missing(cls) -> str | None:
        """Why the study cannot run on this machine (an absent asset and how to install it),
        or None. Tests skip a study with this reason."""
        return None

    @classmethod
    def measured(cls, scale: Scale) -> float | None:
        """Measured wall-clock minutes of `scale` on 2 cores: the family's measured.json,
        written by `reasonlab readme` from a timed run in a store; None if not measured (a
        study class outside a family package, a test's, has no measured.json)."""
        from reasonlab.studies.kit.measured import minutes

        return minutes(cls.__module__.rpartition(".")[0], cls.name, scale)

    def configure(self, options: Mapping[str, Any]) -> None:
        """Take the study-level `options` (keys of `options`) given on the command line."""
        if options:
            raise ConfigError(f"study {self.name} takes no option {', '.join(options)}")

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """The runs to train at this scale (`grid(...)`). A study with trains = False does not
        define it and has none; one that trains must."""
        if self.trains:
            raise NotImplementedError(f"study {self.name} trains runs but defines no runs()")
        return []

    def check_overrides(self, scale: Scale, overrides: Mapping[str, Any]) -> None:
        """For a study that trains nothing: fail with one ConfigError line unless `overrides`
        (`reasonlab run STUDY key=value`) fit what it computes at `scale`. One that takes them
        reads them from `Results.overrides` in `analyse`; by default a study takes none. (A
        study that trains has its overrides checked against its runs' configs instead.)"""
        raise ConfigError(f"study {self.name} trains no runs and takes no key=value "
                          "overrides; remove them")

    @abstractmethod
    def analyse(self, results: Results, out: Path) -> Report: ...

    def judge_runs(self, results: Results) -> list[Verdict] | None:
        """The verdicts, where they read nothing but each run's record (arm, seed, factors and
        the result's `final`: kit/records.py), else None. A study that defines it judges with
        it in `analyse`, so its verdicts can be recomputed from runs.json without the store
        (`records.replay`); one whose verdicts read curves or checkpoints leaves it None."""
        return None


def check_family_key(package: str) -> None:
    """A plugin family is keyed by its package's last name (`reasonlab claims KEY`), which may
    not be one of reasonlab's own families."""
    import importlib.util

    key = package.rpartition(".")[2]
    if key and importlib.util.find_spec(f"reasonlab.studies.{key}") is not None:
        raise PluginError(f"family package {package} has the key {key!r} of reasonlab's own "
                          f"family reasonlab.studies.{key}; rename the package")


def unique_keys(cls: type, claims: tuple[Claim, ...]) -> None:
    keys = [c.key for c in claims]
    if len(set(keys)) != len(keys):
        raise TypeError(f"{cls.__qualname__}: claim keys must be unique, got {keys}")


class StudyRegistry(Registry[type[Study]]):
    """STUDIES: registering a class under a name also sets its `name` and, unless its class
    body declares them, its `claims`: the `[[studies.<name>]]` rows of the claims.toml of the
    package its module is in (kit/claims.py), so a study never repeats its own name."""

    def register(self, name: str) -> Callable[[type[Study]], type[Study]]:
        def deco(cls: type[Study]) -> type[Study]:
            cls.name = name
            origin = caller()
            if "claims" not in cls.__dict__:  # a family's study: its claims from the family file
                if not ours(origin):  # a plugin family's key may not be a built-in family's
                    check_family_key(cls.__module__.rpartition(".")[0])
                cls.claims = cls.judged(study_claims(cls.__module__, name))
                unique_keys(cls, cls.claims)
            self.add(name, cls, origin)
            return cls

        return deco


STUDIES = StudyRegistry("study")


def run_study(name: str, scale: Scale = "cpu", seeds: int | None = None,
              out: Path | None = None, workers: int | None = None,
              quiet: bool = False, executor: Executor = "local",
              address: str | None = None,
              overrides: Mapping[str, Any] | None = None) -> tuple[Report, Path]:
    """Run (or reuse) every run of the study, analyse them, write the report.

    `overrides` (nested dicts: `reasonlab run STUDY steps=100 --device cuda`) apply to every
    run of the study (core.override); they enter the run ids, and the report says them. The
    report goes to `<root>/<study>/<scale>` (`<scale>-<hash of the overrides>` with overrides,
    so a trial never overwrites the full report) and runs live in `<root>/runs/<id>`, the id
    hashing the resolved config, with root = `out` (default reasonlab-out): all studies of one
    root share one runs folder, so a run two studies need (e.g. lego-probes probing
    lego-extrapolation's models) is trained once, and two studies (or scales) with the same
    `out` never write into each other's report folder."""
    from reasonlab.console import check_workers

    check_workers(workers)
    study, specs, seeds, trial = prepare_study(name, scale, seeds, overrides, quiet)
    root = out or Path("reasonlab-out")
    out = root / name / (f"{scale}-{overrides_tag(trial)}" if trial else scale)
    with output_dir(out):
        check_runs([s.config for s in specs], root, executor)
        return _run_study(study, specs, scale, seeds, root, out, workers, quiet, executor,
                          address, trial)


def run_until_decided(name: str, scale: Scale = "cpu", max_units: int | None = None,
                      out: Path | None = None, workers: int | None = None,
                      quiet: bool = False, executor: Executor = "local",
                      address: str | None = None, overrides: Mapping[str, Any] | None = None,
                      seeds: int | None = None) -> tuple[Report, Path]:
    """`run_study` in looks (kit/sequential.py): `seeds` (the study's default) units, then as
    many more at a time up to `max_units` (the study's budget by default), analysed after each
    batch at the look's nominal level; a claim keeps the first look's decided verdict, and the
    study stops adding units once every claim is decided or curtailed (its precondition out of
    reach of the units to come). Each look's runs are the store's, so a later look trains only
    its new seeds. The report is the last look's with every claim's verdict from the look that
    decided it (and at which look, with how many units)."""
    from reasonlab.studies.kit import sequential, stats
    from reasonlab.console import check_seeds

    check_seeds(max_units)
    cls = STUDIES[name]
    first = seeds or cls.default_seeds.get(scale, 1)
    if not cls.trains or not cls.sequential:
        raise ConfigError(f"study {name} cannot add units (it "
                          + ("trains no runs" if not cls.trains else "does not opt in: "
                             "Study.sequential is False") + "); run it without --until-decided")
    cap = max_units or cls.max_units.get(scale) or sequential.MAX_FACTOR * first
    if cap <= first:
        raise ConfigError(f"--max-units {cap} must exceed the first look's {first} seeds")
    looks = sequential.plan(first, cap)
    root = out or Path("reasonlab-out")
    judge, before, wall, cpu = None, set(), 0.0, 0.0
    found, trained = 0, 0
    resumed: int | None = None
    for look in looks:
        study, specs, n, trial = prepare_study(name, scale, look.units, overrides, quiet)
        if judge is None:
            judge = sequential.Judge([c.key for c in study.claims], looks)
        ids = {run_dir_for(s.config, root) for s in specs}
        if not before <= ids:  # a look must keep every earlier look's runs (seed k is seed k)
            raise ConfigError(f"study {name}'s runs at {n} seeds do not include those at fewer; "
                              "it cannot be run --until-decided")
        before = ids
        folder = root / name / (f"{scale}-{overrides_tag(trial)}" if trial else scale)
        with (output_dir(folder), stats.nominal(look.level),
              sequential.adding(cap - look.units)):
            check_runs([s.config for s in specs], root, executor)
            report, folder = _run_study(study, specs, scale, n, root, folder, workers, quiet,
                                        executor, address, trial)
        timing = json.loads((folder / "study.json").read_text())["timing"]
        wall, cpu = wall + timing["wall_s"], cpu + timing["cpu_s"]
        # what the store held finished before this command: a look finds those and the runs
        # the earlier looks trained (each look's runs include every earlier look's), so the
        # last look's found less what this command trained is the store's; the looks' summed
        # time covers the rest
        found = timing["runs_found"] - trained
        trained += timing["runs"] - timing["runs_found"]
        resumed = timing.get("runs_resumed", 0) if resumed is None else resumed
        judge.see(look, report.verdicts)
        if judge.done:
            break
    assert judge is not None
    report.verdicts = judge.verdicts()
    with RunLock(folder / REPORT_LOCK):
        report.sections.insert(0, sequential_section(looks, look))
        report.write(folder)
        record = json.loads((folder / "study.json").read_text())
        record["timing"].update(wall_s=round(wall, 1), cpu_s=round(cpu, 1), runs_found=found,
                                runs_resumed=resumed)
        record["sequential"] = {
            "looks": [{"look": k.index, "units": k.units, "level": k.level} for k in looks],
            "stopped_at": look.index, "spending": "Lan-DeMets O'Brien-Fleming-type"}
        write_json_atomic(folder / "study.json", record)
    return report, folder


def sequential_section(looks: list[Any], last: Any) -> str:
    """The report's section on a sequential run: the looks planned, their levels, where it
    stopped."""
    rows = "\n".join(f"| {k.index} | {k.units} | {k.level:.5f} | "
                     f"{'run' if k.index <= last.index else 'not needed'} |" for k in looks)
    return ("## Sequential replication\n\nRun with `--until-decided`: the study was judged after "
            "each batch of seeds, each look at its share of the one-sided 2.5% (Lan-DeMets "
            "O'Brien-Fleming-type alpha spending, Bonferroni over the looks: "
            "kit/sequential.py), and every claim keeps the verdict of the look that decided it "
            f"(the verdicts above say which). Stopped at look {last.index} of {len(looks)}."
            "\n\n| look | seeds | one-sided level | |\n|---|---|---|---|\n" + rows)


def prepare_study(name: str, scale: Scale, seeds: int | None,
                  overrides: Mapping[str, Any] | None, quiet: bool = False
                  ) -> tuple[Study, list[RunSpec], int, dict[str, Any]]:
    """What `run_study` checks before it writes anything, shared with `--dry-run`
    (kit.dry_run): the study configured by its options, its run specs with the overrides
    applied, the seed count, and every override as given (the report's tag). One line of
    error for an unknown scale, missing assets, a seed given as an override."""
    from reasonlab.console import check_seeds

    check_seeds(seeds)
    study = STUDIES[name]()
    if why := study.missing():
        raise AssetError(f"study {name} {why}")
    if scale not in study.scales:
        raise ConfigError(f"study {name} has no {scale!r} scale; use one of "
                          + ", ".join(study.scales))
    seeds = seeds or study.default_seeds[scale]
    options = {k: v for k, v in (overrides or {}).items() if k in study.options}
    study.configure(options)
    # the report's tag and section still say the options; what only changes the disk is no trial
    trial = {k: v for k, v in (overrides or {}).items() if k not in STORAGE_ONLY}
    overrides = {k: v for k, v in (overrides or {}).items() if k not in options}
    specs = study.runs(scale, seeds) if study.trains else []
    if study.trains and not specs:
        raise ConfigError(f"study {name} has no runs at scale {scale}")
    if overrides and "seed" in overrides:
        raise ConfigError("choose the seeds with --seeds N, not seed=...")
    if overrides and not study.trains:  # what it computes, not runs, takes them
        study.check_overrides(scale, overrides)
    check_keep(study, overrides or {})  # before the overrides reach a pretraining run
    specs = overridden(specs, overrides or {})
    check_keep(study, {}, [s.config for s in specs])
    check_assets(needed(s.config for s in specs), name, scale, quiet)
    return study, specs, seeds, trial


def one_verdict_per_claim(study: Study, verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts in the order the study declares its claims, after checking that every
    declared claim got exactly one and no verdict judges an undeclared claim."""
    got = [v.claim.key for v in verdicts]
    want = [c.key for c in study.claims]
    if sorted(got) != sorted(want):
        raise RuntimeError(f"study {study.name} must give one verdict per declared claim "
                           f"{want}; its analysis gave {got}")
    by_key = {v.claim.key: v for v in verdicts}
    return [by_key[k] for k in want]


def check_keep(study: Study, overrides: Mapping[str, Any], configs: Sequence[Any] = ()) -> None:
    """One line, before anything trains, when the overrides or a run of a study that reads
    weights would keep none (keep_checkpoints="none": Study.reads_weights)."""
    if study.reads_weights and (overrides.get("keep_checkpoints") == "none" or any(
            c.keep_checkpoints == "none" for c in configs)):
        raise ConfigError(f"study {study.name} reads its runs' weights in its analysis, which "
                          "keep_checkpoints=none would not keep; remove it (only a study whose "
                          "analysis reads metrics alone takes it)")


def overrides_tag(overrides: Mapping[str, Any]) -> str:
    """A short stable name for a set of overrides (the report folder of a trial run)."""
    blob = json.dumps(overrides, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (pool workers), user + system."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def _has_checkpoint(run_dir: Path) -> bool:
    """Whether an unfinished run has a checkpoint to resume from. Only counted for the timing:
    one that another process is writing right now (check_runs skips runs held by another
    process) counts as none instead of failing the study."""
    try:
        return run_dir.is_dir() and checkpoint_meta(run_dir) is not None
    except CorruptRunError:
        return False


def _run_study(study: Study, specs: list[RunSpec], scale: Scale, seeds: int, root: Path,
               out: Path, workers: int | None, quiet: bool, executor: Executor,
               address: str | None, overrides: Mapping[str, Any]) -> tuple[Report, Path]:
    import os

    # what this command finds finished: its measured time covers only the rest (the
    # "once X has run" of a study's time), so the study.json says both
    everything = run_dirs(specs, root)
    finished = {d: load_result(d) is not None for d in everything}  # verifies checksums: once
    found = sum(finished.values())
    # an unfinished run with a checkpoint was partly trained by an earlier (interrupted)
    # command: this command's time then misses that part, and the readme says "at least"
    resumed = sum(not done and _has_checkpoint(d) for d, done in finished.items())
    start, cpu0, load = time.perf_counter(), _cpu_seconds(), os.getloadavg()[0]
    results = execute_all([s.config for s in specs], root,
                          [f"{s.arm} seed {s.seed}" for s in specs], workers, quiet, executor,
                          address, desc=study.name)
    for s, r in zip(specs, results, strict=True):
        r["dir"] = str(run_dir_for(s.config, root))  # where analyses find checkpoints
    # several commands on one study and store (execution.execute_all's work stealing, SLURM
    # array tasks) each write the report: in turn, so no figure is written by two at once
    with RunLock(out / REPORT_LOCK):
        runs = Results(zip(specs, results, strict=True), scale, seeds, overrides)
        # every run's numbers as data beside the report (kit/records.py), written before the
        # analysis so that a study writing richer records of its own replaces the file
        if runs:
            write_run_records(run_records(runs), out / RUNS_JSON)
        report = study.analyse(runs, out)
        report.verdicts = one_verdict_per_claim(study, report.verdicts)
        if overrides:  # first, under the verdicts: the recipe is not the study's own
            report.sections.insert(0, overrides_section(study, scale, overrides))
        report.write(out)
        timing = {"wall_s": round(time.perf_counter() - start, 1),
                  "cpu_s": round(_cpu_seconds() - cpu0, 1), "runs": len(everything),
                  "runs_found": found, "runs_resumed": resumed, "workers": workers,
                  "cores": os.cpu_count(),
                  "load_at_start": round(load, 2), "executor": executor}
        # what `reasonlab site` indexes: which study and scale this report is, and its runs;
        # the timing is what `reasonlab readme` records as the study's measured time
        write_json_atomic(out / "study.json", {
            "study": study.name, "title": study.title, "scale": scale, "written": time.time(),
            "seeds": seeds, "timing": timing,
            "overrides": dict(overrides),
            "runs_root": str(Path(root).resolve()),
            "runs": [{"id": Path(r["dir"]).name, "arm": s.arm, "seed": s.seed}
                     for s, r in zip(specs, results, strict=True)]})
    return report, out


def run_dirs(specs: list[RunSpec], root: Path) -> set[Path]:
    """The run folders a study's specs need under `root`: their own and their init
    (pretraining) runs'."""
    dirs = {run_dir_for(s.config, root) for s in specs}
    return dirs | {run_dir_for(s.config.init_run, root) for s in specs
                   if s.config.init_run is not None}


REPORT_LOCK = ".report.lock"
"""Held (locking.RunLock) by the command writing a study's report folder."""


def overrides_section(study: Study, scale: Scale, overrides: Mapping[str, Any]) -> str:
    """The report's "Recipe overrides" section: what the command line changed."""
    changed = ", ".join(f"`{o}`" for o in override_lines(overrides))
    what = (f"Every run of this report was trained with the `{scale}` recipe changed by "
            f"{changed} (given on the command line; its pretraining runs too)." if study.trains
            else f"Everything this report computes was computed with the `{scale}` recipe "
            f"changed by {changed} (given on the command line).")
    return (f"## Recipe overrides\n\n{what} Verdicts at these settings are not the study's "
            f"{scale}-scale verdicts.")
