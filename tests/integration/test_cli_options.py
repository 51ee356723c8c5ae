"""Options every `reasonlab` command shares: --version (the package's own version, the one
pyproject.toml gives), `python -m reasonlab`, and --store, the one name of the store (the folder
holding runs/) in every command that reads or writes one, --out staying its alias where it was
the name."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from reasonlab import __version__
from reasonlab.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 32, "n_test": 16, "batch_size": 16, "steps": 2, "eval_every": 2,
        "ckpt_every": 2}


def test_version_is_the_package_s_and_python_m_reasonlab_is_the_command():
    assert __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "version"]
    p = subprocess.run([sys.executable, "-m", "reasonlab", "--version"], capture_output=True,
                       text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert (p.returncode, p.stdout) == (0, f"reasonlab {__version__}\n"), p.stderr
    p = subprocess.run([sys.executable, "-m", "reasonlab", "nope"], capture_output=True,
                       text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "Traceback" not in p.stderr


def test_store_is_one_name_in_every_command_that_has_a_store(tmp_path, capsys):
    """--store DIR and --out DIR give the same store to train, runs (and its actions), run and
    sweep; claims, site and readme name it --store already."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps(TINY))
    assert main(["train", str(config), "--store", str(tmp_path / "a"), "--quiet"]) == 0
    run_id = capsys.readouterr().out.split("runs/")[-1].strip()
    assert (tmp_path / "a" / "runs" / run_id / "result.json").is_file()
    for flag in ("--store", "--out"):
        assert main(["runs", flag, str(tmp_path / "a")]) == 0
        assert run_id in capsys.readouterr().out
        assert main(["runs", "show", run_id[:6], flag, str(tmp_path / "a")]) == 0
        assert run_id in capsys.readouterr().out
    parser = build_parser()
    for command in (["run", "lego-probes"], ["sweep", "c.json"], ["train", "c.json"],
                    ["claims"], ["site"], ["readme"], ["runs"], ["runs", "gc"]):
        args = parser.parse_args([*command, "--store", "/x/y"])
        assert Path(getattr(args, "out" if command[0] in ("run", "sweep", "train", "runs")
                            else "store")) == Path("/x/y"), command
    # the default stays where it was when neither is given
    assert parser.parse_args(["train", "c.json"]).out == Path("reasonlab-out")
    assert parser.parse_args(["run", "lego-probes"]).out is None
