"""Listing at once: the CPU time of `reasonlab studies` and `reasonlab claims` answered from the
listing cache (reasonlab/listing.py) against computing them as the commands did before it,
importing every study (an empty cache: the same code path, so the reference is measured in the
same run on the same machine).

CPU time (user + system of the child process), not wall time: on a machine shared with
training runs the wall clock measures the load. Prints each command's CPU seconds both ways
and the ratio; the target is under 1 CPU-second for the cached listing on 2 cores, which
Python's own start and `reasonlab.cli`'s import bound from below (printed as `python -c pass`
and `reasonlab --help`).
Run: `python benchmarks/bench_listing.py [--rounds 3] [--smoke]` (--smoke: one round of
`studies`, to show it runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_seconds(args: list[str], cache: Path) -> float:
    """User + system CPU seconds of one child process."""
    env = {**os.environ, "REASONLAB_CACHE": str(cache)}
    env.pop("REASONLAB_PLUGINS", None)  # a plugin turns the cache off
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{p.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="one round of `studies`")
    a = ap.parse_args()
    rounds, commands = (1, ["studies"]) if a.smoke else (a.rounds, ["studies", "claims"])
    cli = ["-m", "reasonlab.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        floor = {"python -c pass": ["-c", "pass"], "reasonlab --help": [*cli, "--help"]}
        for name, args in floor.items():
            t = statistics.median(cpu_seconds(args, Path(tmp) / "x") for _ in range(rounds))
            print(f"{name:<24} {t:6.2f} CPU-s")
        warm = Path(tmp) / "warm"
        for command in commands:
            cold = [cpu_seconds([*cli, command], Path(tmp) / f"cold{i}")  # a new cache each
                    for i in range(rounds)]
            cpu_seconds([*cli, command], warm)  # fills it
            cached = [cpu_seconds([*cli, command], warm) for _ in range(rounds)]
            c, w = statistics.median(cold), statistics.median(cached)
            print(f"reasonlab {command:<14} {c:6.2f} CPU-s importing every study, {w:5.2f} "
                  f"CPU-s cached: {c / w:5.1f}x less")


if __name__ == "__main__":
    main()
