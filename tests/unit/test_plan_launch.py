"""The plan's launch floor and disk (plan.py, train/checkpoint.py checkpoint_bytes), and the
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
from reasonlab.train.checkpoint import checkpoint_bytes
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
                                    lego(positions="rotary", norm_position="pre"), fpt()],
                         ids=["bert", "albert", "gqa", "rotary-pre", "fpt"])
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


def test_disk_is_what_a_trained_run_writes(tmp_path):
    """checkpoint_bytes against the final checkpoint's tensors on disk: every weight, or the
    trained ones alone where the frozen part is rebuilt (a few bytes of header aside)."""
    from safetensors.torch import load_file

    from reasonlab.runs import execute, run_dir_for

    for cfg in (fpt(), fpt(trainable=None), lego(n_layers=1, d_model=16, n_heads=2)):
        cfg = cfg.model_copy(update={"steps": 2, "eval_every": 2, "ckpt_every": 2})
        execute(cfg, tmp_path, quiet=True)
        tensors = load_file(str(run_dir_for(cfg, tmp_path) / "ckpt" / "state.safetensors"))
        written = sum(t.numel() * t.element_size() for k, t in tensors.items()
                      if k.startswith("model."))
        final, during = checkpoint_bytes(cfg)
        assert final == written, cfg.trainable
        assert during > 2 * final
    slim, full = checkpoint_bytes(fpt())[0], checkpoint_bytes(fpt(trainable=None))[0]
    assert slim < full / 2


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
