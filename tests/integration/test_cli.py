"""The CLI: listing, data, training and user errors (one line, exit status 2)."""

import json
import subprocess
import sys

import pytest

from reasonlab.cli import main


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "reasonlab.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.mark.parametrize("args, needle", [
    (["run", "no-such-study"], "unknown study"),
    (["data", "lego", "n_clauses=3", "n_train_vars=5"], "n_train_vars"),
    (["data", "lego", "colour=red"], "unknown key"),
    (["data", "nope"], "unknown task"),
    (["data", "lego", "n_clauses=0"], "n_clauses"),
    (["train", "/no/such/file.json"], "cannot read config file"),
    (["run", "lego-extrapolation", "--scale", "huge"], "invalid choice"),
    (["calibrate", "no-such-family"], "no family"),
])
def test_user_errors_are_one_line_exit_2(args, needle, tmp_path):
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: "), p.stderr
    assert needle in p.stderr
    assert "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_bad_model_value_in_train_config(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": {"name": "lego"}, "model": {"d_model": 30, "n_heads": 4}}))
    assert main(["train", str(cfg), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "d_model" in err and "n_heads" in err
    assert not (tmp_path / "o").exists()


def test_calibrate_prints_one_row_per_case_of_the_family(capsys):
    from reasonlab.studies.kit.calibration import families_cases
    from reasonlab.studies.kit.calibration_engine import Sim

    assert main(["calibrate", "kit"]) in (0, None)
    out = capsys.readouterr().out.splitlines()
    [(_, cases)] = list(families_cases("kit"))
    sims = [c for c in cases if isinstance(c, Sim)]
    assert out[0].startswith("| rule | case | units (scale) | false reproduced")
    rows = out[2:]
    assert len(rows) == len(sims)
    for row, c in zip(rows, sims):
        assert row.startswith(f"| `{c.rule.__qualname__}` | {c.label or '-'} | ")
        worst = float(row.split(" | ")[3].split(" at ")[0])
        assert worst <= 0.05


def test_data_jsonl_lines_hold_text_labels_and_depth(capsys):
    assert main(["data", "lego", "n_clauses=5", "n_train_vars=3", "--n", "3", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line in lines:
        ex = json.loads(line)
        assert set(ex["labels"]) == set(ex["depth"])
        assert sorted(ex["depth"].values()) == list(range(5))
        for var, value in ex["labels"].items():
            assert f"{var} =" in ex["text"]
            assert value in ("+1", "-1")


def test_train_command_with_overrides(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
                               "model": {"d_model": 16, "n_layers": 1, "n_heads": 2,
                                         "d_mlp": 32}}))
    rc = main(["train", str(cfg), "steps=4", "eval_every=2", "ckpt_every=2", "n_train=64",
               "n_test=32", "optim.lr=0.01", "--out", str(tmp_path / "o"), "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out
    final = json.loads(out.splitlines()[0])
    assert final["step"] == 4 and len(final["acc_by_depth"]) == 3
    run = next((tmp_path / "o" / "runs").iterdir())
    saved = json.loads((run / "config.json").read_text())
    assert saved["steps"] == 4 and saved["optim"]["lr"] == 0.01


def test_studies_lists_claims(capsys):
    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "lego-extrapolation" in out and "ALBERT" in out
    # each scale's measured time (or "not measured"), long only where the study has it
    from reasonlab.studies import STUDIES

    head = {line.split("  (")[0]: line for line in out.splitlines() if "  (" in line}
    ext, anchors = STUDIES["lego-extrapolation"], STUDIES["anchors-init-phase"]
    for scale in ("cpu", "long"):  # as the family's measured.json records it
        minutes = ext.measured(scale)
        assert (f"{scale}: about {minutes:g} min on 2 cores" if minutes is not None
                else f"{scale}: not measured") in head["lego-extrapolation"]
    assert "paper: not measured (for a GPU)" in head["lego-extrapolation"]
    assert ("long" in anchors.scales) == ("long:" in head["anchors-init-phase"])


def test_a_measured_time_names_every_study_it_assumes():
    from reasonlab.cli import scale_cost
    from reasonlab.studies import STUDIES

    for name, cls in STUDIES.items():
        assert set(cls.cpu_after) <= set(STUDIES) - {name}, name

    class Study:
        cpu_after = ("fpt-init", "fpt-attention")

        @staticmethod
        def measured(scale):
            return 29.5

    assert scale_cost(Study, "cpu") == (
        "cpu: about 29.5 min on 2 cores once fpt-init and fpt-attention have run")
    Study.cpu_after = ("fpt-init",)
    assert scale_cost(Study, "cpu").endswith("once fpt-init has run")
    Study.cpu_after = ()
    assert scale_cost(Study, "cpu") == "cpu: about 29.5 min on 2 cores"


def test_data_anchors_jsonl_answers_match_the_text(capsys):
    assert main(["data", "anchors", "--n", "20", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 20  # one example a line; the loop below must have lines to check
    for line in lines:
        ex = json.loads(line)
        nums = [int(w) for w in ex["text"].split()]
        k = ex["key_pos"]
        a1, a2 = nums[k + 1], nums[k + 2]
        assert f"{a1} {a2}" == ex["pair"] and (a1, a2) != (4, 3)
        shift = -6 if (a1, a2) == (3, 4) else [5, 1, -2, -8][a1 - 1] + [5, 1, -2, -8][a2 - 1]
        assert int(ex["labels"]["answer"]) == nums[k] + shift
    p = run_cli("data", "anchors", "held_out=[[9,9]]")
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "outside" in p.stderr
