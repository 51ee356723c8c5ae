"""Listing at once: the CPU time of `reasonlab studies`, `reasonlab claims` and `reasonlab
studies --scale S` as a first command on a new install reads them (the texts shipped with the
package, src/reasonlab/listings.json, an empty cache) and with what the last command remembered
(reasonlab/listing.py's cache, plan.py's op counts), against computing everything (no shipped
texts -- REASONLAB_LISTINGS pointed at none -- and an empty cache: the same code path, so the
reference is measured in the same run on the same machine). The shipped texts must be this
source's (`reasonlab readme` writes them), else the first-command column measures computing.

CPU time (user + system of the child process), not wall time: on a machine shared with
training runs the wall clock measures the load. Prints each command's CPU seconds both ways
and the ratio; the target is under 1 CPU-second for the cached listing on 2 cores, which
Python's own start and `reasonlab.cli`'s import bound from below (printed as `python -c pass`,
`reasonlab --version` and `reasonlab --help`). `reasonlab data lego --n 1` is printed beside
`import torch`, its floor (tasks hold their examples as torch tensors).
Run: `python benchmarks/bench_listing.py [--rounds 3] [--scale cpu] [--smoke]` (--smoke: one
round of `studies`, to show it runs; --scale none skips the cost table).
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


def cpu_seconds(args: list[str], cache: Path, shipped: bool = False) -> float:
    """User + system CPU seconds of one child process (`shipped`: reading the package's
    shipped texts; otherwise they are pointed at a file that does not exist)."""
    env = {**os.environ, "REASONLAB_CACHE": str(cache)}
    env.pop("REASONLAB_PLUGINS", None)  # a plugin turns the cache off
    env.pop("REASONLAB_LISTINGS", None)
    if not shipped:
        env["REASONLAB_LISTINGS"] = str(cache / "no-shipped-listings.json")
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
    ap.add_argument("--scale", default="cpu", help="the scale of `studies --scale` measured "
                    "(smoke, cpu, long, paper), or none")
    ap.add_argument("--smoke", action="store_true", help="one round of `studies`")
    a = ap.parse_args()
    cli = ["-m", "reasonlab.cli"]
    commands = [[*cli, "studies"]]
    if not a.smoke:
        commands.append([*cli, "claims"])
        if a.scale != "none":
            commands.append([*cli, "studies", "--scale", a.scale])
    rounds = 1 if a.smoke else a.rounds
    with tempfile.TemporaryDirectory() as tmp:
        floor = {"python -c pass": ["-c", "pass"], "reasonlab --version": [*cli, "--version"],
                 "reasonlab --help": [*cli, "--help"]}
        if not a.smoke:
            floor |= {"python -c 'import torch'": ["-c", "import torch"],
                      "reasonlab data lego --n 1": [*cli, "data", "lego", "--n", "1"]}
        for name, args in floor.items():
            t = statistics.median(cpu_seconds(args, Path(tmp) / "x") for _ in range(rounds))
            print(f"{name:<32} {t:6.2f} CPU-s")
        for i, command in enumerate(commands):
            cold = [cpu_seconds(command, Path(tmp) / f"cold{i}-{r}")  # a new cache each
                    for r in range(rounds)]
            first = [cpu_seconds(command, Path(tmp) / f"first{i}-{r}", shipped=True)
                     for r in range(rounds)]
            warm = Path(tmp) / f"warm{i}"
            cpu_seconds(command, warm)  # fills it
            cached = [cpu_seconds(command, warm) for _ in range(rounds)]
            c, f, w = (statistics.median(x) for x in (cold, first, cached))
            name = "reasonlab " + " ".join(command[len(cli):])
            print(f"{name:<32} {c:6.2f} CPU-s computing it all; first command on a new install "
                  f"(shipped) {f:5.2f} CPU-s, {c / f:5.1f}x less; with what the last command "
                  f"remembered {w:5.2f} CPU-s, {c / w:5.1f}x less")


if __name__ == "__main__":
    main()
