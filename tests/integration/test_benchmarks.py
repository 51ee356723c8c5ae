"""Every script in benchmarks/ runs to the end in its `--smoke` mode (the smallest sizes, one
round: seconds), so a name the benchmarks import that moves, or a signature they call that
changes, fails here instead of in a user's hands. `pytest -k bench` runs them alone. A new
script is picked up by the glob and must take --smoke too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_benchmarks_are_found():
    assert len(SCRIPTS) >= 10, [p.name for p in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_benchmark_runs_in_its_smoke_mode(script, tmp_path):
    assert "--smoke" in script.read_text(), f"{script.name} has no --smoke mode"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run([sys.executable, str(script), "--smoke"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"{script.name} --smoke failed:\n{p.stderr[-4000:]}"
    assert p.stdout.strip(), f"{script.name} --smoke printed nothing"
