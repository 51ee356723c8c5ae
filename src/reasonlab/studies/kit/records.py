"""Every run's numbers as data: runs.json beside a study's report, one record per run (its id,
arm, seed, factors and the result's `final` metrics), so that a README's verdicts do not depend
on a store that does not survive its machine (a family keeps the measured scale's file in its
_support/ folder and a test recomputes the verdicts from it).

A study whose verdicts read only these fields defines `Study.judge_runs`; `records_results`
rebuilds the `Results` it reads from the records and the study's own run specs, and `replay`
judges them as the report did: each claim at the sequential look that decided it
(kit/sequential.py).
Curves and checkpoints are not records: a study whose verdicts read them (curves, probes,
attention) is judged from its store only, and its runs.json holds its finals all the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonlab.runs import config_id, load_result
from reasonlab.store import write_text_atomic
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.core import Results, RunSpec, Scale, Verdict

if TYPE_CHECKING:  # base imports this module: a type only, no cycle
    from reasonlab.studies.kit.base import Study

RUNS_JSON = "runs.json"
"""The records' file in a report folder."""


def _plain(x: Any) -> Any:
    """`x` as JSON reads it back (tuples become lists): what a record holds."""
    return json.loads(json.dumps(x))


def run_record(spec: RunSpec, result: Mapping[str, Any]) -> dict[str, Any]:
    """One run's record: run id, arm, seed, the spec's factors and the result's final
    evaluation (every metric it holds: a verdict reading any of them reads the record)."""
    return {"run": config_id(spec.config), "arm": spec.arm, "seed": spec.seed,
            "factors": _plain(dict(spec.factors)), "final": _plain(result["final"])}


def run_records(results: Results) -> list[dict[str, Any]]:
    """Every run's record, in spec order."""
    return [run_record(s, r) for s, r in results]


def write_run_records(records: Iterable[Mapping[str, Any]], path: Path) -> None:
    """The records as JSON, one run per line (a diff of two files reads run by run), written
    atomically: a reader sees the old file or the new one, never half."""
    write_text_atomic(path, "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")


def read_run_records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))


def records_results(records: Iterable[Mapping[str, Any]], specs: Sequence[RunSpec],
                    scale: Scale, seeds: int) -> Results:
    """The `Results` of `specs` (a study's `runs(scale, seeds)`) with each run's result rebuilt
    from its record (found by run id): its `final`, and a `dir` that names the run but holds
    nothing (an analysis reading curves or checkpoints fails there, loudly). Records of other
    runs (more seeds) are skipped; a spec without its record, or whose record says another arm,
    seed or factors, is an error: the records are not this study's runs."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for rec in records:
        if rec["run"] in by_id:
            raise ValueError(f"two records of run {rec['run']}")
        by_id[rec["run"]] = rec
    pairs = []
    for s in specs:
        run = config_id(s.config)
        rec = by_id.get(run)
        if rec is None:
            raise ValueError(f"no record of run {run} ({s.arm} seed {s.seed})")
        if (rec["arm"], rec["seed"], rec["factors"]) != (s.arm, s.seed, _plain(dict(s.factors))):
            raise ValueError(f"the record of run {run} is not {s.arm} seed {s.seed} "
                             f"{dict(s.factors)}")
        pairs.append((s, {"id": run, "dir": f"records/{run}", "final": dict(rec["final"])}))
    return Results(pairs, scale, seeds)


def judge_records(study: Study, records: Iterable[Mapping[str, Any]], scale: Scale,
                  units: int) -> list[Verdict]:
    """The study's verdicts (`Study.judge_runs`) on the records of its first `units` seeds, at the
    current level (stats.nominal) and units to come (sequential.adding)."""
    verdicts = study.judge_runs(records_results(records, study.runs(scale, units), scale, units))
    if verdicts is None:
        raise TypeError(f"study {study.name}'s verdicts need more than its runs' records "
                        "(it defines no judge_runs)")
    return verdicts


def replay(study: Study, records: Sequence[Mapping[str, Any]], scale: Scale,
           measured: Mapping[str, Any]) -> dict[str, Verdict]:
    """Claim key -> its verdict judged from the records as the report judged it, `measured`
    the family's measured.json entry at this scale: at `seeds` seeds and the kit's level, or,
    for a sequential run (verdicts with a `look`), each claim at the look that decided it (or
    the last run), on that look's seeds at its level with the units still to come after it
    (futility stops read them). The looks are `sequential.plan` from the study's seeds to the
    cap: the last look's seeds when the run reached it, else the default cap (`--max-units` is
    not recorded in measured.json; a run stopped early under another cap is an error here)."""
    seeds = measured["seeds"]
    marks = [v["look"] for v in measured["verdicts"] if v.get("look")]
    if not marks:
        with sequential.adding(0):
            return {v.claim.key: v for v in judge_records(study, records, scale, seeds)}
    n = marks[0]["looks"]
    first = study.default_seeds[scale]
    last = [m["units"] for m in marks if m["look"] == n]
    cap = last[0] if last else study.max_units.get(scale) or sequential.MAX_FACTOR * first
    looks = sequential.plan(first, cap)
    if len(looks) != n or any(looks[m["look"] - 1].units != m["units"] for m in marks):
        raise ValueError(f"the looks of study {study.name}'s measured verdicts ({marks}) are not "
                         f"those planned from {first} seeds to {cap}: {looks}")
    out: dict[str, Verdict] = {}
    for look in looks:
        keys = [v["claim"] for v in measured["verdicts"] if v["look"]["look"] == look.index]
        if keys:
            with stats.nominal(look.level), sequential.adding(cap - look.units):
                got = {v.claim.key: v for v in judge_records(study, records, scale, look.units)}
            out |= {k: sequential.annotate(got[k], look, n) for k in keys}
    return out


def export(study: Study, root: Path, path: Path, scale: Scale = "cpu") -> list[dict[str, Any]]:
    """Write the records of `study`'s report at `scale` in the store `root` (its study.json's
    runs, each read with load_result: checksums verified) to `path`; returns them. For a
    report written before the kit wrote runs.json. The study's specs at the report's seeds
    must be its runs, id for id (a study whose runs changed since is an error)."""
    name = study.name
    study_json = json.loads((root / name / scale / "study.json").read_text())
    if study_json["overrides"]:
        raise ValueError(f"{name}'s {scale} report has recipe overrides: not the study's own")
    specs = study.runs(scale, study_json["seeds"])
    ids = [r["id"] for r in study_json["runs"]]
    if [config_id(s.config) for s in specs] != ids:
        raise ValueError(f"{name}'s runs at {study_json['seeds']} seeds are not its report's")
    runs = Path(study_json["runs_root"]) / "runs"
    pairs = []
    for s, run in zip(specs, ids, strict=True):
        result = load_result(runs / run)
        if result is None:
            raise ValueError(f"run {run} of {name} has not finished")
        pairs.append((s, result))
    records = run_records(Results(pairs, scale, study_json["seeds"]))
    write_run_records(records, path)
    return records
