"""`reasonlab run STUDY key=value --device D --dtype T` and `reasonlab studies --scale S`:
overrides reach every run (config, id, report), bad ones end in one error line; the cost table
agrees with FLOPs counted by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reasonlab.cli import main
from reasonlab.runs import config_id
from reasonlab.studies import STUDIES
from reasonlab.studies.kit.core import override, overridden


LEGO = "lego-extrapolation"
KERNEL = "symbols-kernel"  # trains nothing: its overrides reach what it computes


@pytest.mark.parametrize("study, args, needle", [
    (LEGO, ["colour=red"], "unknown key 'colour'"),
    (LEGO, ["steps=0"], "steps"),
    (LEGO, ["optim.lr=-1"], "optim.lr"),
    (LEGO, ["mimic.steps=3"], "no run of this study has a mimic section"),
    (LEGO, ["seed=3"], "--seeds"),
    (LEGO, ["steps"], "not key=value"),
    (LEGO, ["--dtype", "fp16"], "invalid choice"),
    (KERNEL, ["steps=2"], "unknown key 'steps'"),  # a training key
    (KERNEL, ["model.colour=red"], "unknown key 'model.colour'"),
    (KERNEL, ["n_inits=0"], "n_inits"),
    (KERNEL, ["model.d_model=7"], "not divisible"),
    (KERNEL, ["--dtype", "bf16"], "unknown key 'dtype'"),
])
def test_bad_overrides_are_one_line_exit_2(study, args, needle, tmp_path):
    p = subprocess.run([sys.executable, "-m", "reasonlab.cli", "run", study,
                        "--scale", "smoke", *args], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: "), p.stderr
    assert needle in p.stderr and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_overrides_change_what_the_kernel_study_computes(tmp_path, monkeypatch):
    """symbols-kernel trains nothing; its overrides reach the kernel it computes (sizes, model
    shape, alphabets, device) and the report's recipe section, as a training study's reach its
    runs."""
    import reasonlab.studies.symbols.analysis as analysis
    from reasonlab.studies import run_study

    seen = []
    real = analysis.template_kernel_matrix

    def spy(task, make_model, n_inits, n_per_template, seed=0, device="cpu"):
        seen.append((n_inits, n_per_template, make_model(0).config.d_model,
                     task.config.n_test_symbols, str(device)))
        return real(task, make_model, n_inits, n_per_template, seed, device)

    monkeypatch.setattr(analysis, "template_kernel_matrix", spy)
    over = {"n_inits": 1, "n_per_template": 4, "model": {"d_model": 8, "d_mlp": 16},
            "task": {"n_test_symbols": 20}, "device": "cpu"}
    report, out = run_study("symbols-kernel", "smoke", out=tmp_path, quiet=True,
                            overrides=over)
    assert seen and set(seen) == {(1, 4, 8, 20, "cpu")}
    text = (out / "report.md").read_text()
    assert out.name.startswith("smoke-")  # not the study's own smoke report
    assert "## Recipe overrides" in text and "`n_inits=1`" in text
    assert "d_model 8;" in text and "1 initializations, 4 examples per template" in text
    seen.clear()  # without overrides: the smoke recipe's own sizes
    run_study("symbols-kernel", "smoke", out=tmp_path, quiet=True)
    assert set(seen) == {(2, 16, 16, 50, "cpu")}


def test_overrides_reach_every_run_its_id_and_the_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "lego-extrapolation", "--scale", "smoke", "steps=3", "eval_every=1",
                 "ckpt_every=1", "optim.lr=0.002", "optim.warmup_steps=0", "n_test=24",
                 "--device", "cpu",
                 "--dtype", "fp32", "--quiet"]) == 0
    (report,) = (tmp_path / "reasonlab-out" / "lego-extrapolation").iterdir()
    assert report.name.startswith("smoke-")  # not the study's own smoke report
    text = (report / "report.md").read_text()
    assert "## Recipe overrides" in text and "`steps=3`" in text and "`device=\"cpu\"`" in text
    # the analyses' fresh sentences follow n_test (the study asks for 500 and 4,000)
    assert "Fraction of 24 fresh test sentences" in text and "24 fresh sentences" in text
    specs = STUDIES["lego-extrapolation"]().runs("smoke", 1)
    runs = sorted(p.name for p in (tmp_path / "reasonlab-out" / "runs").iterdir())
    assert len(runs) == len(specs) and not {config_id(s.config) for s in specs} & set(runs)
    for r in runs:
        saved = json.loads((tmp_path / "reasonlab-out" / "runs" / r / "config.json").read_text())
        assert (saved["steps"], saved["optim"]["lr"], saved["device"], saved["dtype"],
                saved["n_test"]) == (3, 0.002, "cpu", "fp32", 24)
    assert json.loads((report / "study.json").read_text())["overrides"]["steps"] == 3


def test_override_keeps_everything_else_and_reaches_pretraining_runs():
    specs = STUDIES["artificial-pretraining"]().runs("smoke", 1)
    fine = next(s.config for s in specs if s.config.init_run is not None)
    assert config_id(override(fine, {})) == config_id(fine)
    assert config_id(override(fine, {"device": fine.device})) == config_id(fine)
    small = override(fine, {"steps": 2, "init_from": {"n_train": 64}})
    assert small.steps == 2 and small.init_run.steps == 2 and small.init_run.n_train == 64
    assert small.n_train == fine.n_train and small.task == fine.task
    assert small.model.max_seq_len == fine.model.max_seq_len  # derived from the task again


def test_overridden_runs_keep_their_factors():
    """The analyses select and group runs by their factors (FPT: task, backbone, lr): an
    overridden run keeps them, so a trial's report reads like the study's own."""
    specs = STUDIES["fpt-universal"]().runs("smoke", 1)
    over = overridden(specs, {"steps": 2})
    assert [s.factors for s in over] == [s.factors for s in specs]
    assert any(s.factors.get("task") for s in over)
    assert all(s.config.steps == 2 for s in over)


def test_studies_scale_paper_prints_runs_flops_and_hours(capsys):
    assert main(["studies", "--scale", "paper"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| lego-extrapolation |"))
    (_, name, runs, flops, gpu, bound, launch, checkpoints, disk, peak, slim, cpu, measured,
     _) = [c.strip() for c in row.split("|")]
    assert runs == "6"  # 2 models x 3 seeds
    # by hand: BERT-base, 12 layers of 12 d^2 + 13 d parameters (+ the read-out), seq 62,
    # 24,000 steps of batch 1000; 6 N per token plus 12 L T d for attention; the 40
    # evaluations of 12,000 sentences cost a third per token
    d, L, T = 768, 12, 62
    per_token = 6 * (L * (12 * d * d + 13 * d)) + 12 * L * T * d
    train = 24_000 * 1000 * T * per_token
    evals = 40 * 12_000 * T * per_token / 3
    assert float(flops) == pytest.approx(6 * (train + evals), rel=0.02)
    assert gpu.endswith("h") and "H100" in out and "40%" in out
    assert measured == "-"  # the paper scale is for a GPU: never measured on the 2 cores
    # BERT-base is FLOP-bound; FPT's batches of 4 through 30 SmolLM2 layers are launch-bound
    assert bound == "FLOPs" and launch.endswith("min") and disk.endswith("GB")
    # 3 BERT-base and 3 ALBERT runs (one layer's weights, shared) of 24,000 steps,
    # checkpointed every 1,200: 20 checkpoints each, 19 with Adam's moments (3 x 4 bytes per
    # parameter) and the last without (4 bytes); each run keeps its last, and at the worst a
    # BERT run trains last: two of its mid-run checkpoints lie beside the others' last ones
    bert = 4 * L * (12 * d * d + 13 * d)  # bytes of its layers' weights, ~all it keeps
    albert = bert / L
    gb = {k: float(v.split()[0]) * 1e9 for k, v in (("disk", disk), ("peak", peak),
                                                    ("written", checkpoints.split("(")[1]))}
    assert checkpoints.startswith("120 (")
    assert gb["written"] == pytest.approx(3 * (19 * 3 + 1) * (bert + albert), rel=0.05)
    assert gb["disk"] == pytest.approx(3 * (bert + albert), rel=0.05)
    assert gb["peak"] == pytest.approx(gb["disk"] - bert + 2 * 3 * bert, rel=0.05)
    assert slim == "-"  # its analysis reads the models: no keep_checkpoints=none
    symbols = next(line for line in out.splitlines()
                   if line.startswith("| symbols-mlp-vs-transformer |"))
    cells = [c.strip() for c in symbols.split("|")]
    assert cells[10].endswith("GB") and float(cells[10].split()[0]) < 64 * 2**30 / 1e9 < float(
        cells[9].split()[0])  # over a 64 GiB disk, under it with keep_checkpoints=none
    fpt = next(line for line in out.splitlines() if line.startswith("| fpt-universal |"))
    cells = [c.strip() for c in fpt.split("|")]
    assert cells[5] == "launches" and cells[4] == cells[6]  # the GPU time is the floor
    assert "launch floor" in out and "10 us" in out


def test_studies_scale_long_lists_only_the_studies_that_define_it(capsys):
    from reasonlab.studies import STUDIES

    assert main(["studies", "--scale", "long"]) == 0
    out = capsys.readouterr().out
    listed = {line.split("|")[1].strip() for line in out.splitlines()
              if line.startswith("| ") and not line.startswith("| study")
              and not line.startswith("| all studies")}
    assert listed == {n for n, cls in STUDIES.items() if "long" in cls.scales}
    assert "lego-extrapolation" in listed and "symbols-mlp-vs-transformer" not in listed
    row = next(line for line in out.splitlines() if line.startswith("| lego-extrapolation |"))
    measured = row.split("|")[12].strip()
    minutes = STUDIES["lego-extrapolation"].measured("long")
    assert measured == ("-" if minutes is None else f"{minutes:g} min")
