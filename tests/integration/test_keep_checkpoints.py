"""keep_checkpoints="none": a run holds one checkpoint at a time, the newest (its resume point),
and once finished keeps its metrics alone. A run killed at any point resumes to the metrics of
a run never interrupted; the finished run keeps no weights, and every reader of weights says
so in one line; a study that reads weights refuses the option before anything trains."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

import reasonlab.train.loop as loop
from reasonlab.cli import main
from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.runs import execute, load_result, load_run_model, run_dir_for
from reasonlab.train.checkpoint import RECORD_BYTES, WEIGHTS_KEPT, checkpoint_sizes
from reasonlab.train.config import TrainConfig, config_id


def small(**over) -> TrainConfig:
    """The resume test's run of test_train.py: dropout and stochastic depth draw on the RNGs
    a resume restores."""
    base = dict(task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
                model=dict(d_model=32, n_layers=2, n_heads=2, d_mlp=64, dropout=0.1,
                           tie_layers=True, depth_range=[1, 2]),
                optim=dict(lr=3e-3, warmup_steps=5), n_train=512, n_test=128, batch_size=32,
                steps=40, eval_every=10, ckpt_every=10)
    return TrainConfig.build({**base, **over})


class Killed(Exception):
    pass


def checkpoint_folders(run_dir) -> list[str]:
    """Every checkpoint folder in the run: ckpt/, and a previous or half-written one."""
    return sorted(p.name for p in run_dir.iterdir() if p.is_dir() and "ckpt" in p.name)


def test_a_killed_run_resumes_bitwise_and_keeps_no_weights(tmp_path, monkeypatch):
    full = train_watched(small(), tmp_path / "full", monkeypatch)[0]  # keeps its weights
    config = small(keep_checkpoints="none")

    real = loop.slot_loss
    calls = {"n": 0}

    def dying(logits, batch, *rest):  # killed in step 25, after the checkpoint of step 20
        calls["n"] += 1
        if calls["n"] == 26:
            raise Killed
        return real(logits, batch, *rest)

    monkeypatch.setattr(loop, "slot_loss", dying)
    run = tmp_path / "none"
    with pytest.raises(Killed):
        loop.train(config, run, quiet=True)
    assert checkpoint_folders(run) == ["ckpt"]  # one checkpoint: the resume point
    mid = load_file(str(run / "ckpt" / "state.safetensors"))
    assert any(k.startswith("model.") for k in mid) and any(k.startswith("optim.") for k in mid)
    monkeypatch.setattr(loop, "slot_loss", real)

    resumed, seen = train_watched(config, run, monkeypatch)
    assert seen == [(30, True), (40, False)]  # resumed at 20; weights until the last
    assert resumed == full
    assert (run / "metrics.jsonl").read_bytes() == (tmp_path / "full" / "metrics.jsonl"
                                                    ).read_bytes()
    last = load_file(str(run / "ckpt" / "state.safetensors"))
    assert not any(k.startswith(("model.", "optim.")) for k in last)
    meta = json.loads((run / "ckpt" / "state.json").read_text())
    assert meta[WEIGHTS_KEPT] is False and meta["step"] == 40
    size = sum(p.stat().st_size for p in (run / "ckpt").iterdir())
    assert size <= RECORD_BYTES < checkpoint_sizes(small()).kept

    # killed after its last checkpoint, before the result: the resume trains nothing and
    # returns the last evaluation, as a run that kept its weights does
    monkeypatch.setattr(loop, "slot_loss", lambda *a: pytest.fail("a finished run trained"))
    assert loop.train(config, run, quiet=True) == full


def train_watched(config: TrainConfig, run_dir, monkeypatch) -> tuple[dict, list]:
    """train(), with each checkpoint it writes seen as it lands: (step, holds weights), and
    the run's folders then hold that one checkpoint alone."""
    seen = []
    real = loop.save_checkpoint

    def watched(run, step, *args, **kw):
        real(run, step, *args, **kw)
        assert checkpoint_folders(run) == ["ckpt"], f"step {step}: more than one checkpoint"
        tensors = load_file(str(run / "ckpt" / "state.safetensors"))
        seen.append((step, any(k.startswith("model.") for k in tensors)))

    monkeypatch.setattr(loop, "save_checkpoint", watched)
    try:
        return loop.train(config, run_dir, quiet=True), seen
    finally:
        monkeypatch.setattr(loop, "save_checkpoint", real)


def test_a_finished_run_without_weights_is_reused_and_its_readers_refuse_in_one_line(
        tmp_path, capsys):
    kept, none = small(steps=20), small(steps=20, keep_checkpoints="none")
    a, b = execute(kept, tmp_path, quiet=True), execute(none, tmp_path, quiet=True)
    assert a["final"] == b["final"] and a["curve"] == b["curve"]
    run = run_dir_for(none, tmp_path)
    assert run != run_dir_for(kept, tmp_path)  # its own folder: no reader expecting weights
    assert load_result(run) is not None  # verified whole: checksums, the record
    assert execute(none, tmp_path, quiet=True) == b  # reused, not trained again
    with pytest.raises(CheckpointError, match="kept no weights.*keep_checkpoints=none"):
        load_run_model(run)
    assert torch.is_tensor(next(iter(load_run_model(run_dir_for(kept, tmp_path))[1]
                                     .parameters())))
    assert main(["export", str(run), "--out", str(tmp_path / "hf")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: run ") and "kept no weights" in err[0]
    assert main(["runs", "--store", str(tmp_path), "verify"]) == 0


def test_the_option_enters_the_id_only_when_set():
    assert config_id(small(keep_checkpoints="last")) == config_id(small())
    assert "keep_checkpoints" not in small().model_dump(mode="json")
    assert config_id(small(keep_checkpoints="none")) != config_id(small())


def test_a_pretraining_run_keeps_its_weights():
    pre = {"task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2},
           "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32}, "steps": 2,
           "eval_every": 2, "ckpt_every": 2}
    run = {**pre, "init_from": {**pre, "keep_checkpoints": "none"}}
    with pytest.raises(ConfigError, match="init_from.keep_checkpoints=last"):
        TrainConfig.build(run)
    TrainConfig.build({**run, "init_from": pre, "keep_checkpoints": "none"})  # the run: may


@pytest.mark.parametrize("study", ["lego-probes", "artificial-pretraining"])
def test_a_study_that_reads_weights_refuses_the_option(study, tmp_path, capsys):
    """Probes read the models' layers; the artificial study scores its fine-tuned models (and
    its runs start from pretraining runs, whose own refusal would come second)."""
    from reasonlab.studies import STUDIES

    if why := STUDIES[study].missing():
        pytest.skip(why)
    assert STUDIES[study].reads_weights
    for dry in (["--dry-run"], []):
        assert main(["run", study, "--scale", "smoke", "--out", str(tmp_path),
                     "keep_checkpoints=none", *dry]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: study {study} reads its runs' "
                                                   "weights"), err
    assert not (tmp_path / "runs").exists()


def test_a_study_that_reads_metrics_alone_runs_without_weights(tmp_path, monkeypatch):
    """symbols-mlp-vs-transformer says reads_weights = False: its whole smoke scale trains and
    is judged with keep_checkpoints=none, no model ever loaded, no weights left in the store."""
    import reasonlab.train.init_stages as init_stages
    from reasonlab.studies import STUDIES, run_study

    assert not STUDIES["symbols-mlp-vs-transformer"].reads_weights

    def refused(*a, **k):
        raise AssertionError("the analysis loaded a model")

    monkeypatch.setattr(init_stages, "read_model_weights", refused)
    report, folder = run_study("symbols-mlp-vs-transformer", "smoke", out=tmp_path, quiet=True,
                               workers=1, overrides={"keep_checkpoints": "none"})
    assert len(report.verdicts) == 3
    # only the disk changed: the report is the scale's, which `reasonlab readme` reads
    assert folder == tmp_path / "symbols-mlp-vs-transformer" / "smoke"
    runs = list((tmp_path / "runs").iterdir())
    assert runs and all(
        not any(k.startswith("model.") for k in load_file(str(r / "ckpt" / "state.safetensors")))
        for r in runs if r.is_dir())
