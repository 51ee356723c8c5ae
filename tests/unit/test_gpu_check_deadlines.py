"""scripts/gpu_check.py's schedule: every section has its own deadline, enforced inside it (a
loop that never looks at the clock, a child process that never ends), and a section cut short
keeps what it measured; the sections after it still get their time."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def g():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_section_that_ignores_its_deadline_is_cut_and_keeps_what_it_measured(g, tmp_path):
    def forever(out, dl):
        out["n"] = 0
        while True:  # never asks the deadline
            try:
                out["n"] += 1
                time.sleep(0.01)
            except Exception:  # noqa: BLE001 - the cut is no Exception: this cannot swallow it
                pass

    check = g.Check(tmp_path, budget=2.0, device="cpu", quick=True)
    check.run([("first", 1, 0, forever), ("second", 1, 0, lambda out, dl: out.update(x=1))])
    data = json.loads((tmp_path / "gpu-check.json").read_text())["sections"]
    first, second = data["first"], data["second"]
    assert first["status"] == "ok" and first["cut_short"] and first["result"]["n"] > 10
    assert 0.9 <= first["wall_s"] <= first["deadline_s"] + 0.5, first
    assert second == {**second, "status": "ok", "cut_short": False, "result": {"x": 1}}
    assert 0.5 < second["deadline_s"] <= 1.1  # its own half of the budget
    md = (tmp_path / "gpu-check.md").read_text()
    assert "## first: ok, cut short" in md and "- n: " in md


def test_time_a_section_leaves_goes_to_the_next(g, tmp_path):
    check = g.Check(tmp_path, budget=4.0, device="cpu", quick=True)
    check.run([("a", 1, 0, lambda out, dl: None), ("b", 1, 0, lambda out, dl: None),
               ("c", 2, 0, lambda out, dl: out.update(left=dl.left()))])
    sections = json.loads((tmp_path / "gpu-check.json").read_text())["sections"]
    assert sections["a"]["deadline_s"] == pytest.approx(1.0, abs=0.2)
    assert sections["c"]["deadline_s"] == pytest.approx(4.0, abs=0.3)  # a and b took ~0


def test_a_child_process_is_killed_at_the_deadline_with_what_it_printed(g, tmp_path):
    def section(out, dl):
        child = g.run_child([sys.executable, "-c", "import json, time; "
                             "print(json.dumps({'case': 'first'}), flush=True); "
                             "time.sleep(60)"], dl)
        out.update(lines=child.lines(), timed_out=child.timed_out, wall=child.wall_s)

    check = g.Check(tmp_path, budget=g.CHILD_RESERVE_S + 3, device="cpu", quick=True)
    t = time.monotonic()
    check.run([("child", 1, 0, section)])
    assert time.monotonic() - t < g.CHILD_RESERVE_S + 4
    s = json.loads((tmp_path / "gpu-check.json").read_text())["sections"]["child"]
    assert s["cut_short"] and s["result"]["timed_out"]
    assert s["result"]["lines"] == [{"case": "first"}]


def test_a_failing_section_is_a_finding_and_a_section_without_time_is_skipped(g, tmp_path):
    def fails(out, dl):
        out["before"] = 1
        raise ValueError("boom")

    check = g.Check(tmp_path, budget=3.0, device="cpu", quick=True)
    check.run([("fails", 2, 0, fails), ("late", 1, 5, lambda out, dl: None)])
    s = json.loads((tmp_path / "gpu-check.json").read_text())["sections"]
    assert s["fails"]["status"] == "error" and s["fails"]["error"] == "ValueError: boom"
    assert s["fails"]["result"] == {"before": 1}
    assert s["late"]["status"] == "skipped" and "needs ~5 s" in s["late"]["why"]


@pytest.mark.parametrize("argv, says", [
    (["--only", "steps", "nosuch"], "error: unknown section 'nosuch' in --only; choose from:"),
    (["--window", "12"], "error: -3 s left for the checks (--window 12"),
])
def test_user_errors_are_one_line(g, tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.delenv("GPU_CHECK_T0", raising=False)
    assert g.main(["--device", "cpu", "--quick", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(says), err
    assert not (tmp_path / "gpu-check.json").exists()


def test_the_sections_are_in_order_of_value_and_share_the_whole_budget(g):
    assert g.SECTIONS == ("env", "fpt launch", "determinism", "steps", "precision", "smoke",
                          "paper trial")
    assert set(g.SHARES) == set(g.NEED) == set(g.SECTIONS)
    assert sum(g.SHARES.values()) == pytest.approx(1.0)
    assert g.PAPER_TRIAL == ["--seeds", "1", "steps=20", "n_test=64"]
