"""The plan's launch floor and disk (plan.py, train/checkpoint.py checkpoint_sizes), and the
executors' GPU sharing and disk check, without a GPU: op counts against direct counts of the
deep and wide model, sizes against what a trained run writes, CUDA queries faked."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import torch

from reasonlab import plan
from reasonlab.errors import ConfigError
from reasonlab.train.config import TrainConfig


def lego(**model: Any) -> TrainConfig:
    return TrainConfig.build({
        "task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2},
        "model": {"d_model": 32, "n_layers": 4, "n_heads": 4, "d_mlp": 64, **model},
        "n_train": 64, "n_test": 32, "batch_size": 8, "steps": 100, "eval_every": 50,
        "eval_batch_size": 16})


def fpt(**over: Any) -> TrainConfig:
    return TrainConfig.build({"task": {"name": "bit_xor", "n_bits": 5},
                              "model": {"arch": "fpt", "d_model": 32, "n_layers": 3,
                                        "n_heads": 4, "d_mlp": 64},
                              "trainable": "fpt", "n_train": 48, "n_test": 16, "batch_size": 8,
                              "steps": 8, "eval_every": 4, **over})


def direct_count(config: TrainConfig) -> tuple[int, int]:
    """A training step and an evaluation forward of the model as it is (full width and
    depth), counted as plan._count counts, without narrowing or extrapolating."""
    from reasonlab.model import MODELS
    from reasonlab.train.metrics import model_inputs, slot_loss

    cfg = config.model
    model = MODELS[cfg.arch.name](cfg)
    if config.trainable is not None:
        config.trainable.apply(model)
    data = plan._batch(cfg, 2)
    model.eval()
    with plan._OpCount() as c, torch.no_grad():
        model(data.tokens, data.label_pos, data.pad_mask, **model_inputs(data)).argmax(-1)
    evaluation = sum(c.ops.values())
    model.train()
    with plan._OpCount() as c:
        b = data[torch.arange(2)]
        slot_loss(model(b.tokens, b.label_pos, b.pad_mask, depth=cfg.n_layers,
                        **model_inputs(b)), b, sync_free=True).backward()
    n = sum(1 for p in model.parameters() if p.requires_grad)
    return sum(c.ops.values()) + 3 * -(-n // 110) + 6, evaluation


@pytest.mark.parametrize("config", [lego(), lego(tie_layers=True), lego(n_kv_heads=2),
                                    lego(positions="rotary", norm_position="pre"), fpt(),
                                    lego(init="torch_default", dropout=0.3, ln_eps=1e-5)],
                         ids=["bert", "albert", "gqa", "rotary-pre", "fpt", "init-dropout"])
def test_counts_from_two_narrow_layers_equal_the_deep_wide_model(config):
    ops = plan.ops_per_step(config)
    assert (ops.train, ops.evaluate) == direct_count(config)


def test_fpt_at_paper_shapes_is_launch_bound():
    """12 GPT-2 layers (the paper's backbone) at batch 4: hundreds of kernel-launching ops a
    step, far more time at 10 us each than its FLOPs take."""
    from reasonlab.studies import STUDIES

    config = STUDIES["fpt-universal"]().runs("paper", 1)[0].config
    assert config.init_checkpoint == "gpt2"
    assert config.model.n_layers == 12 and config.batch_size == 4
    ops = plan.ops_per_step(config)
    assert 12 * 30 < ops.train < 12 * 120  # tens of ops per layer, forward and backward
    cost = plan.study_cost([config])
    assert cost.bound == "launches" and cost.gpu_hours == pytest.approx(cost.launch_hours)
    assert cost.launch_hours > 5 * cost.flop_hours


def test_a_wide_model_is_flop_bound_and_the_floor_is_counted():
    cfg = lego(d_model=2048, d_mlp=8192, n_heads=16).model_copy(update={"batch_size": 4096})
    cost = plan.study_cost([cfg])
    ops = plan.ops_per_step(cfg)
    evals = 2 * 2  # 2 evaluations of 2 batches of 16
    assert cost.launch_s == pytest.approx((100 * ops.train + evals * ops.evaluate)
                                          * plan.PER_OP_SECONDS)
    assert cost.bound == "FLOPs"
    assert cost.gpu_hours == pytest.approx(cost.flop_hours + cost.optimizer_s / 3600)


def test_disk_is_what_a_trained_run_writes(tmp_path, monkeypatch):
    """checkpoint_sizes against what trained runs write, measured on disk: how many
    checkpoints, the tensors of each as it lands (weights and Adam's moments before the last
    step; at the end the weights alone, or nothing with keep_checkpoints="none"), and the most
    tensor bytes of checkpoint folders at once, seen at every rename (the new checkpoint
    beside the one it replaces); every weight, or the trained ones alone where a frozen part
    is rebuilt."""
    from pathlib import Path

    from safetensors.torch import load_file

    import reasonlab.train.loop as loop
    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train.checkpoint import RECORD_BYTES, checkpoint_sizes

    def tensor_bytes(folder: Path) -> int:
        """Weights and moments: what checkpoint_sizes counts (not the RNG state, the step
        counters and the headers, a few kB)."""
        f = folder / "state.safetensors"
        if not f.is_file():
            return 0
        return sum(t.numel() * t.element_size() for k, t in load_file(str(f)).items()
                   if k.startswith("model.") or k.endswith((".exp_avg", ".exp_avg_sq")))

    def on_disk(run: Path) -> int:
        return sum(tensor_bytes(d) for d in run.iterdir() if d.is_dir() and "ckpt" in d.name)

    written: list[int] = []
    at_once = [0]
    real_save, real_replace = loop.save_checkpoint, os.replace

    def save(run, *args, **kw):
        real_save(run, *args, **kw)
        written.append(tensor_bytes(run / "ckpt"))

    def replace(src, dst):
        folder = Path(dst).parent
        if Path(dst).name in ("ckpt", ".ckpt.old"):
            at_once[0] = max(at_once[0], on_disk(folder))
        real_replace(src, dst)

    monkeypatch.setattr(loop, "save_checkpoint", save)
    monkeypatch.setattr(os, "replace", replace)
    for keep in ("last", "none"):
        for cfg in (fpt(), fpt(trainable=None), lego(n_layers=1, d_model=16, n_heads=2)):
            for steps in (8, 4, 2):  # 3, 1 and no checkpoints before the last step
                cfg = cfg.model_copy(update={"steps": steps, "eval_every": 2, "ckpt_every": 2,
                                             "keep_checkpoints": keep})
                written.clear()
                at_once[0] = 0
                execute(cfg, tmp_path, quiet=True)
                sizes = checkpoint_sizes(cfg)
                assert len(written) == sizes.writes == steps // 2
                # Adam keeps no moments of a trained parameter that never gets a gradient
                # (the small FPT loses 512 bytes so): the count is an upper bound, within 1%
                close = pytest.approx(sizes.mid, rel=0.01)
                assert all(w == close and w <= sizes.mid for w in written[:-1])
                mids = sum(written[:-1])
                if keep == "last":
                    assert written[-1] == sizes.kept
                    assert mids + sizes.kept == pytest.approx(sizes.written, rel=0.01)
                    assert at_once[0] == pytest.approx(sizes.peak, rel=0.01)
                    assert at_once[0] <= sizes.peak, (cfg.trainable, steps)
                else:  # the record: no tensors, its few kB counted as RECORD_BYTES
                    assert written[-1] == 0 and sizes.kept == RECORD_BYTES
                    assert mids + RECORD_BYTES == pytest.approx(sizes.written, rel=0.01)
                    assert sizes.peak - RECORD_BYTES - 0.01 * sizes.peak <= at_once[0]
                    assert at_once[0] <= sizes.peak
    assert checkpoint_sizes(fpt()).kept < checkpoint_sizes(fpt(trainable=None)).kept / 2

    # a mimicking run also keeps its step-0 model, init/ (every weight), whatever it keeps of
    # its checkpoints
    mimic = TrainConfig.build({**lego(n_layers=1, d_model=16, n_heads=2).model_dump(mode="json"),
                               "steps": 2, "eval_every": 2, "ckpt_every": 2,
                               "keep_checkpoints": "none", "mimic": {"steps": 1, "batch_size": 4}})
    execute(mimic, tmp_path, quiet=True)
    init = load_file(str(run_dir_for(mimic, tmp_path) / "init" / "state.safetensors"))
    sizes = checkpoint_sizes(mimic)
    assert sum(t.numel() * t.element_size() for t in init.values()) == pytest.approx(
        sizes.initial, rel=0.05)
    assert sizes.kept == sizes.initial + RECORD_BYTES


def test_a_study_needs_its_runs_kept_checkpoints_and_the_worst_run_training():
    """study_cost's disk: what every run keeps, plus the one training at its most (its two
    newest checkpoints side by side), the worst run last; every checkpoint counted."""
    from reasonlab.train.checkpoint import checkpoint_sizes

    runs = [lego(), lego(d_model=64), fpt(steps=8, eval_every=2, ckpt_every=2)]
    sizes = [checkpoint_sizes(c) for c in runs]
    cost = plan.study_cost(runs, launches=False)
    assert cost.disk == sum(s.kept for s in sizes)
    assert cost.peak == max(cost.disk - s.kept + s.peak for s in sizes)
    assert cost.checkpoints == sum(s.writes for s in sizes) == 1 + 1 + 4
    assert cost.written == sum(s.written for s in sizes)
    slim = plan.study_cost([c.model_copy(update={"keep_checkpoints": "none"}) for c in runs],
                           launches=False)
    assert slim.disk < cost.disk / 10 and slim.checkpoints == cost.checkpoints


@pytest.fixture
def gpus(monkeypatch):
    def fake(n: int) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return fake


def test_several_runs_share_each_gpu(gpus, monkeypatch):
    from reasonlab.execution import RUNS_PER_GPU, local_workers, ray_resources

    gpus(2)
    runs = [lego() for _ in range(10)]
    assert local_workers(runs, None) == (2, ["0", "1"])
    assert ray_resources(lego().model_copy(update={"device": "cuda"}), 2)["num_gpus"] == 1
    monkeypatch.setenv(RUNS_PER_GPU, "3")
    assert local_workers(runs, None) == (6, ["0", "1"])  # workers k % 2 pinned to GPU k % 2
    assert local_workers(runs[:4], None) == (4, ["0", "1"])
    cuda, cpu = (lego().model_copy(update={"device": d}) for d in ("cuda", "cpu"))
    assert ray_resources(cuda, 2) == {"num_cpus": 0, "num_gpus": 1 / 3}
    assert ray_resources(cpu, 2) == {"num_cpus": 1, "num_gpus": 0}
    monkeypatch.setenv(RUNS_PER_GPU, "0")
    with pytest.raises(ConfigError, match="REASONLAB_RUNS_PER_GPU"):
        local_workers(runs, None)


def test_the_cli_flag_sets_the_sharing(monkeypatch, capsys):
    from reasonlab.cli import main
    from reasonlab.execution import RUNS_PER_GPU

    monkeypatch.setenv(RUNS_PER_GPU, "1")  # so that the test's end restores the environment
    assert main(["run", "lego-extrapolation", "--runs-per-gpu", "0"]) == 2
    assert "--runs-per-gpu 0 must be at least 1" in capsys.readouterr().err
    from reasonlab.cli import share_gpus

    share_gpus(4)
    assert os.environ[RUNS_PER_GPU] == "4"


def test_a_store_without_room_stops_before_training(tmp_path, monkeypatch, capsys):
    """`reasonlab train` / `run`: one line naming the need and the free space, nothing
    written; with room, the same command trains."""
    import shutil

    from reasonlab import execution
    from reasonlab.cli import main

    class Usage:
        free = 1000  # bytes

    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage)
    cfg = lego(n_layers=1, d_model=16, n_heads=2)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(cfg.model_dump(mode="json")))
    assert main(["train", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the 1 runs left to train need about "), err
    assert "GB are free" in err[0]
    assert not (tmp_path / "out" / "runs").exists()
    with pytest.raises(ConfigError, match="left to train"):
        execution.execute_all([cfg, cfg], tmp_path / "out", quiet=True)
    Usage.free = 10**12
    assert main(["train", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0


def test_the_optimizers_memory_traffic_is_priced():
    """A wide MLP with few tokens: its AdamW step moves 32 bytes per parameter each step."""
    cfg = lego(d_model=2048, d_mlp=8192, n_heads=16)
    cost = plan.study_cost([cfg])
    n = plan.trained_params(cfg)
    assert cost.optimizer_s == pytest.approx(100 * n * 32 / plan.H100_HBM_BYTES_PER_S)
    assert cost.gpu_s == pytest.approx(max(cost.launch_s, cost.flop_hours * 3600
                                           + cost.optimizer_s))
    frozen = fpt()
    assert plan.trained_params(frozen) < sum(
        p.numel() for p in plan.meta(frozen).parameters()) / 2  # the FPT groups only


def test_with_room_on_disk_a_huge_model_still_fails_on_memory(tmp_path, monkeypatch, capsys):
    """The disk check passing, an impossible size is the allocator's one line, as before."""
    import shutil

    from reasonlab.cli import main

    class Usage:
        free = 10**18

    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(lego(n_layers=1).model_dump(mode="json")))
    assert main(["train", str(path), "--out", str(tmp_path / "out"), "--quiet",
                 "model.d_model=1000000", "model.n_heads=1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not enough memory" in err[0], err


def test_op_counts_are_remembered_between_commands(tmp_path, monkeypatch):
    """A new command (a new OpCounts) takes the counts an earlier one saved without counting
    again; an edit to a file they are computed from, a damaged file or a plugin has them
    counted anew."""
    from reasonlab import listing, plugins

    package = tmp_path / "pkg"
    for rel in ("model/transformer.py", "train/metrics.py", "tasks/base.py", "config.py",
                "plan.py", "studies/lego/x.py"):
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text("# source\n")
    monkeypatch.setattr(listing, "PACKAGE", package)
    monkeypatch.setenv(listing.ENV, str(tmp_path / "cache"))
    counted: list[int] = []
    real = plan._count
    monkeypatch.setattr(plan, "_count", lambda c, n: counted.append(n) or real(c, n))

    def command() -> plan.Ops:
        """ops_per_step in a new command: nothing in memory, the file as saved."""
        monkeypatch.setattr(plan, "_OPS", plan.OpCounts())
        ops = plan.ops_per_step(lego())
        plan._OPS.save()
        return ops

    first = command()
    assert counted == [1, 2]  # one and two layers, extrapolated
    assert command() == first and counted == [1, 2]  # remembered
    (package / "studies/lego/x.py").write_text("# a study edited: not what ops come from\n")
    assert command() == first and counted == [1, 2]
    (package / "model/transformer.py").write_text("# the model edited\n")
    assert command() == first and counted == [1, 2, 1, 2]
    saved = list((tmp_path / "cache" / "ops").glob("*.json"))
    assert len(saved) == 2
    for path in saved:
        path.write_text(json.dumps({k: [[1.5, 2], [0, 0]] for k in json.loads(
            path.read_text())}))  # not integers: never read as counts
    assert command() == first and counted == [1, 2, 1, 2, 1, 2]
    monkeypatch.setattr(plugins, "sources", lambda: ["elsewhere"])  # code outside the files
    assert command() == first and command() == first and len(counted) == 10

