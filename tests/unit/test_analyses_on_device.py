"""The LEGO, anchors, symbols and FPT analyses read each run on the device it trained on, with
no host round trip CUDA would refuse: their smoke studies run under test_device_guard's
simulated CUDA device, with the run's device resolving to it (so load_run_model(device="run")
puts the model there), and every model an analysis loads must be loaded there. The guard fails
on `.numpy()` of a device tensor and on an op mixing device and host tensors."""

from __future__ import annotations

from typing import Any

import pytest
from test_device_guard import RUN_DEVICE, guard  # noqa: F401  (the fixture)

from reasonlab.studies import STUDIES, run_study

ANALYSES = ("reasonlab.studies.lego.analysis", "reasonlab.studies.anchors.analysis",
            "reasonlab.studies.symbols.analysis", "reasonlab.studies.fpt._support.first_layer")
"""The modules that load trained runs for the families' analyses."""

STUDIED = ("lego-extrapolation", "lego-probes", "anchors-mechanism", "anchors-embedding-norm",
           "symbols-copy-embedding-dim", "fpt-attention")
"""Smoke studies reaching every such load: one-hop agreement and the op split, probes, the
anchors' solutions, mechanism and first-layer norm, the symbols' read-outs, FPT's first-layer
attention."""


@pytest.fixture
def on_device(monkeypatch):
    """The run's device resolves to the guard's simulated CUDA device; returns the devices each
    analysis asked load_run_model for."""
    import importlib

    from reasonlab.train import device

    monkeypatch.setattr(device, "resolve_device", lambda name: RUN_DEVICE)
    asked: list[Any] = []
    for name in ANALYSES:
        module = importlib.import_module(name)
        real = module.load_run_model

        def load(run_dir: Any, device: Any = None, _real: Any = real) -> Any:
            asked.append(device)
            return _real(run_dir, device=device)
        monkeypatch.setattr(module, "load_run_model", load)
    return asked


@pytest.mark.slow
@pytest.mark.parametrize("name", STUDIED)
def test_analyses_compute_where_the_run_trained(name, tmp_path, guard, on_device):  # noqa: F811
    if why := STUDIES[name].missing():
        pytest.skip(why)
    report, _ = run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)
    assert report.verdicts
    assert on_device, f"{name}'s analysis loaded no run"
    assert set(on_device) == {"run"}, f"{name} loaded runs on {on_device}, not their device"
