"""Device scheduling without a GPU: torch's CUDA queries are faked (monkeypatch), the
decisions are real. Locally GPU runs go one per visible GPU, each worker pinned to its own;
CPU runs one per core. Under Ray a CUDA run asks for 1 GPU, and an `auto` run on a cluster
without GPUs takes a CPU."""

from __future__ import annotations

import os

import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.execution import local_workers, pool_map, ray_resources, uses_cuda, visible_gpus
from reasonlab.train.config import TrainConfig
from reasonlab.train.device import resolve_device, resolve_dtype


def config(device: str = "auto", dtype: str = "auto") -> TrainConfig:
    return TrainConfig.build({
        "task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 8, "steps": 2, "device": device,
        "dtype": dtype})


@pytest.fixture
def gpus(monkeypatch):
    """A machine with `n` GPUs, as far as torch.cuda's queries tell."""
    def fake(n: int, bf16: bool = True) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return fake


def test_auto_resolves_to_cuda_when_present(gpus):
    gpus(2)
    assert resolve_device("auto").type == "cuda" and uses_cuda(config("auto"))
    assert not uses_cuda(config("cpu"))
    gpus(0)
    assert resolve_device("auto").type == "cpu" and not uses_cuda(config("auto"))


def test_dtype_auto_is_bf16_on_cuda_and_fp32_on_the_cpu(gpus):
    gpus(1)
    assert resolve_dtype("auto", torch.device("cuda")) == "bf16"
    assert resolve_dtype("auto", torch.device("cpu")) == "fp32"
    assert resolve_dtype("fp32", torch.device("cuda")) == "fp32"
    gpus(1, bf16=False)
    assert resolve_dtype("auto", torch.device("cuda")) == "tf32"


def test_dtype_auto_keeps_cpu_run_ids():
    """`auto` is the default: a config that names no dtype hashes as before it existed, and so
    does one naming "fp32" (the old default, in every stored config.json)."""
    from reasonlab.train.config import config_id

    assert "dtype" not in config(dtype="auto").model_dump(exclude_defaults=True)
    assert config_id(config(dtype="auto")) == config_id(config(dtype="fp32"))
    assert config_id(config(dtype="bf16")) != config_id(config(dtype="fp32"))


def test_local_gpu_runs_one_per_gpu(gpus):
    gpus(4)
    runs = [config() for _ in range(10)]
    assert local_workers(runs, None) == (4, ["0", "1", "2", "3"])
    assert local_workers(runs[:2], None)[0] == 2  # never more workers than runs
    assert local_workers(runs, 8) == (8, ["0", "1", "2", "3"])  # asked: shared round-robin
    assert local_workers([config("cpu")] * 3, None) == (min(3, os.cpu_count() or 1), [])


def test_a_scheduler_pinned_gpu_list_is_kept(gpus, monkeypatch):
    gpus(2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    assert visible_gpus() == ["5", "7"]
    assert local_workers([config()] * 3, None) == (2, ["5", "7"])


def test_no_gpu_keeps_cpu_scheduling(gpus):
    gpus(0)
    assert local_workers([config()] * 3, 2) == (2, [])


def _pinned(barrier) -> str:
    barrier.wait(timeout=60)  # both jobs at once: they sit in different workers
    return os.environ["CUDA_VISIBLE_DEVICES"]


@pytest.mark.slow
def test_each_worker_is_pinned_to_its_own_gpu():
    from multiprocessing import get_context

    with get_context("spawn").Manager() as m:
        barrier = m.Barrier(2)
        assert sorted(pool_map(_pinned, [barrier, barrier], 2, ["3", "6"])) == ["3", "6"]


def test_ray_asks_for_a_gpu_for_cuda_runs():
    assert ray_resources(config("cuda"), 4) == {"num_cpus": 0, "num_gpus": 1}
    assert ray_resources(config("auto"), 4) == {"num_cpus": 0, "num_gpus": 1}
    assert ray_resources(config("cpu"), 4) == {"num_cpus": 1, "num_gpus": 0}
    assert ray_resources(config("auto"), 0) == {"num_cpus": 1, "num_gpus": 0}  # says so
    with pytest.raises(ConfigError, match="no GPU"):
        ray_resources(config("cuda"), 0)


def test_a_gpu_less_ray_driver_may_send_cuda_runs(gpus, tmp_path):
    """device=cuda from a driver without a GPU: the cluster's nodes train, so only the local
    executor checks this machine (ray_resources checks the cluster)."""
    from reasonlab.runs import check_device, check_runs

    gpus(0)
    with pytest.raises(ConfigError, match="CUDA is not available"):
        check_device(config("cuda"))
    with pytest.raises(ConfigError, match="CUDA is not available"):
        check_runs([config("cuda")], tmp_path)
    check_device(config("cuda"), "ray")
    check_runs([config("cuda")], tmp_path, "ray")


def test_run_json_records_where_a_run_computes(tmp_path):
    import json

    from reasonlab.runs import execute, run_dir_for

    c = config("cpu")
    execute(c, tmp_path, quiet=True)
    data = json.loads((run_dir_for(c, tmp_path) / "run.json").read_text())
    assert (data["device"], data["precision"], data["compile"]) == ("cpu", "fp32", "off")
    assert (data["starts"][-1]["device"], data["starts"][-1]["precision"]) == ("cpu", "fp32")


def test_where_it_runs_on_a_gpu(gpus, monkeypatch):
    from reasonlab.train.device import where_it_runs

    gpus(1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100 80GB HBM3")
    assert where_it_runs("auto", "auto", "strict") == {
        "device": "cuda", "precision": "bf16", "compile": "off",
        "gpu": "NVIDIA H100 80GB HBM3", "deterministic": "strict"}
    assert where_it_runs("auto", "auto", "strict", "reduce-overhead")["compile"] == \
        "reduce-overhead"
    assert where_it_runs("cpu", "auto")["precision"] == "fp32"


def test_a_run_resumes_only_where_it_started(tmp_path, monkeypatch):
    """A run started on a GPU in bf16 (run.json says so) is not resumed on the CPU in fp32:
    one line; a run.json without the record (older runs) resumes as before."""
    import json

    from reasonlab.errors import CheckpointError
    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train import loop

    c = config("cpu").model_copy(update={"steps": 4, "eval_every": 2, "ckpt_every": 2})
    real, calls = loop.slot_loss, {"n": 0}

    class Killed(Exception):
        pass

    def dying(*a):
        calls["n"] += 1
        if calls["n"] == 3:
            raise Killed
        return real(*a)

    monkeypatch.setattr(loop, "slot_loss", dying)
    with pytest.raises(Killed):
        execute(c, tmp_path, quiet=True)
    monkeypatch.setattr(loop, "slot_loss", real)
    path = run_dir_for(c, tmp_path) / "run.json"
    data = json.loads(path.read_text())
    data["starts"][-1].update(device="cuda", precision="bf16")
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="started with device=cuda and would resume "
                                              "with device=cpu"):
        execute(c, tmp_path, quiet=True)
    for key in ("device", "precision"):
        del data["starts"][-1][key]
    path.write_text(json.dumps(data))
    assert execute(c, tmp_path, quiet=True)["final"]["step"] == 4
