"""Every study's PAPER scale runs end to end on the CPU, shrunk by key=value overrides (the
same `reasonlab run STUDY --scale paper key=value` a user types to time a GPU run first): each
run trains, evaluates, checkpoints, resumes from its checkpoint, and the study writes its
report. A paper-scale recipe that cannot (a warm-up longer than the run, an analysis that
assumes sizes, a missing device move) fails here, without a GPU.

What is shrunk is data, per family (SHRINK): steps, batch, examples and, where no pretrained
checkpoint fixes them, the width; never a key the study sweeps (the sweep would collapse to
one point), nor the depth of a study that samples depths (stochastic depth). One seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonlab.errors import AssetError
from reasonlab.studies import STUDIES, run_study
from reasonlab.studies.core import merge

pytestmark = pytest.mark.slow

RUN = {"steps": 2, "batch_size": 8, "n_test": 32, "eval_every": 1, "ckpt_every": 1,
       "eval_batch_size": 32, "optim": {"warmup_steps": 0}}
"""Every study: two optimiser steps, each evaluated and checkpointed."""
FEW = {"n_train": 64}
NARROW = {"model": {"d_model": 32, "n_heads": 2, "d_mlp": 64}}
SHALLOW = {"model": {"n_layers": 1}}  # a pretrained checkpoint keeps its first layers

SHRINK: dict[str, dict] = {
    "lego-extrapolation": merge(FEW, NARROW), "lego-staircase": merge(FEW, NARROW),
    "lego-stochastic-depth": merge(FEW, NARROW), "lego-probes": merge(FEW, NARROW),
    "lego-shortcut": merge(FEW, NARROW), "lego-mixed-lengths": merge(FEW, NARROW),
    "lego-pretraining": merge(FEW, SHALLOW), "lego-mimicking": merge(FEW, SHALLOW),  # MiniLM fixes widths
    "lego-hardcoded-attention": merge(FEW, {"model": {"d_model": 96, "d_mlp": 64}}),  # 12 heads
    "lego-conv-qkv-programs": FEW,  # d_mlp is matched to the parameter count
    "anchors-init-phase": FEW, "anchors-lr-weight-decay": FEW, "anchors-mechanism": FEW,
    "anchors-embedding-norm": FEW,  # init scales are set against d_model: kept
    "artificial-pretraining": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
    "artificial-pretraining-lego": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
    "fpt-universal": merge(FEW, SHALLOW), "fpt-freeze-ablation": merge(FEW, SHALLOW),
    "fpt-convergence": merge(FEW, SHALLOW),
    "symbols-mlp-vs-transformer": {}, "symbols-data-efficiency": {},  # n_train is swept
    "symbols-readout-vs-full": {}, "symbols-copy-embedding-dim": FEW,  # d_model is swept
    "symbols-language-model": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
}
"""Per study, on top of RUN. Studies that train nothing (symbols-kernel) run as they are."""


def test_every_study_has_a_shrink():
    assert {n for n, c in STUDIES.items() if c.trains} == set(SHRINK)


@pytest.mark.parametrize("name", list(STUDIES))
def test_paper_scale_runs_shrunk(name, tmp_path):
    cls = STUDIES[name]
    if why := cls.missing():
        pytest.skip(why)
    overrides = merge(RUN, SHRINK[name]) if cls.trains else None
    try:
        report, out = run_study(name, "paper", seeds=1, out=tmp_path, workers=1, quiet=True,
                                overrides=overrides)
    except AssetError as e:
        pytest.skip(str(e))
    assert [v.claim.key for v in report.verdicts] == [c.key for c in cls.claims]
    text = (out / "report.md").read_text()
    if not cls.trains:
        return
    assert "steps=2" in text  # the report says its recipe was overridden
    runs = sorted((tmp_path / "runs").iterdir())
    for r in runs:
        metrics = [json.loads(x) for x in (r / "metrics.jsonl").read_text().splitlines()]
        assert [m["step"] for m in metrics] == [1, 2]
        assert (r / "ckpt" / "state.safetensors").exists()
    # resume: forget every run's result; each reloads its last checkpoint, and the study's
    # verdicts come out the same
    verdicts = (out / "verdicts.json").read_text()
    for r in runs:
        (r / "result.json").unlink()
    run_study(name, "paper", seeds=1, out=tmp_path, workers=1, quiet=True, overrides=overrides)
    assert (out / "verdicts.json").read_text() == verdicts
