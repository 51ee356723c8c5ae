"""Work stealing: two `reasonlab run STUDY` commands on one store against one (target: about
half the wall time on 2 cores, and no run trained twice).

A 4-run smoke study (lego-extrapolation --scale smoke --seeds 2: BERT and ALBERT, 2 seeds),
its runs lengthened with `steps=N` so that training, not the start of Python and the report,
dominates. Measured in the same run: one command with --workers 1 on a fresh store, then two
such commands started together on another fresh store. Each command trains the runs no other
holds (execution.execute_all), waits for the rest and writes the report. Prints the ratio of
the two wall times, how the runs split between the two commands (run.json records the pid of
every start of a run), how long both commands were training at once (from the runs' start
and end times: the concurrency itself, which the ratio shows only where two cores are free),
and checks that every run started once.
Run: `python benchmarks/bench_steal.py [--steps 400] [--smoke]` (--smoke: 2 runs of 10 steps,
to show it runs); on a loaded machine the ratio moves with the load (the load average before
and after is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

STUDY = "lego-extrapolation"


def command(store: Path, steps: int, seeds: int) -> list[str]:
    return [sys.executable, "-m", "reasonlab.cli", "run", STUDY, "--scale", "smoke", "--seeds",
            str(seeds), "--workers", "1", "--quiet", "--out", str(store), f"steps={steps}"]


def timed(store: Path, steps: int, seeds: int, processes: int) -> tuple[float, list[int]]:
    """Wall seconds until `processes` commands started together have all finished; their
    pids."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(command(store, steps, seeds), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(command(store, steps, seeds))} failed:\n{err[-3000:]}")
    return time.perf_counter() - t0, [p.pid for p in procs]


def starts(store: Path) -> dict[str, list[int]]:
    """Run id -> the pid of each start recorded in its run.json."""
    out = {}
    for rec in sorted((store / "runs").glob("*/run.json")):
        data = json.loads(rec.read_text())
        out[data["id"]] = [s["pid"] for s in data["starts"]]
    return out


def intervals(store: Path) -> dict[int, list[tuple[float, float]]]:
    """pid -> the (start, end) wall-clock times of the runs it trained (run.json)."""
    out: dict[int, list[tuple[float, float]]] = {}
    for rec in sorted((store / "runs").glob("*/run.json")):
        data = json.loads(rec.read_text())
        start = data["starts"][-1]
        out.setdefault(start["pid"], []).append((start["time"], data["ended"]))
    return out


def side_by_side(spans: dict[int, list[tuple[float, float]]]) -> tuple[float, float]:
    """(seconds during which two commands were training at once, seconds during which any
    was): the runs' concurrency, which the wall-time ratio shows only on idle cores."""
    edges = sorted((t, d) for v in spans.values() for a, b in v for t, d in ((a, 1), (b, -1)))
    both = anyone = 0.0
    level, last = 0, 0.0
    for t, d in edges:
        if level >= 2:
            both += t - last
        if level >= 1:
            anyone += t - last
        level, last = level + d, t
    return both, anyone


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400, help="training steps of each run")
    ap.add_argument("--smoke", action="store_true", help="seconds: two 10-step runs")
    args = ap.parse_args()
    steps, seeds = (10, 1) if args.smoke else (args.steps, 2)
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average) on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        one, _ = timed(Path(tmp) / "one", steps, seeds, 1)
        two, pids = timed(Path(tmp) / "two", steps, seeds, 2)
        for name in ("one", "two"):
            twice = {k: v for k, v in starts(Path(tmp) / name).items() if len(v) != 1}
            if twice:
                raise SystemExit(f"runs started more than once ({name}): {twice}")
        split = Counter(p for v in starts(Path(tmp) / "two").values() for p in v)
        both, anyone = side_by_side(intervals(Path(tmp) / "two"))
        reports = sorted(Path(tmp, "two", STUDY).glob("*/report.md"))
        if len(reports) != 1:
            raise SystemExit(f"expected one report folder, found {reports}")
    print(f"{STUDY} smoke, {2 * seeds} runs of {steps} steps, --workers 1 per command")
    print(f"  one command:  {one:6.1f} s")
    print(f"  two commands: {two:6.1f} s  (runs trained per command: "
          f"{[split.get(p, 0) for p in pids]}; every run started once)")
    print(f"  both commands training at once: {both:.1f} s of the {anyone:.1f} s in which "
          "any was training")
    print(f"  ratio two / one: {two / one:.2f}  (ideal 0.5 on 2 idle cores)")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
