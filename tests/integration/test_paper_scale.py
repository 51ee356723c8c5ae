"""Every study's PAPER scale runs on the CPU at the paper's model shapes, shrunk in data only by
key=value overrides (the same `reasonlab run STUDY --scale paper key=value` a user types to
time a GPU run first). A paper-scale recipe that cannot build its model, train, evaluate,
checkpoint, resume or write its report (a warm-up longer than the run, an analysis that assumes
sizes) fails here, without a GPU.

What is shrunk is data, per study (SHRINK): steps, batch, examples, corpus, and with them the
analyses' fresh examples (Results.sample_size follows an overridden n_test); never a model's
width or depth (the paper's shapes are what must build and train), nor a key the study sweeps
(the sweep would collapse to one point). One seed. A study that trains nothing (it computes at
initialization) is shrunk by the overrides its own recipe takes (Study.check_overrides), again
in sizes only, never in shape.

The tests, all but the first opt-in (`pytest -m paper`: the paper's models on 2 CPU cores take
hours for the whole set, far past CI's budget; the README's "Running at paper scale on a GPU"
says what was measured):
- every study has its shrink, and a study that trains nothing accepts its own (in every
  test run);
- lego-extrapolation end to end, killed between its first run's two checkpoints and run again:
  that run resumes at step 2 and ends with the metrics and weights of an uninterrupted run,
  and a second `run_study` reuses every finished run (trains nothing) for the same verdicts;
- every study end to end with its report (studies of one family share a runs folder, as
  `reasonlab run` into one --out does, so a run two studies need trains once; a run no later
  study needs is deleted, for the disk's sake);
- every kind of paper-scale run (one per distinct task, architecture and init stage) trains,
  checkpoints and, its result forgotten, resumes from its checkpoint to the same metrics.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from reasonlab.errors import AssetError
from reasonlab.runs import execute, run_dir_for
from reasonlab.studies import STUDIES, run_study
from reasonlab.studies.kit.core import merge, overridden
from reasonlab.train.config import TrainConfig

PAPER = pytest.mark.paper  # deselected by default (pyproject addopts); `pytest -m paper`

RUN = {"steps": 2, "batch_size": 4, "n_test": 16, "eval_every": 1, "ckpt_every": 2,
       "eval_batch_size": 16, "device": "cpu", "optim": {"warmup_steps": 0}}
"""Every study: two optimiser steps, each evaluated; the final one checkpointed."""
FEW = {"n_train": 64}
FPT_VAL = {"n_val": 16}
CORPUS = {"init_from": {"task": {"corpus_tokens": 20_000}}}  # artificial corpora: 100M tokens
MIMIC = {"mimic": {"steps": 2, "batch_size": 4}}
"""The mimicking warm-up is an init stage with its own steps and batch (paper: 1000 x 200 through
MiniLM): shrunk like the training it precedes; runs without mimicking are left alone."""

SHRINK: dict[str, dict] = {
    **{n: FEW for n in ("lego-extrapolation", "lego-staircase", "lego-stochastic-depth",
                        "lego-plateau", "lego-short-chain",
                        "lego-probes", "lego-mixed-lengths",
                        "lego-pretraining", "lego-hardcoded-attention",
                        "lego-conv-qkv-programs", "anchors-init-phase",
                        "anchors-lr-weight-decay", "anchors-mechanism", "anchors-embedding-norm",
                        "symbols-copy-embedding-dim", "symbols-language-model")},
    # the FPT runs hold a validation split out of n_train (fpt.common.tasks)
    **{name: merge(FEW, FPT_VAL) for name in (
        "fpt-universal", "fpt-lstm", "fpt-freeze-ablation", "fpt-freeze-random",
        "fpt-freeze-fewer", "fpt-convergence",
        "fpt-init", "fpt-modality", "fpt-fitting", "fpt-attention", "fpt-scaling",
        "fpt-backbones", "fpt-vit")},
    **{name: merge(FEW, MIMIC) for name in ("lego-mimicking", "lego-shortcut")},
    "artificial-pretraining": merge(FEW, CORPUS),
    "artificial-pretraining-lego": merge(FEW, CORPUS),
    # n_train is swept. The one-hot MLP's first layer is positions x vocabulary x d_mlp: 3 x
    # 102,002 x 3072 = 940M weights at the paper's 100k training symbols, 15 GB with its
    # gradient and Adam moments, which ran a 24 GB CPU machine out of memory; the alphabet is
    # data, so it shrinks (1000 training symbols: the cpu scale's)
    "symbols-mlp-vs-transformer": {"task": {"n_train_symbols": 1000}},
    "symbols-data-efficiency": {}, "symbols-readout-vs-full": {},
    # trains nothing: its kernel's sizes (256 initializations x 1024 examples per template)
    "symbols-kernel": {"n_inits": 1, "n_per_template": 8, "device": "cpu"},
}
"""Per study: on top of RUN for a study that trains; the whole of what a study that trains
nothing (RUN's keys are not its own) is given, {} to run it as it is."""


@pytest.fixture(autouse=True)
def _one_thread():  # the name overrides tests/conftest.py's autouse fixture
    """Every core this process may use (its affinity: `taskset` leaves the others to other
    work), not the suite's one thread (tests/conftest.py): the paper's shapes are slow on a
    CPU, and no test here compares runs made at different thread counts."""
    n = torch.get_num_threads()
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    yield
    torch.set_num_threads(n)


def test_every_study_has_a_shrink():
    assert set(STUDIES) == set(SHRINK)
    for name, cls in STUDIES.items():
        if not cls.trains and SHRINK[name]:  # its own keys, checked without computing
            cls().check_overrides("paper", SHRINK[name])


def shrink(name: str) -> dict:
    return merge(RUN, SHRINK[name]) if STUDIES[name].trains else SHRINK[name]


# ----------------------------------------------------------------------------- resume

class Killed(Exception):
    pass


@PAPER
def test_lego_extrapolation_paper_scale_interrupted_and_resumed(tmp_path, monkeypatch):
    """Killed after the first run's step-1 checkpoint, the study resumes: that run replays
    step 2 from the checkpoint to the metrics and weights of an uninterrupted run; run again,
    the study trains nothing and writes the same verdicts."""
    import reasonlab.train.loop as loop

    over = merge(shrink("lego-extrapolation"), {"ckpt_every": 1})
    first = overridden(STUDIES["lego-extrapolation"]().runs("paper", 1), over)[0].config
    execute(first, tmp_path / "whole", quiet=True)  # the reference, never interrupted
    whole = run_dir_for(first, tmp_path / "whole")

    real, saves = loop.save_checkpoint, []

    def dying(run_dir, step, *rest):
        real(run_dir, step, *rest)
        saves.append(step)
        if step == 1:
            raise Killed  # between the checkpoints of steps 1 and 2

    monkeypatch.setattr(loop, "save_checkpoint", dying)
    with pytest.raises(Killed):
        run_study("lego-extrapolation", "paper", seeds=1, out=tmp_path, workers=1,
                  quiet=True, overrides=over)
    run = run_dir_for(first, tmp_path)
    assert [json.loads(x)["step"] for x in (run / "metrics.jsonl").read_text().splitlines()
            ] == [1]
    monkeypatch.setattr(loop, "save_checkpoint", real)
    steps = []
    step = loop.train_step
    monkeypatch.setattr(loop, "train_step", lambda *a: steps.append(a[4]) or step(*a))
    report, out = run_study("lego-extrapolation", "paper", seeds=1, out=tmp_path, workers=1,
                            quiet=True, overrides=over)
    assert steps == [1, 0, 1]  # the killed run resumed at step 2, the other arm trained whole
    assert (run / "metrics.jsonl").read_text() == (whole / "metrics.jsonl").read_text()
    a, b = (load_file(str(d / "ckpt" / "state.safetensors")) for d in (run, whole))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    check_report("lego-extrapolation", tmp_path, out)

    steps.clear()
    verdicts = (out / "verdicts.json").read_text()
    run_study("lego-extrapolation", "paper", seeds=1, out=tmp_path, workers=1, quiet=True,
              overrides=over)
    assert steps == []  # every run reused from the store
    assert (out / "verdicts.json").read_text() == verdicts


# ----------------------------------------------------------------------------- every study

@pytest.fixture(scope="module")
def family_root(tmp_path_factory):
    """A runs folder per family, shared by its studies (run in name order, so a family's
    studies are neighbours), as `reasonlab run` into one --out shares it."""
    roots: dict[str, Path] = {}
    yield lambda name: roots.setdefault(family(name), tmp_path_factory.mktemp(family(name)))
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)


def family(name: str) -> str:
    return name.split("-")[0]


def run_ids(name: str) -> set[str]:
    """The run folders a study's shrunk paper scale reads: its runs and their pretraining runs."""
    if not STUDIES[name].trains or STUDIES[name].missing():
        return set()
    configs = [s.config for s in overridden(STUDIES[name]().runs("paper", 1), shrink(name))]
    configs += [c.init_run for c in configs if c.init_run is not None]
    return {run_dir_for(c, Path()).name for c in configs}


def prune(name: str, root: Path) -> None:
    """Delete the run folders no later study of the family reads: a paper-sized model's
    checkpoint with its Adam state is 1-2 GB, and symbols-data-efficiency alone trains 23."""
    later = [n for n in sorted(STUDIES) if n > name and family(n) == family(name)]
    keep = set().union(*map(run_ids, later))
    for run in (root / "runs").iterdir() if (root / "runs").is_dir() else ():
        if run.name not in keep:
            shutil.rmtree(run)


@PAPER
@pytest.mark.parametrize("name", sorted(STUDIES))
def test_paper_scale_runs_shrunk(name, family_root):
    cls = STUDIES[name]
    if why := cls.missing():
        pytest.skip(why)
    if (need := analysis_memory(name)) > (have := available_memory()):
        pytest.skip(f"its analysis builds a {need / 2**30:.1f} GiB network; "
                    f"{have / 2**30:.1f} GiB available")
    root = family_root(name)
    if (need := store_disk(name)) > (free := shutil.disk_usage(root).free):
        pytest.skip(f"its runs' checkpoints take {need / 2**30:.0f} GiB of disk; "
                    f"{free / 2**30:.0f} GiB free")
    try:
        report, out = run_study(name, "paper", seeds=1, out=root, workers=1, quiet=True,
                                overrides=shrink(name))
    except AssetError as e:
        pytest.skip(str(e))
    assert [v.claim.key for v in report.verdicts] == [c.key for c in cls.claims]
    check_report(name, root, out)
    prune(name, root)


def store_disk(name: str) -> int:
    """Bytes the study's runs leave in the store: each distinct run's last checkpoint holds its
    fp32 weights (no optimizer state). artificial-pretraining's 88 RoBERTa-base-sized runs
    take about 40 GiB."""
    from reasonlab.sizes import n_params

    if not STUDIES[name].trains:
        return 0
    configs = [s.config for s in overridden(STUDIES[name]().runs("paper", 1), shrink(name))]
    configs += [c.init_run for c in configs if c.init_run is not None]
    return sum(4 * n_params(c) for c in {run_dir_for(c, Path()).name: c for c in configs}.values())


def analysis_memory(name: str) -> int:
    """Bytes of the largest network a study's analysis builds beyond its runs: the widest
    frozen random network of symbols-readout-vs-full's width sweep (d_model 3072), fp32,
    twice for the weights' initialisation."""
    if name != "symbols-readout-vs-full":
        return 0
    from reasonlab.studies.kit.core import grid
    from reasonlab.sizes import n_params
    from reasonlab.studies.symbols.readout_vs_full import SWEEP, recipe

    w = max(SWEEP["paper"][1])
    (spec,) = grid(recipe("paper", preset="same_different"), {"widest": {}},
                   [{"model": {"d_model": w, "d_mlp": 4 * w}}])
    return 8 * n_params(spec.config)


def available_memory() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 2**62  # not Linux: assume enough


def check_report(name: str, root: Path, out: Path) -> None:
    """The report is written; every run of the study trained its two steps at the paper's
    shapes, evaluated each and checkpointed the last."""
    text = (out / "report.md").read_text()
    if SHRINK[name] or STUDIES[name].trains:  # the report says its recipe was overridden
        assert "## Recipe overrides" in text
    if not STUDIES[name].trains:
        return
    assert "steps=2" in text
    study = json.loads((out / "study.json").read_text())
    paper = {s.config.model.d_model for s in STUDIES[name]().runs("paper", 1)}
    for r in study["runs"]:
        run = root / "runs" / r["id"]
        metrics = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        assert [m["step"] for m in metrics] == [1, 2], run
        assert (run / "ckpt" / "state.safetensors").exists(), run
        config = TrainConfig.build(json.loads((run / "config.json").read_text()))
        assert config.model.d_model in paper  # the paper's widths, not shrunk


# ----------------------------------------------------------------------------- every kind

def kinds() -> dict[str, tuple[str, TrainConfig]]:
    """Paper-scale configs, shrunk, that between them show every value of every dimension of
    a run that resuming touches: the task (its data and evaluation), the architecture, the
    init stage (pretrained checkpoint, a pretraining run, the mimicking warm-up) and what is
    trained (the optimizer's parameter set). A config joins when it shows a value no earlier
    one showed; all combinations would be 164 paper-sized runs, hours on a CPU."""
    out: dict[str, tuple[str, TrainConfig]] = {}
    seen: set[tuple[str, str]] = set()
    for name, cls in sorted(STUDIES.items()):
        if not cls.trains or cls.missing():
            continue
        for s in overridden(cls().runs("paper", 1), shrink(name)):
            c = s.config
            dims = {"task": c.task.name, "arch": c.model.arch.name,
                    # an init loads per architecture (MiniLM into FPT or into BERT)
                    "checkpoint": f"{c.model.arch.name}:{c.init_checkpoint}",
                    "run": f"{c.model.arch.name}:{c.init_run is not None}",
                    "mimic": str(c.mimic is not None), "trainable": str(c.trainable)}
            if not set(dims.items()) <= seen:
                seen |= set(dims.items())
                out["/".join(f"{k}={v}" for k, v in dims.items())] = (name, c)
    return out


@PAPER
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
        shutil.rmtree(run)
