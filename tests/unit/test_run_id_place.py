"""A run's id knows where it computes: a CPU fp32 run and a GPU bf16 run of one config (device
and dtype "auto") never share a folder, GPU runs of different precisions neither, and every
CPU run keeps the id it always had. torch's CUDA queries are faked; the ids are real."""

from __future__ import annotations

import pytest
import torch

from reasonlab.train.config import TrainConfig, config_id


def config(**changes) -> TrainConfig:
    return TrainConfig.build({
        "task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 8, "steps": 2, **changes})


CPU_ID = "cb5da8f8fc69"
"""config()'s id as the store has always named it (computed before ids knew the device)."""


@pytest.fixture
def gpu(monkeypatch):
    """A machine with one CUDA GPU, computing bf16 natively or not."""
    def fake(bf16: bool = True) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    return fake


def test_cpu_ids_are_those_the_store_already_holds():
    assert not torch.cuda.is_available() or pytest.skip("this machine has a GPU")
    assert config_id(config()) == CPU_ID
    assert config_id(config(dtype="fp32")) == CPU_ID  # fp32 was the default once
    assert config_id(config(dtype="bf16")) != CPU_ID  # asked for: a CPU bf16 run, as before


def test_a_gpu_run_never_takes_a_cpu_runs_id(gpu):
    forced_cpu = config_id(config(device="cpu"))
    gpu(bf16=True)
    on_gpu = {d: config_id(config(dtype=d)) for d in ("auto", "fp32", "tf32", "bf16")}
    assert CPU_ID not in on_gpu.values()
    assert on_gpu["auto"] == on_gpu["bf16"]  # auto is bf16 there: one computation, one id
    assert len({on_gpu["bf16"], on_gpu["fp32"], on_gpu["tf32"]}) == 3
    assert config_id(config(device="cpu")) == forced_cpu  # --device cpu: as on a CPU host
    assert config_id(config(device="cuda")) == on_gpu["auto"]  # what auto resolves to


def test_auto_on_a_gpu_without_native_bf16_is_a_tf32_run(gpu):
    gpu(bf16=True)
    bf16 = config_id(config())
    gpu(bf16=False)  # a V100 or T4: auto resolves to tf32
    assert config_id(config()) == config_id(config(dtype="tf32")) != bf16
