"""`reasonlab run STUDY --dry-run`: the runs a command would need and their state in the store,
checked against what the real command then trains; it writes nothing."""

import os
import shutil
import subprocess
import sys

from reasonlab.locking import RunLock, lock_path
from reasonlab.store import checkpoint_dir
from reasonlab import plan
from reasonlab.studies import STUDIES, run_study
from reasonlab.studies.kit.dry_run import describe, planned_runs

STUDY = "artificial-pretraining"  # smoke: 64 runs, 12 of them pretraining runs fine-tunes share


def states(rows):
    return {r.run_id: r.text for r in rows}


def test_the_dry_run_lists_exactly_the_runs_the_command_trains(tmp_path):
    store = tmp_path / "store"
    before = planned_runs(STUDY, "smoke", None, store)
    assert not store.exists()  # the dry run wrote nothing
    assert set(states(before).values()) == {"to train"}
    pretraining = [r for r in before if r.label.startswith("pretraining for ")]
    assert pretraining and before[:len(pretraining)] == pretraining  # what trains first
    assert "0 finished" in describe(STUDY, "smoke", before)
    assert "Left: 100%" in describe(STUDY, "smoke", before)

    run_study(STUDY, "smoke", out=store, workers=1, quiet=True)
    # the independent reference: the run folders the real command made, init runs included
    trained = {d.name for d in (store / "runs").iterdir() if not d.name.startswith(".")}
    assert set(states(before)) == trained and len(before) == len(trained)

    after = planned_runs(STUDY, "smoke", None, store)
    assert set(states(after).values()) == {"finished"}
    assert all(r.wall_s is not None and r.wall_s > 0 for r in after)  # trained on this host
    assert "Nothing left to train" in describe(STUDY, "smoke", after)

    lost = after[-1]  # a fine-tune whose folder was lost: the rest times it
    shutil.rmtree(store / "runs" / lost.run_id)
    text = describe(STUDY, "smoke", planned_runs(STUDY, "smoke", None, store))
    share = lost.flops / sum(r.flops for r in after)
    assert f"Left: {share:.0%} of the study's training FLOPs" in text
    assert f"seconds per FLOP of its {len(after) - 1} runs finished on this host" in text


def test_a_run_killed_after_its_checkpoint_resumes_and_one_held_trains_now(tmp_path):
    run_study("lego-extrapolation", "smoke", out=tmp_path, workers=1, quiet=True)
    killed, busy = sorted((tmp_path / "runs").iterdir())[:2]
    (killed / "result.json").unlink()  # as if killed after its last checkpoint
    (busy / "result.json").unlink()
    lock = RunLock(lock_path(busy))
    lock.acquire(wait=False)  # this process "trains" it now
    try:
        rows = {r.run_id: r for r in planned_runs("lego-extrapolation", "smoke", None, tmp_path)}
        # its trainer caught writing the checkpoint: the dry run says so and does not fail
        (checkpoint_dir(busy) / "state.json").write_text("{")
        writing = planned_runs("lego-extrapolation", "smoke", None, tmp_path)
    finally:
        lock.release()
    steps = rows[killed.name].steps
    assert rows[killed.name].text == f"resumes at step {steps}"  # its last checkpoint
    pid = os.getpid()
    assert rows[busy.name].text == f"training now (pid {pid}; checkpoint at step {steps})"
    assert states(writing)[busy.name] == f"training now (pid {pid})"
    assert rows[killed.name].flops_left == 0.0  # only the final evaluation is left
    text = describe("lego-extrapolation", "smoke", list(rows.values()))
    assert "1 training now in another process, 1 to resume" in text


def test_with_nothing_finished_here_the_rest_is_timed_at_plan_rate(tmp_path):
    """On an empty store every run of lego-stochastic-depth's long scale is left, timed at
    plan.py's CPU rate over the FLOPs `reasonlab studies --scale long` counts for it."""
    rows = planned_runs("lego-stochastic-depth", "long", None, tmp_path)
    assert len(rows) == 6 and {r.state for r in rows} == {"to train"}
    text = describe("lego-stochastic-depth", "long", rows, workers=2)
    assert "Left: 100%" in text and "plan.py's CPU rate" in text and "2 side by side" in text
    cls = STUDIES["lego-stochastic-depth"]
    cost = plan.study_cost([s.config for s in cls().runs("long", cls.default_seeds["long"])],
                           launches=False)
    assert cost.runs == len(rows)
    assert f"about {plan.fmt_hours(cost.cpu_hours)} of run time" in text
    assert f"about {plan.fmt_hours(cost.cpu_hours / 2)} with 2 side by side" in text


def test_the_cli_dry_run_prints_the_plan_and_fails_like_run(tmp_path):
    cli = [sys.executable, "-m", "reasonlab.cli", "run"]
    p = subprocess.run([*cli, "lego-probes", "--scale", "long", "--dry-run", "--out", "s"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "lego-probes at scale long: 6 runs; 0 finished" in p.stdout
    assert not (tmp_path / "s").exists()
    p = subprocess.run([*cli, "fpt-vit", "--scale", "cpu", "--dry-run"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert p.stderr.startswith("error: ") and "has no 'cpu' scale" in p.stderr
    p = subprocess.run([*cli, "lego-probes", "--dry-run", "--partition", "gpu"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2 and "--partition is an option of --executor slurm" in p.stderr
