"""Analyses where the run trained: load_run_model's `device`, analysis helpers that send the
examples to the model's device a batch at a time and hand results back where the examples
were, a mimicking run's step-0 model kept and read back, and symbols-kernel's one model per
setting re-initialised on its device -- each the same numbers on the CPU as before."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from reasonlab.runs import execute, load_run_model, run_dir_for
from reasonlab.train.config import TrainConfig
from reasonlab.train.init_stages import load_initial_model
from reasonlab.train.loop import build_model


def lego(**over: Any) -> TrainConfig:
    return TrainConfig.build({"task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2},
                              "model": {"d_model": 16, "n_layers": 2, "n_heads": 2,
                                        "d_mlp": 32},
                              "n_train": 64, "n_test": 32, "batch_size": 8, "steps": 4,
                              "eval_every": 2, **over})


def test_load_run_model_puts_the_model_where_asked(tmp_path, monkeypatch):
    cfg = lego()
    execute(cfg, tmp_path, quiet=True)
    run_dir = run_dir_for(cfg, tmp_path)
    _, cpu = load_run_model(run_dir)
    _, here = load_run_model(run_dir, device="run")  # device=auto resolves to the CPU here
    assert all(p.device.type == "cpu" for p in here.parameters())
    assert all(torch.equal(a, b) for a, b in zip(cpu.state_dict().values(),
                                                  here.state_dict().values(), strict=True))
    moved = []
    real = torch.nn.Module.to
    monkeypatch.setattr(torch.nn.Module, "to", lambda m, *a, **k: moved.append(a) or
                        real(m, *a, **k))
    from reasonlab.train import device

    monkeypatch.setattr(device, "resolve_device", lambda name: torch.device("cpu", 0))
    load_run_model(run_dir, device="run")
    load_run_model(run_dir, device=torch.device("cpu", 0))
    assert moved == [(torch.device("cpu", 0),), (torch.device("cpu", 0),)]
    assert not load_run_model(run_dir)[1].training


def test_a_mimicking_run_keeps_its_step_0_model(tmp_path):
    """train() keeps the model its fine-tuning starts from; read back it is, bit for bit,
    the one the init stages rebuild (the analysis's fallback for runs trained before)."""
    cfg = lego(mimic={"steps": 3, "batch_size": 4})
    execute(cfg, tmp_path, quiet=True)
    run_dir = run_dir_for(cfg, tmp_path)
    kept = load_initial_model(run_dir)
    assert kept is not None and not kept[1].training
    rebuilt = build_model(cfg).state_dict()
    assert all(torch.equal(kept[1].state_dict()[k], rebuilt[k]) for k in rebuilt)
    assert load_initial_model(run_dir_for(lego(), tmp_path)) is None  # none without mimicking
    path = run_dir / "init" / "state.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    from reasonlab.errors import ReasonlabError

    with pytest.raises(ReasonlabError, match="checksum"):
        load_initial_model(run_dir)


def test_the_mimicking_report_reads_the_kept_model(tmp_path, monkeypatch):
    """lego-mimicking's head-score section from the kept model equals the rebuilt one's on
    the CPU, and no mimicking reruns when the model is kept."""
    from reasonlab.studies.kit.base import RunSpec
    from reasonlab.studies.lego import analysis

    cfg = lego(mimic={"steps": 3, "batch_size": 4})
    result = execute(cfg, tmp_path, quiet=True)
    result = {**result, "dir": str(run_dir_for(cfg, tmp_path))}
    spec = RunSpec(config=cfg, arm="mimicking init", seed=0)
    rebuilt = analysis.mimicked_heads(spec)
    monkeypatch.setattr(analysis, "build_model", lambda *a, **k: pytest.fail("rebuilt"))
    assert analysis.mimicked_heads(spec, result) == rebuilt


def test_the_kernel_study_reinitialises_one_model_per_setting():
    """symbols-kernel's N with one model per setting re-initialised per init equals, bit for
    bit on the CPU, N with a fresh model built per init (the code before)."""
    from reasonlab.analysis.kernel import template_kernel_matrix
    from reasonlab.model.transformer import Transformer
    from reasonlab.studies.symbols.analysis import ab_values, kernel_matrices, kernel_model_config
    from reasonlab.tasks.base import build_task

    tasks = {"same/different": {"preset": "same_different"}}
    settings = {"a + b, zero diag": (True, True, True), "plain": (False, False, False)}
    model = {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32}
    symbols = {"n_train_symbols": 20, "n_val_symbols": 4, "n_test_symbols": 20}
    got = kernel_matrices(tasks, settings, model, symbols, 3, 8)
    task = build_task({"name": "templates", **symbols, **tasks["same/different"]})
    for setting, flags in settings.items():
        cfg = kernel_model_config(model, flags[2], len(task.vocab), task.n_classes,
                                  task.seq_len)
        a, b = ab_values(flags, cfg.d_model)

        def fresh(i: int) -> Transformer:
            m = Transformer(cfg, generator=torch.Generator().manual_seed(1000 + i))
            with torch.no_grad():
                for layer in m.layers:
                    layer.attn.a.fill_(a)
                    layer.attn.b.fill_(b)
            return m

        want = template_kernel_matrix(task, fresh, 3, 8)
        assert np.array_equal(got["same/different"][setting], want), setting
