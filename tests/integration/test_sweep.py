"""`reasonlab sweep`: a grid over a train config, sharing the run store; table and figure."""

from __future__ import annotations

import json
import statistics

from reasonlab.cli import main
from reasonlab.sweep import parse_axes, split_values

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


def test_axis_values_split_outside_brackets():
    assert split_values('1,2,[1,2],"a,b"') == ["1", "2", "[1,2]", '"a,b"']
    (a,) = parse_axes(["model.depth_range=[1,2],[2,3]"])
    assert a.values == ([1, 2], [2, 3])


def test_sweep_table_figure_and_reuse(tmp_path, capsys):
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))
    out = tmp_path / "o"
    argv = ["sweep", str(cfg), "optim.lr=0.001,0.01", "optim.schedule=cosine,constant",
            "--seeds", "2", "--out", str(out), "--workers", "1", "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| optim.lr | optim.schedule | seeds | final acc |" in printed
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 8  # 2 x 2 cells x 2 seeds
    (folder,) = (out / "sweeps").iterdir()  # its own folder under --out
    data = json.loads((folder / "sweep.json").read_text())
    cell = data["cells"][0]
    assert cell["values"] == {"optim.lr": 0.001, "optim.schedule": "cosine"}
    accs = [json.loads((out / "runs" / i / "result.json").read_text())["final"]["acc"]
            for i in cell["runs"]]
    assert abs(cell["acc"]["mean"] - statistics.mean(accs)) < 1e-12
    assert abs(cell["acc"]["std"] - statistics.stdev(accs)) < 1e-12
    assert f"{statistics.mean(accs):.4f} ± {statistics.stdev(accs):.4f}" in printed
    assert (folder / "sweep.png").read_bytes()[:4] == b"\x89PNG" and "sweep.png" in (
        folder / "sweep.md").read_text()
    # run again with one more lr: only the new cell trains, the others are reused untouched
    stamps = {p.name: (p / "result.json").stat().st_mtime_ns for p in runs}
    assert main([*argv[:2], "optim.lr=0.001,0.01,0.003", *argv[3:]]) == 0
    capsys.readouterr()
    after = {p.name: p for p in (out / "runs").iterdir()}
    assert len(after) == 12
    assert all((after[k] / "result.json").stat().st_mtime_ns == v for k, v in stamps.items())
    # the second sweep wrote its own folder: the first one's table is still there, unchanged
    folders = sorted((out / "sweeps").iterdir())
    assert len(folders) == 2 and json.loads((folder / "sweep.json").read_text()) == data


def test_non_numeric_sweep_has_no_figure(tmp_path, capsys):
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))
    assert main(["sweep", str(cfg), "optim.schedule=cosine,constant", "--out",
                 str(tmp_path / "o"), "--workers", "1", "--quiet"]) == 0
    assert "figure" not in capsys.readouterr().out
    assert not list((tmp_path / "o").rglob("sweep.png"))


def test_large_grid_asks_first(tmp_path):
    import pytest

    from reasonlab.errors import ConfigError
    from reasonlab.sweep import run_sweep

    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))
    asked = []
    with pytest.raises(ConfigError, match="cancelled"):
        run_sweep(cfg, ["steps=4,6,8,10,12,14,16,18,20", "optim.lr=0.1,0.2,0.3,0.4"], seeds=2,
                  out=tmp_path / "o", quiet=True, ask=lambda q: asked.append(q) or "n")
    assert "72 runs" in asked[0] and not (tmp_path / "o").exists()


def test_single_values_override_and_are_no_axis(tmp_path, capsys):
    """`key=v` with one value overrides the config: it is neither a table column nor a figure
    axis, and the report names it as fixed; one seed prints no ± 0."""
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))
    out = tmp_path / "o"
    assert main(["sweep", str(cfg), "optim.lr=0.001,0.01", "steps=6", "optim.schedule=constant",
                 "--out", str(out), "--workers", "1", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "| optim.lr | seeds | final acc |" in printed and "±" not in printed
    (folder,) = (out / "sweeps").iterdir()
    data = json.loads((folder / "sweep.json").read_text())
    assert data["axes"] == {"optim.lr": [0.001, 0.01]}
    assert data["fixed"] == {"steps": 6, "optim.schedule": "constant"}
    md = (folder / "sweep.md").read_text()
    assert "Fixed: `steps=6`, `optim.schedule=\"constant\"`" in md and "1 seed;" in md
    for cell in data["cells"]:
        (run,) = cell["runs"]
        config = json.loads((out / "runs" / run / "config.json").read_text())
        assert config["steps"] == 6 and config["optim"]["schedule"] == "constant"
