"""artificial-pretraining at paper scale on GLUE, offline: its downstream columns are the seed's
eight (GLUE's tasks), read from a folder given as `glue=DIR` (a tiny one in nyu-mll/glue's
Parquet layout, written here) or the Hugging Face cache; a paper-scale fine-tuning run, shrunk,
trains from that folder and is scored with GLUE's metric; a missing folder is one error line
before anything trains."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from sklearn.metrics import f1_score, matthews_corrcoef

from reasonlab.cli import main
from reasonlab.errors import ConfigError
from reasonlab.runs import execute, load_run_model, run_dir_for
from reasonlab.studies import STUDIES
from reasonlab.studies.artificial._support import paper_table_analysis as pa
from reasonlab.studies.artificial._support.paper_table import (GLUE_TASK, ROWS, SEED_COLUMNS,
                                                              SEED_TABLE, inits)
from reasonlab.studies.artificial.common import FINETUNE, PRETRAIN, SCRATCH
from reasonlab.studies.kit.assets import needed
from reasonlab.studies.kit.base import Report, Results
from reasonlab.studies.kit.core import overridden
from reasonlab.tasks.base import build_task
from reasonlab.tasks.glue import COLUMNS, SIZES
from reasonlab.tasks.words import PAD_ID
from tests.unit.test_hf_data import write_glue
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet

WORDS = ("the a dog cat sat on mat good bad film plan runs is was not very man woman house "
         "city river small large red blue old new he she it they we").split()
ROWS_PER_SPLIT = 12
SHRINK = {"steps": 2, "batch_size": 4, "n_train": ROWS_PER_SPLIT, "n_test": ROWS_PER_SPLIT,
          "eval_every": 1, "ckpt_every": 2, "eval_batch_size": 5, "device": "cpu",
          "optim": {"warmup_steps": 0},
          "model": {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 32}}
"""A paper-scale run shrunk in steps, data and width (every validation row is its test set)."""


def glue_folder(root: Path) -> Path:
    """All eight GLUE tasks in nyu-mll/glue's layout (<task>/<split>-00000-of-00001.parquet),
    12 rows of random sentences per split, every class present (STS-B: scores in 0-5)."""
    rng = np.random.default_rng(0)
    for task, (cols, classes, _) in COLUMNS.items():
        data: dict[str, list] = {c: [" ".join(rng.choice(WORDS, rng.integers(3, 9)))
                                     for _ in range(ROWS_PER_SPLIT)] for c in cols}
        if task == "stsb":
            data["label"] = rng.uniform(0, 5, ROWS_PER_SPLIT).round(2).tolist()
        else:
            data["label"] = (np.arange(ROWS_PER_SPLIT) % len(classes)).tolist()
        data["idx"] = list(range(ROWS_PER_SPLIT))
        write_glue(root, task, data)
    return root


@pytest.fixture
def glue(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return glue_folder(tmp_path / "glue")


def paper_runs(folder: Path | str | None):
    study = STUDIES["artificial-pretraining"]()
    study.configure({} if folder is None else {"glue": str(folder)})
    return study.runs("paper", 1)


def test_paper_scale_columns_are_glues_eight_tasks_on_the_folder_given(glue, monkeypatch):
    specs = paper_runs(glue)
    ft = [s for s in specs if s.factors["phase"] == FINETUNE]
    assert len([s for s in specs if s.factors["phase"] == PRETRAIN]) == 14
    assert len(ft) == 8 * 15
    assert [s.factors["task"] for s in ft[::15]] == list(SEED_COLUMNS)
    for s in ft:
        col, task = s.factors["task"], s.config.task
        assert (task.name, task.task, task.path) == ("glue", GLUE_TASK[col], str(glue))
        n_train, n_test = SIZES[task.task]  # BERT: 3 epochs of batch 32 over the train split
        assert (s.config.n_train, s.config.n_test, s.config.batch_size) == (n_train, n_test, 32)
        assert s.config.steps == 3 * -(-n_train // 32) and s.config.optim.lr == 2e-5
        assert s.config.model.max_seq_len == 128
        if s.factors["init"] != SCRATCH:
            assert s.config.init_run.task.corpus == s.factors["init"]
            assert s.config.model.max_seq_len <= s.config.init_run.model.max_seq_len
    assert {s.factors["init"] for s in ft} == set(inits("paper"))
    # one data asset, found in the folder given, the same for the eight tasks
    data = [a for a in needed(s.config for s in specs) if a.what == "data glue"]
    assert len(data) == 1 and data[0].found and data[0].where == str(glue)
    # a relative folder is recorded absolute (one run id per folder, whatever the cwd)
    monkeypatch.chdir(glue.parent)
    assert {s.config.task.path for s in paper_runs("glue") if s.config.task.name == "glue"
            } == {str(glue)}
    # no folder given: the Hub cache (empty here), said before anything trains
    data = [a for a in needed(s.config for s in paper_runs(None)) if a.what == "data glue"]
    assert len(data) == 1 and not data[0].found and "nyu-mll--glue" in data[0].where
    # the smaller scales' columns are WordNet's: no folder to take
    study = STUDIES["artificial-pretraining"]()
    study.configure({"glue": str(glue)})
    with pytest.raises(ConfigError, match="GLUE is read at paper scale only"):
        study.runs("cpu", 1)


def reference(config, run_dir: Path, metric: str) -> float:
    """The metric of the run's model on every validation row of the folder, one forward pass,
    computed here with scikit-learn / scipy."""
    _, model = load_run_model(run_dir)
    task = build_task(config.task)
    texts, raw = task.documents("test")
    tokens = torch.from_numpy(np.stack([task.encode(t) for t in texts]))
    with torch.no_grad():
        logits = model(tokens, torch.zeros(len(texts), 1, dtype=torch.long),
                       tokens != PAD_ID)[:, 0].float()
    pred, y = logits.argmax(-1).numpy(), raw.astype(np.int64)
    if metric == "matthews":
        return matthews_corrcoef(y, pred)
    if metric == "f1":
        return f1_score(y, pred)
    if metric == "spearman":
        grade = (logits.softmax(-1) * torch.arange(5)).sum(-1).numpy()
        return spearmanr(grade, raw).statistic
    return float((pred == y).mean())


@pytest.mark.slow
def test_a_shrunk_paper_run_trains_from_the_folder_and_gets_glues_metric(glue, tmp_path):
    """The eight scratch runs of the paper scale, shrunk, train on the folder's rows; each
    column's score is its GLUE metric on the validation split, as computed here from the
    model's predictions; the report's table is the seed's, column for column."""
    specs = overridden([s for s in paper_runs(glue) if s.factors["phase"] == FINETUNE
                        and s.factors["init"] == SCRATCH], SHRINK)
    pairs = []
    for s in specs:
        result = execute(s.config, tmp_path, quiet=True)
        pairs.append((s, {**result, "dir": str(run_dir_for(s.config, tmp_path))}))
        assert [m["step"] for m in result["curve"]] == [1, 2]
        assert s.config.model.d_model == 16 and s.config.task.path == str(glue)
    results = Results(pairs, "paper", 1, SHRINK)
    scores = pa.scores(results)
    assert list(scores) == list(SEED_COLUMNS)
    metric = {"STS-B": "spearman", "CoLA": "matthews", "MRPC": "f1", "QQP": "f1"}
    for (s, r), col in zip(pairs, scores, strict=True):
        (got,) = scores[col][SCRATCH]
        want = reference(s.config, Path(r["dir"]), metric.get(col, "accuracy"))
        assert got == pytest.approx(want, abs=1e-6), col
        if col not in metric:  # accuracy: the run's own evaluation of the validation rows
            assert got == r["final"]["acc"]
    # the report's table: every seed row, each cell ours beside the seed's number
    every = {t: {i: v[SCRATCH] for i in inits("paper")} for t, v in scores.items()}
    rep = Report("t", tmp_path)
    pa.seed_table(rep, results, every)
    text = rep.markdown()
    assert "| | seed row | ours | STS-B | QNLI | QQP | CoLA | SST-2 | MNLI | MRPC | RTE | Avg |" \
        in text.replace("|  |", "| |")
    en = next(x for x in text.splitlines() if "| Pre-train En |" in x)
    assert en.count("(0.") == 9 and f"({SEED_TABLE['Pre-train En'][0]:.2f})" in en
    assert "MRPC: F1 of the positive class" in text and "CoLA: Matthews correlation" in text
    # chance on the folder's validation rows: MRPC answers 1 on 6 of 12, F1 2p / (1 + p)
    assert re.search(r"MRPC 0\.667 \(F1 of always answering the positive class\)", text)
    assert len(ROWS) == 13


def test_a_missing_glue_folder_is_one_error_line(glue, tmp_path, capsys):
    out = tmp_path / "o"
    common = ["--seeds", "1", "--quiet", "--out", str(out)]
    assert main(["run", "artificial-pretraining", "--scale", "paper",
                 f"glue={tmp_path / 'absent'}", *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "error: study artificial-pretraining at scale paper needs what this machine lacks: "
        "data glue: NOT FOUND")
    assert f"no folder {tmp_path / 'absent'}" in err[0] and "hf download nyu-mll/glue" in err[0]
    # a folder without one of the eight tasks names it
    for f in (glue / "rte").iterdir():
        f.unlink()
    (glue / "rte").rmdir()
    assert main(["run", "artificial-pretraining", "--scale", "paper", f"glue={glue}",
                 *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GLUE rte: no train split" in err[0]
    # no folder given and none in the (empty) Hub cache
    assert main(["run", "artificial-pretraining", "--scale", "paper", *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data glue: NOT FOUND" in err[0] and "nyu-mll--glue" in err[0]
    assert not (out / "runs").exists()  # nothing trained, nothing written


def test_studies_scale_paper_says_whether_glue_was_found(glue, tmp_path, capsys, monkeypatch):
    from reasonlab import plan

    monkeypatch.setattr(plan, "study_cost", lambda configs, launches=True: plan.Cost(
        len(configs), 0.0))
    assert main(["studies", "--scale", "paper"]) == 0
    assert "- artificial-pretraining: data glue: NOT FOUND" in capsys.readouterr().out
    snapshot = tmp_path / "hub" / "datasets--nyu-mll--glue" / "snapshots" / "0"
    glue_folder(snapshot)
    assert main(["studies", "--scale", "paper"]) == 0
    assert (f"- artificial-pretraining: data glue: found ({snapshot})"
            in capsys.readouterr().out)
