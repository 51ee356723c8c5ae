"""A study's report and the builder its `analyse` declares it with.

    rep = Report(self.title, out).recipe(results)
    rep.sweep(results.sweep(), "n_train", "Final test accuracy per training-set size",
              name="accuracy_by_n_train.png")
    rep.verdicts = [...]

Each builder method adds one section (a Markdown table) and/or one PNG figure and returns the
report. `write` renders the Markdown (verdicts first) and verdicts.json next to the figures.
Sections that read one task's metrics live with its family (LEGO's accuracy per chain position:
lego/analysis.py), not here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonlab.report import plot_sweep, sweep_table, table
from reasonlab.studies.kit.core import Results, Verdict


@dataclass
class Report:
    """What a study's analysis produces; figures are drawn into `out` as they are added."""

    title: str
    out: Path
    """The study's report folder: figures are drawn into it as they are added."""
    sections: list[str] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file name, caption)
    verdicts: list[Verdict] = field(default_factory=list)

    # -- building blocks ------------------------------------------------------------------
    def add(self, heading: str, body: str) -> Report:
        self.sections.append(f"## {heading}\n\n{body}")
        return self

    def table(self, heading: str, header: list[str], rows: list[list[str]], before: str = "",
              after: str = "") -> Report:
        """A section holding one Markdown table, with optional text before and after it."""
        return self.add(heading, (f"{before}\n\n" if before else "") + table(header, rows)
                        + (f"\n\n{after}" if after else ""))

    def figure(self, name: str, caption: str) -> Report:
        self.figures.append((name, caption))
        return self

    # -- standard sections ------------------------------------------------------------------
    def recipe(self, results: Results, note: str = "") -> Report:
        """What every run shares (settings that differ from the config defaults) and, per arm,
        what its runs set differently; runs and seeds per arm."""
        if not results:
            return self
        flat = {i: _flatten({**s.config.model_dump(exclude_defaults=True, exclude={"seed"}),
                             "task": s.config.task.model_dump()})
                for i, (s, _) in enumerate(results)}
        keys = sorted({k for f in flat.values() for k in f})
        shared = {k: flat[0][k] for k in keys
                  if all(k in f and f[k] == flat[0][k] for f in flat.values())}
        varying = [k for k in keys if k not in shared]
        arms = results.arms()
        body = ("Set in every run (config defaults otherwise): "
                + ", ".join(f"`{k}={v}`" for k, v in shared.items()) + "; "
                + ", ".join(f"{a} {_runs_and_seeds([sp.seed for sp, _ in results if sp.arm == a])}"
                            for a in arms) + ".")
        if varying:
            rows = [[a] + [", ".join(dict.fromkeys(str(flat[i].get(k, "-")) for i, (s, _)
                                                   in enumerate(results) if s.arm == a))
                           for k in varying] for a in arms]
            body += "\n\n" + table(["arm", *varying], rows)
        return self.add("Recipe", body + (f"\n\n{note}" if note else ""))

    def sweep(self, by_arm: Mapping[str, Mapping[Any, Sequence[float]]], xname: str,
              heading: str, xlabel: str | None = None, title: str = "", caption: str = "",
              name: str | None = None, chance: float | None = None, before: str = "") -> Report:
        """A metric against a swept quantity: table arm x value (mean ± std over seeds) and,
        when `name` is given, the figure (one line per arm, band ±1 std)."""
        header, rows = sweep_table(dict(by_arm), xname)  # type: ignore[arg-type]
        self.table(heading, header, rows, before=before)
        if name is not None:
            plot_sweep(dict(by_arm), self.out / name, xlabel or xname, title,  # type: ignore
                       chance=chance)
            self.figure(name, caption)
        return self

    # -- output ----------------------------------------------------------------------------
    def markdown(self) -> str:
        lines = [f"# {self.title}", "", "## Verdicts", "",
                 "| claim | verdict | effect [95% CI] (n per arm); why inconclusive | evidence |",
                 "|---|---|---|---|"]
        lines += [f"| {v.claim.text} ({v.claim.source}"
                  + (f"; the paper: {v.claim.paper_numbers}" if v.claim.paper_numbers else "")
                  + f") | **{v.status}** | {v.summary() or '-'} | {v.evidence} |"
                  for v in self.verdicts]
        lines.append("")
        for s in self.sections:
            lines += [s, ""]
        for name, caption in self.figures:
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        return "\n".join(lines)

    def write(self, out: Path) -> Path:
        from reasonlab.store import write_json_atomic, write_text_atomic

        path = out / "report.md"
        write_text_atomic(path, self.markdown())
        write_json_atomic(out / "verdicts.json", [verdict_record(v) for v in self.verdicts])
        return path


def verdict_record(v: Verdict) -> dict[str, Any]:
    """A verdict as verdicts.json stores it: the claim, status, evidence, why, and the effect
    it was decided from (value, interval, units per arm), which `reasonlab claims` and the
    generated README tables read back."""
    rec: dict[str, Any] = {"claim": v.claim.key, "text": v.claim.text, "status": v.status,
                           "evidence": v.evidence, "why": v.why, "summary": v.summary()}
    if v.effect is not None:
        e = v.effect
        rec["effect"] = {"what": e.what, "value": _finite(e.value), "lo": _finite(e.lo),
                         "hi": _finite(e.hi), "n": list(e.n), "exact": e.exact}
    if v.look is not None:  # a sequential run's (kit/sequential.py)
        rec["look"] = {"look": v.look, "looks": v.looks, "units": v.units}
    return rec


def _finite(x: float) -> float | None:
    """JSON has no infinity or NaN: an unbounded side of an interval is stored as null."""
    return float(x) if math.isfinite(x) else None


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"model": {"d_model": 64}} -> {"model.d_model": 64}."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _runs_and_seeds(seeds: list[int]) -> str:
    """The seeds of an arm's runs -> "3 seeds", or "6 runs (1 seed)" when the arm holds
    several configs per seed (e.g. one per task)."""
    n = len(set(seeds))
    plural = "s" if n > 1 else ""
    return f"{n} seed{plural}" if n == len(seeds) else f"{len(seeds)} runs ({n} seed{plural})"
