"""`reasonlab runs`: list / filter / show / diff / gc over a store, and run.json provenance."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from reasonlab.cli import main
from reasonlab.runs import config_id, execute
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Three finished runs (seeds 0, 1 and lr 0.01), built once."""
    root = tmp_path_factory.mktemp("runs")
    ids = []
    for over in ({}, {"seed": 1}, {"optim": {"lr": 0.01}}):
        ids.append(execute(TrainConfig.build({**TINY, **over}), root, quiet=True)["id"])
    return root, ids


@pytest.fixture
def copy(store, tmp_path):
    root, ids = store
    shutil.copytree(root, tmp_path / "s")
    return tmp_path / "s", ids


def written_before_checksums(run_dir) -> None:
    """result.json as an older reasonlab wrote it: without the checksums of its files (which
    the config.json edits below, standing for an older schema, would fail)."""
    result = json.loads((run_dir / "result.json").read_text())
    del result["sha256"]
    (run_dir / "result.json").write_text(json.dumps(result))


def cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_json_records_provenance_and_keeps_the_id(copy):
    root, ids = copy
    rec = json.loads((root / "runs" / ids[0] / "run.json").read_text())
    assert rec["status"] == "finished" and rec["wall_s"] > 0
    assert rec["host"] and rec["torch"] and "git_commit" in rec
    assert rec["id"] == ids[0] == config_id(TrainConfig.build(TINY))
    result = json.loads((root / "runs" / ids[0] / "result.json").read_text())
    # provenance stays out of results (the checksums are of the files the results are)
    assert set(result) == {"id", "final", "curve", "sha256"}


def test_list_filter_show_diff(copy, capsys):
    root, ids = copy
    rc, out, _ = cli(capsys, "runs", "--out", str(root))
    assert rc == 0 and all(i in out for i in ids) and "3 run(s): 3 finished" in out
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "--filter", "seed=1")
    assert rc == 0 and ids[1] in out and ids[0] not in out
    # a default value filters too (read from config.json), and filters combine
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "--filter", "optim.lr=0.001",
                     "--filter", "seed=0")
    assert rc == 0 and ids[0] in out and ids[1] not in out and ids[2] not in out
    rc, out, _ = cli(capsys, "runs", "show", ids[2][:6], "--out", str(root))
    assert rc == 0 and '"lr": 0.01' in out and "curve:" in out and "step 4" in out
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "diff", ids[0], ids[2])
    assert rc == 0 and "optim.lr: 0.001 -> 0.01" in out and "acc:" in out
    assert "seed" not in out.split("final metrics")[0]


def test_diff_fills_defaults_of_fields_added_later(copy, capsys):
    """A run written before a config field existed has no such key in config.json; the field's
    default keeps the old behaviour, so diff must not report it as a difference."""
    root, ids = copy
    cfg = root / "runs" / ids[0] / "config.json"
    data = json.loads(cfg.read_text())
    del data["model"]["mlp_bias"], data["task"]["root"]  # as written by an older reasonlab
    cfg.write_text(json.dumps(data))
    written_before_checksums(cfg.parent)
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "diff", ids[0], ids[2])
    head = out.split("final metrics")[0]
    assert rc == 0 and "optim.lr: 0.001 -> 0.01" in head
    assert "mlp_bias" not in head and "root" not in head


def test_diff_reads_old_flat_variant_keys(copy, capsys):
    """A run folder written before variants owned their options (issue 12) holds flat keys
    (init_gamma, identity_terms, ...: null when unset); diff reads them as today's
    sub-configs, so an old and a new folder of the same variant differ in nothing else."""
    root, ids = copy
    old, new = (root / "runs" / i / "config.json" for i in (ids[0], ids[2]))
    data = json.loads(old.read_text())
    data["model"] |= {"init": "rate", "init_gamma": 0.3, "attention": "softmax", "arch":
                      "transformer", "identity_terms": None, "identity_zero_diag": None,
                      "mlp_equality": None}
    for key in ("norm_layer", "mlp"):  # fields that did not exist then
        data["model"].pop(key, None)
    data["model"]["norm"] = data["model"].pop("norm_position")  # its name then
    old.write_text(json.dumps(data))
    data = json.loads(new.read_text())
    data["model"]["init"] = {"name": "rate", "gamma": 0.3}
    new.write_text(json.dumps(data))
    for folder in (old.parent, new.parent):
        written_before_checksums(folder)
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "diff", ids[0], ids[2])
    head = out.split("final metrics")[0]
    assert rc == 0 and "optim.lr: 0.001 -> 0.01" in head
    assert "init" not in head and "identity" not in head and "mlp" not in head
    rc, out, _ = cli(capsys, "runs", "show", ids[0], "--out", str(root))
    assert rc == 0 and '"init_gamma": 0.3' in out  # show prints the folder's config as it is


def test_partial_run_listed_with_its_step_and_collected(copy, capsys):
    root, ids = copy
    partial = root / "runs" / ids[1]
    (partial / "result.json").unlink()
    rec = json.loads((partial / "run.json").read_text())
    (partial / "run.json").write_text(json.dumps({**rec, "status": "running", "pid": 2**22 + 7}))
    rc, out, _ = cli(capsys, "runs", "--out", str(root), "--filter", "status=partial")
    assert rc == 0 and ids[1] in out and "partial at step 4" in out
    # too young for the default age: nothing removed
    rc, out, _ = cli(capsys, "runs", "gc", "--out", str(root), "--yes")
    assert rc == 0 and "nothing to remove" in out and partial.exists()
    old = time.time() - 3 * 86400
    for p in [partial, *partial.rglob("*")]:
        os.utime(p, (old, old))
    # refused at the prompt: kept
    from reasonlab import index

    assert index.gc(root, 86400, yes=False, ask=lambda _: "n") == "nothing removed"
    assert partial.exists()
    rc, out, _ = cli(capsys, "runs", "gc", "--out", str(root), "--yes")
    assert rc == 0 and "removed 1" in out and not partial.exists()
    assert all((root / "runs" / i / "result.json").exists() for i in (ids[0], ids[2]))


def test_damaged_run_is_listed_and_collected_whatever_its_age(copy, capsys):
    root, ids = copy
    (root / "runs" / ids[0] / "result.json").write_text("{oops")
    # the listing trusts run.json; `train` and gc check the file itself
    cfg = root.parent / "c.json"
    cfg.write_text(json.dumps(TINY))
    rc, _, err = cli(capsys, "train", str(cfg), "--out", str(root), "--quiet")
    assert rc == 2 and "result.json" in err and "runs gc" in err
    rc, out, _ = cli(capsys, "runs", "gc", "--out", str(root), "--yes")
    assert rc == 0 and "removed 1" in out and not (root / "runs" / ids[0]).exists()
    rc, out, _ = cli(capsys, "train", str(cfg), "--out", str(root), "--quiet")
    assert rc == 0 and (root / "runs" / ids[0] / "result.json").exists()  # retrained
