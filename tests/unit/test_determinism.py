"""Strict determinism on CUDA, without a GPU: torch's switches are recorded (monkeypatch), the
decisions are real. A CUDA run asks for deterministic kernels with warn_only=False (only then
does SDPA's backward take its deterministic variant), turns the NaN fill of uninitialised memory
off, and an op without a deterministic kernel ends in one `error:` line naming it; the opt-outs
enter the run id, the default keeps every id."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from reasonlab.cli import main
from reasonlab.errors import ConfigError
from reasonlab.train import device as device_mod
from reasonlab.train.config import TrainConfig, config_id
from reasonlab.train.device import configure, nondeterministic_op

BASE = dict(task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
            model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32), n_train=100, n_test=32,
            batch_size=16, steps=12, eval_every=4, ckpt_every=4)


def config(**over: Any) -> TrainConfig:
    return TrainConfig.build({**BASE, **over})


@pytest.fixture
def switches(monkeypatch):
    """torch's process-wide switches, recorded instead of set (and restored after)."""
    calls: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(torch, "use_deterministic_algorithms",
                        lambda *a, **k: calls.append((a, k)))
    monkeypatch.setattr(torch.utils.deterministic, "fill_uninitialized_memory", True)
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    tf32 = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    yield calls
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32


def test_cuda_runs_are_strict_by_default(switches):
    configure(torch.device("cuda"), "bf16", config().deterministic)
    assert switches == [((True,), {"warn_only": False})]
    assert torch.utils.deterministic.fill_uninitialized_memory is False


@pytest.mark.parametrize("mode,want", [("strict", ((True,), {"warn_only": False})),
                                       ("warn", ((True,), {"warn_only": True})),
                                       ("off", ((False,), {}))])
def test_each_mode_sets_torch_as_documented(switches, mode, want):
    configure(torch.device("cuda"), "fp32", mode)
    assert switches == [want]
    assert torch.utils.deterministic.fill_uninitialized_memory is False


def test_the_cpu_is_left_alone(switches):
    configure(torch.device("cpu"), "fp32", "strict")
    assert switches == []
    assert torch.utils.deterministic.fill_uninitialized_memory is True


def test_train_passes_the_runs_mode_to_configure(monkeypatch, tmp_path):
    from reasonlab.train import loop

    seen = []

    class Stop(Exception):
        pass

    def record(device: torch.device, precision: str, deterministic: str = "?") -> None:
        seen.append((device.type, precision, deterministic))
        raise Stop

    monkeypatch.setattr(loop, "configure", record)
    monkeypatch.setattr(loop, "resolve_device", lambda name: torch.device("cuda"))
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    for mode in ("strict", "off"):
        with pytest.raises(Stop):
            loop.train(config(deterministic=mode), tmp_path / mode, quiet=True)
    assert seen == [("cuda", "bf16", "strict"), ("cuda", "bf16", "off")]


def test_strict_keeps_every_id_and_the_opt_outs_enter_it():
    # ids computed by the code before the field existed; a GPU config's id also hashes where
    # it computes (device class and precision, train/config.id_place) since, so it was renewed
    assert config_id(config()) == "a0317ced0343"
    assert config_id(config(device="cuda", dtype="bf16")) == "1d9510a5f4bc"
    assert config_id(config(deterministic="strict")) == "a0317ced0343"
    assert "deterministic" not in config().model_dump(mode="json")  # config.json as before
    ids = {config_id(config(deterministic=m)) for m in ("strict", "warn", "off")}
    assert len(ids) == 3
    with pytest.raises(ConfigError, match="deterministic"):
        config(deterministic="fast")


def _real_torch_error() -> RuntimeError:
    """torch's own error for an op without a deterministic kernel (max_unpool2d has none on
    the CPU either)."""
    x = torch.randn(1, 1, 4, 4)
    y, i = F.max_pool2d(x, 2, return_indices=True)
    torch.use_deterministic_algorithms(True)
    try:
        F.max_unpool2d(y, i, 2)
    except RuntimeError as e:
        return e
    finally:
        torch.use_deterministic_algorithms(False)
    raise AssertionError("max_unpool2d ran under deterministic algorithms")


def test_the_error_names_the_op_and_the_way_out():
    e = nondeterministic_op(_real_torch_error())
    assert isinstance(e, ConfigError)
    text = str(e)
    assert text.startswith("max_unpooling2d_forward_out has no deterministic CUDA kernel")
    assert "deterministic=warn" in text and "deterministic=off" in text and "\n" not in text
    assert nondeterministic_op(RuntimeError("CUDA error: an illegal memory access")) is None
    assert nondeterministic_op(ValueError("x does not have a deterministic implementation")
                               ) is None


def test_a_run_hitting_such_an_op_ends_in_one_error_line(tmp_path, monkeypatch, capsys):
    """Through the CLI: the op's RuntimeError, raised inside a training step, is one
    `error:` line (exit 2), no traceback, and the half-started run folder is gone."""
    from reasonlab.train import loop

    error = _real_torch_error()

    def step(*a: Any, **k: Any) -> torch.Tensor:
        raise error

    monkeypatch.setattr(loop, "train_step", step)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(BASE))
    assert main(["train", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: max_unpooling2d_forward_out has no "
                                               "deterministic CUDA kernel"), err
    assert not list((tmp_path / "out" / "runs").glob("[0-9a-f]*"))


def test_auto_never_picks_emulated_bf16(monkeypatch):
    """V100 / T4: torch.cuda.is_bf16_supported() says True by counting emulation; only
    including_emulation=False tells. dtype=auto then takes tf32."""
    def emulated(including_emulation: bool = True) -> bool:
        return including_emulation

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", emulated)
    assert device_mod.resolve_dtype("auto", torch.device("cuda")) == "tf32"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    assert device_mod.resolve_dtype("auto", torch.device("cuda")) == "bf16"
    assert device_mod.resolve_dtype("auto", torch.device("cpu")) == "fp32"
