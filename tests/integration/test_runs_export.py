"""`reasonlab runs --format {json,csv}`: the index as records, checked against the run folders'
own files (result.json, config.json) and read back by the csv and json modules."""

from __future__ import annotations

import csv
import io
import json

from reasonlab.cli import main
from reasonlab.runs import execute, run_dir_for
from reasonlab.store import flatten
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


def test_runs_exports_the_index_as_json_and_csv(tmp_path, capsys):
    configs = [TrainConfig.build({**TINY, **over})
               for over in ({}, {"seed": 1}, {"optim": {"lr": 0.01}, "steps": 6})]
    for c in configs:
        execute(c, tmp_path, quiet=True)
    partial = run_dir_for(TrainConfig.build({**TINY, "seed": 7}), tmp_path)
    partial.mkdir(parents=True)  # a run folder that never got past its start
    capsys.readouterr()

    assert main(["runs", "--out", str(tmp_path), "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)  # stdout holds the JSON alone
    by_id = {r["id"]: r for r in records}
    assert set(by_id) == {run_dir_for(c, tmp_path).name for c in configs} | {partial.name}
    for c in configs:
        d = run_dir_for(c, tmp_path)
        result = json.loads((d / "result.json").read_text())
        r = by_id[d.name]
        assert (r["status"], r["task"], r["path"]) == ("finished", "lego", str(d))
        assert r["acc"] == result["final"]["acc"] and r["step"] == result["final"]["step"]
        assert r["created"].endswith("+00:00") and r["wall_s"] > 0
    assert by_id[run_dir_for(configs[2], tmp_path).name]["changed"]["optim.lr"] == 0.01
    assert by_id[run_dir_for(configs[1], tmp_path).name]["changed"]["seed"] == 1
    assert by_id[partial.name]["status"] == "partial" and by_id[partial.name]["acc"] is None
    assert by_id[partial.name]["final"] == {}
    for c in configs:  # every final metric, and the whole config with its defaults
        d = run_dir_for(c, tmp_path)
        r, final = by_id[d.name], json.loads((d / "result.json").read_text())["final"]
        assert r["final"] == {k: v for k, v in final.items() if k != "step"}
        assert {"acc", "loss", "train_loss", "acc_by_depth"} <= set(r["final"])
        assert r["config"] == flatten(json.loads((d / "config.json").read_text()))
        assert r["config"]["optim.lr"] == c.optim.lr and r["config"]["seed"] == c.seed

    assert main(["runs", "--out", str(tmp_path), "--format", "csv",
                 "--filter", "status=finished"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3
    assert {"id", "task", "status", "acc", "seed", "optim.lr", "steps", "final.acc",
            "final.loss", "final.train_loss", "final.acc_by_depth"} <= set(rows[0])
    for row in rows:
        rec = by_id[row["id"]]
        assert float(row["acc"]) == rec["acc"] and row["status"] == "finished"
        # a default is written out, not left blank
        assert float(row["optim.lr"]) == rec["config"]["optim.lr"]
        assert int(row["seed"]) == rec["config"]["seed"]
        assert float(row["final.loss"]) == rec["final"]["loss"]
        assert json.loads(row["final.acc_by_depth"]) == rec["final"]["acc_by_depth"]

    # `runs list --format` too; a bad format is one line
    assert main(["runs", "list", "--out", str(tmp_path), "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    assert main(["runs", "--out", str(tmp_path), "--format", "xml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    """`reasonlab runs --format csv | head`: the pipe closes before the index is written."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    execute(TrainConfig.build(TINY), tmp_path, quiet=True)
    src = Path(__file__).resolve().parents[2] / "src"
    p = subprocess.Popen([sys.executable, "-m", "reasonlab.cli", "runs", "--out", str(tmp_path),
                          "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(src)}, text=True)
    p.stdout.close()  # the reader is gone before the command writes
    err = p.stderr.read()
    assert p.wait() == 141 and err == "", err
