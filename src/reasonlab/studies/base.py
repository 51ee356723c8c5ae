"""Study: named claims from a paper, the runs that test them, and the analysis that judges them.

A study maps a scale (`smoke`: seconds, for the tests; `cpu`: the default, minutes on 2 cores;
`paper`: the authors' sizes, for a GPU) to a list of run configs, and turns finished runs into a
report: tables, PNG figures and one verdict per claim, with the numbers behind it.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from reasonlab.execution import Executor, execute_all
from reasonlab.registry import Registry
from reasonlab.runs import check_device, load_result, run_dir_for
from reasonlab.store import check_partial, output_dir
from reasonlab.train.config import TrainConfig

Scale = Literal["smoke", "cpu", "paper"]
SCALES: tuple[Scale, ...] = ("smoke", "cpu", "paper")
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


@dataclass
class Report:
    """What a study's analysis produces; `write` renders it as Markdown next to its figures."""

    title: str
    sections: list[str] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file name, caption)
    verdicts: list[Verdict] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"# {self.title}", "", "## Verdicts", "", "| claim | verdict | evidence |",
                 "|---|---|---|"]
        lines += [f"| {v.claim.text} ({v.claim.source}) | **{v.status}** | {v.evidence} |"
                  for v in self.verdicts]
        lines.append("")
        for s in self.sections:
            lines += [s, ""]
        for name, caption in self.figures:
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        return "\n".join(lines)

    def write(self, out: Path) -> Path:
        path = out / "report.md"
        path.write_text(self.markdown())
        (out / "verdicts.json").write_text(json.dumps(
            [{"claim": v.claim.key, "text": v.claim.text, "status": v.status,
              "evidence": v.evidence} for v in self.verdicts], indent=1))
        return path


class Study(ABC):
    name: ClassVar[str]
    title: ClassVar[str]
    claims: ClassVar[tuple[Claim, ...]]
    cpu_minutes: ClassVar[float | None]
    """Wall-clock time of the `cpu` scale on a 2-core machine, as measured; None until measured."""
    cpu_after: ClassVar[str | None] = None
    """A study whose finished runs `cpu_minutes` assumes (shared runs folder), if any."""
    default_seeds: ClassVar[dict[Scale, int]] = {"smoke": 1, "cpu": 3, "paper": 3}

    @classmethod
    def missing(cls) -> str | None:
        """Why the study cannot run on this machine (an absent asset and how to install it),
        or None. Tests skip a study with this reason."""
        return None

    @abstractmethod
    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]: ...

    @abstractmethod
    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report: ...


STUDIES: Registry[type[Study]] = Registry("study")


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
    specs = study.runs(scale, seeds or study.default_seeds[scale])
    root = out or Path("reasonlab-out")
    out = out or Path("reasonlab-out") / name / scale
    with output_dir(out):
        check_runs([s.config for s in specs], root)
        return _run_study(study, specs, scale, root, out, workers, quiet, executor, address)


def check_runs(configs: list[TrainConfig], root: Path) -> None:
    """Fail with one line before anything trains: a device this machine lacks, or a damaged
    run folder among those the configs reuse or resume."""
    for c in configs:
        check_device(c)
        run_dir = run_dir_for(c, root)
        if load_result(run_dir) is None:
            check_partial(run_dir)


def _run_study(study: Study, specs: list[RunSpec], scale: Scale, root: Path, out: Path,
               workers: int | None, quiet: bool, executor: Executor,
               address: str | None) -> tuple[Report, Path]:
    results = execute_all([s.config for s in specs], root,
                          [f"{s.arm} seed {s.seed}" for s in specs], workers, quiet, executor,
                          address, desc=study.name)
    for s, r in zip(specs, results, strict=True):
        r["dir"] = str(run_dir_for(s.config, root))  # where analyses find checkpoints
    report = study.analyse(list(zip(specs, results, strict=True)), out)
    report.write(out)
    # what `reasonlab site` indexes: which study and scale this report is, and its runs
    (out / "study.json").write_text(json.dumps(
        {"study": study.name, "title": study.title, "scale": scale, "written": time.time(),
         "runs_root": str(Path(root).resolve()),
         "runs": [{"id": Path(r["dir"]).name, "arm": s.arm, "seed": s.seed}
                  for s, r in zip(specs, results, strict=True)]}, indent=1))
    return report, out
