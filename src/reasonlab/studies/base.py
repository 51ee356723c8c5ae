"""Study: named claims from a paper, the runs that test them, and the analysis that judges them.

A study maps a scale (`smoke`: seconds, for the tests; `cpu`: the default, minutes on 2 cores;
`paper`: the authors' sizes, for a GPU) to a list of run configs, and turns finished runs into a
report: tables, PNG figures and one verdict per claim, with the numbers behind it.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from reasonlab.errors import AssetError, ConfigError
from reasonlab.execution import Executor, execute_all
from reasonlab.registry import Registry
from reasonlab.runs import check_device, load_result, run_dir_for
from reasonlab.store import check_partial, output_dir
from reasonlab.studies.core import (
    SCALES,
    Claim,
    Results,
    RunSpec,
    Scale,
    Status,
    Verdict,
    grid,
    merge,
)
from reasonlab.studies.reporting import Report
from reasonlab.train.config import TrainConfig

__all__ = ["SCALES", "STUDIES", "Claim", "Report", "Results", "RunSpec", "Scale", "Status",
           "Study", "Verdict", "grid", "merge", "run_study"]


class Study(ABC):
    name: ClassVar[str]
    """Set by `STUDIES.register(name)`; never written in the class."""
    title: ClassVar[str]
    claims: ClassVar[tuple[Claim, ...]]
    cpu_minutes: ClassVar[float | None]
    """Wall-clock time of the `cpu` scale on a 2-core machine, as measured; None until measured."""
    minutes: ClassVar[dict[Scale, float]] = {}
    """Measured wall-clock minutes on a 2-core machine of the scales other than cpu (e.g.
    {"long": 95}); a scale absent here is not measured."""
    scales: ClassVar[tuple[Scale, ...]] = ("smoke", "cpu", "paper")
    """The scales this study defines (`long` only where its issue needs it)."""
    cpu_after: ClassVar[str | None] = None
    """A study whose finished runs `cpu_minutes` assumes (shared runs folder), if any."""
    trains: ClassVar[bool] = True
    """False for a study that trains nothing (it computes at initialization, say): it defines
    no `runs`, and its `analyse` gets an empty Results carrying the scale."""
    default_seeds: ClassVar[dict[Scale, int]] = {"smoke": 1, "cpu": 3, "long": 3, "paper": 3}
    """Seeds per scale. A subclass lists only the scales where it differs (merged with its
    parent's by __init_subclass__), e.g. `default_seeds = {"cpu": 2}`."""

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if "default_seeds" in cls.__dict__:
            cls.default_seeds = {**cls.__mro__[1].default_seeds,  # type: ignore[attr-defined]
                                 **cls.__dict__["default_seeds"]}

    @classmethod
    def missing(cls) -> str | None:
        """Why the study cannot run on this machine (an absent asset and how to install it),
        or None. Tests skip a study with this reason."""
        return None

    @classmethod
    def measured(cls, scale: Scale) -> float | None:
        """Measured wall-clock minutes of `scale` on 2 cores; None if not measured."""
        return cls.cpu_minutes if scale == "cpu" else cls.minutes.get(scale)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """The runs to train at this scale (`grid(...)`). A study with trains = False does not
        define it and has none; one that trains must."""
        if self.trains:
            raise NotImplementedError(f"study {self.name} trains runs but defines no runs()")
        return []

    @abstractmethod
    def analyse(self, results: Results, out: Path) -> Report: ...


class StudyRegistry(Registry[type[Study]]):
    """STUDIES: registering a class under a name also sets its `name`."""

    def register(self, name: str) -> Callable[[type[Study]], type[Study]]:
        add = super().register(name)

        def deco(cls: type[Study]) -> type[Study]:
            cls.name = name
            return add(cls)

        return deco


STUDIES = StudyRegistry("study")


def run_study(name: str, scale: Scale = "cpu", seeds: int | None = None,
              out: Path | None = None, workers: int | None = None,
              quiet: bool = False, executor: Executor = "local",
              address: str | None = None) -> tuple[Report, Path]:
    """Run (or reuse) every run of the study, analyse them, write the report.

    The report goes to `out` (default reasonlab-out/<study>/<scale>). Runs live in
    `<root>/runs/<id>`, the id hashing the resolved config, with root = `out` when given and
    reasonlab-out otherwise: by default all studies share one runs folder, so a run two
    studies need (e.g. lego-probes probing lego-extrapolation's models) is trained once."""
    from reasonlab.console import check_workers

    check_workers(workers)
    study = STUDIES[name]()
    if why := study.missing():
        raise AssetError(f"study {name} {why}")
    if scale not in study.scales:
        raise ConfigError(f"study {name} has no {scale!r} scale; use one of "
                          + ", ".join(study.scales))
    seeds = seeds or study.default_seeds[scale]
    specs = study.runs(scale, seeds) if study.trains else []
    if study.trains and not specs:
        raise ConfigError(f"study {name} has no runs at scale {scale}")
    root = out or Path("reasonlab-out")
    out = out or Path("reasonlab-out") / name / scale
    with output_dir(out):
        check_runs([s.config for s in specs], root)
        return _run_study(study, specs, scale, seeds, root, out, workers, quiet, executor,
                          address)


def check_runs(configs: list[TrainConfig], root: Path) -> None:
    """Fail with one line before anything trains: a device this machine lacks, or a damaged
    run folder among those the configs reuse or resume."""
    for c in configs:
        check_device(c)
        run_dir = run_dir_for(c, root)
        if load_result(run_dir) is None:
            check_partial(run_dir)


def _run_study(study: Study, specs: list[RunSpec], scale: Scale, seeds: int, root: Path,
               out: Path, workers: int | None, quiet: bool, executor: Executor,
               address: str | None) -> tuple[Report, Path]:
    results = execute_all([s.config for s in specs], root,
                          [f"{s.arm} seed {s.seed}" for s in specs], workers, quiet, executor,
                          address, desc=study.name)
    for s, r in zip(specs, results, strict=True):
        r["dir"] = str(run_dir_for(s.config, root))  # where analyses find checkpoints
    report = study.analyse(Results(zip(specs, results, strict=True), scale, seeds), out)
    report.write(out)
    # what `reasonlab site` indexes: which study and scale this report is, and its runs
    (out / "study.json").write_text(json.dumps(
        {"study": study.name, "title": study.title, "scale": scale, "written": time.time(),
         "runs_root": str(Path(root).resolve()),
         "runs": [{"id": Path(r["dir"]).name, "arm": s.arm, "seed": s.seed}
                  for s, r in zip(specs, results, strict=True)]}, indent=1))
    return report, out
