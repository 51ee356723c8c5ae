"""Every study's PAPER scale runs on the CPU, shrunk by key=value overrides (the same
`reasonlab run STUDY --scale paper key=value` a user types to time a GPU run first). A
paper-scale recipe that cannot train, evaluate, checkpoint, resume or write its report (a
warm-up longer than the run, an analysis that assumes sizes) fails here, without a GPU.

Three tests, by cost:
- lego-extrapolation's paper scale end to end, report included, and resumed from its
  checkpoints (the README's example; about 30 s; in every test run);
- every kind of paper-scale run of every study (one run per distinct task, architecture and
  init stage: pretrained checkpoint, pretraining run, mimicking, freezing) trains two steps,
  each evaluated and checkpointed, and resumes from its checkpoint to the same metrics
  (`-m paper`: building the paper-scale tasks and models takes over 15 minutes on 2 shared
  cores, too long for CI);
- every study end to end with its report (`-m paper`: longer still).

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
from reasonlab.runs import execute, run_dir_for
from reasonlab.studies.kit.core import merge, overridden
from reasonlab.train.config import TrainConfig

pytestmark = pytest.mark.slow
PAPER_ONLY = pytest.mark.paper  # deselected by default (pyproject addopts); `pytest -m paper`

RUN = {"steps": 2, "batch_size": 8, "n_test": 32, "eval_every": 1, "ckpt_every": 1,
       "eval_batch_size": 32, "optim": {"warmup_steps": 0}}
"""Every study: two optimiser steps, each evaluated and checkpointed."""
FEW = {"n_train": 64}
NARROW = {"model": {"d_model": 32, "n_heads": 2, "d_mlp": 64}}
SHALLOW = {"model": {"n_layers": 1}}  # a pretrained checkpoint keeps its first layers
FPT_VAL = {"n_val": 16}

SHRINK: dict[str, dict] = {
    "lego-extrapolation": merge(FEW, NARROW), "lego-staircase": merge(FEW, NARROW),
    "lego-stochastic-depth": merge(FEW, NARROW), "lego-probes": merge(FEW, NARROW),
    "lego-shortcut": merge(FEW, NARROW), "lego-mixed-lengths": merge(FEW, NARROW),
    # MiniLM fixes the widths of the pretrained arms
    "lego-pretraining": merge(FEW, SHALLOW), "lego-mimicking": merge(FEW, SHALLOW),
    "lego-hardcoded-attention": merge(FEW, {"model": {"d_model": 96, "d_mlp": 64}}),  # 12 heads
    "lego-conv-qkv-programs": FEW,  # d_mlp is matched to the parameter count
    "anchors-init-phase": FEW, "anchors-lr-weight-decay": FEW, "anchors-mechanism": FEW,
    "anchors-embedding-norm": FEW,  # init scales are set against d_model: kept
    "artificial-pretraining": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
    "artificial-pretraining-lego": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
    # the FPT runs hold a validation split out of n_train (fpt.common.tasks)
    **{name: merge(FEW, SHALLOW, FPT_VAL) for name in (
        "fpt-universal", "fpt-freeze-ablation", "fpt-freeze-fewer", "fpt-convergence",
        "fpt-init", "fpt-modality", "fpt-fitting", "fpt-attention")},
    "fpt-scaling": merge(FEW, FPT_VAL),  # n_layers is swept
    "symbols-mlp-vs-transformer": {}, "symbols-data-efficiency": {},  # n_train is swept
    "symbols-readout-vs-full": {}, "symbols-copy-embedding-dim": FEW,  # d_model is swept
    "symbols-language-model": merge(FEW, NARROW, {"model": {"n_layers": 2}}),
}
"""Per study, on top of RUN. Studies that train nothing (symbols-kernel) run as they are."""


def test_every_study_has_a_shrink():
    assert {n for n, c in STUDIES.items() if c.trains} == set(SHRINK)


def kinds() -> dict[str, tuple[str, TrainConfig]]:
    """One paper-scale config per distinct kind of run across all studies, shrunk."""
    out: dict[str, tuple[str, TrainConfig]] = {}
    for name, cls in STUDIES.items():
        if not cls.trains or cls.missing():
            continue
        for s in overridden(cls().runs("paper", 1), merge(RUN, SHRINK[name])):
            c = s.config
            kind = (f"{c.task.name}/{c.model.arch.name}/checkpoint={c.init_checkpoint}/"
                    f"run={c.init_run is not None}/mimic={c.mimic is not None}/"
                    f"trainable={c.trainable}")
            out.setdefault(kind, (name, c))
    return out


@PAPER_ONLY
def test_every_kind_of_paper_run_trains_checkpoints_and_resumes(tmp_path):
    for kind, (study, config) in kinds().items():
        first = execute(config, tmp_path, quiet=True)
        run = run_dir_for(config, tmp_path)
        metrics = (run / "metrics.jsonl").read_text()
        assert [json.loads(x)["step"] for x in metrics.splitlines()] == [1, 2], kind
        assert (run / "ckpt" / "state.safetensors").exists(), kind
        (run / "result.json").unlink()  # forgotten: the run resumes from its checkpoint
        again = execute(config, tmp_path, quiet=True)
        # (as JSON: a position never seen is NaN, which equals nothing)
        assert json.dumps(again["final"]) == json.dumps(first["final"]), (study, kind)
        assert (run / "metrics.jsonl").read_text() == metrics


def test_lego_extrapolation_paper_scale_end_to_end(tmp_path):
    shrunk_study("lego-extrapolation", tmp_path)


@PAPER_ONLY
@pytest.mark.parametrize("name", list(STUDIES))
def test_paper_scale_runs_shrunk(name, tmp_path):
    shrunk_study(name, tmp_path)


def shrunk_study(name: str, tmp_path: Path) -> None:
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
