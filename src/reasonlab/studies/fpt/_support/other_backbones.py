"""The base of fpt-backbones and fpt-vit (backbones.py, vit.py): FPT on other pretrained
models than GPT-2 (Lu et al. 2021, slides "Model - differences with GPT": GPT-2 / BERT / T5 /
Longformer, ListOps 38.4 / 38.3 / 15.4 / 17.0%, CIFAR-10 68.2 / 68.8 / 64.7 / 66.8%;
"Importance of language pre-training", ViT row: ListOps 37.4, MNIST 97.8, CIFAR-10 72.5%
against FPT's 38.4 / 98.0 / 68.2%).

Each row is the same FPT recipe (fpt.common) on another frozen backbone, read from a local
Hugging Face folder or cache (model/hf.py; `reasonlab run` says before training which it needs
and whether each was found): bert-base-uncased, longformer-base-4096, vit-base-patch16-224,
beside GPT-2 small. Which rows map onto our Transformer (model/hf_families.py):
  BERT        yes: post-LN encoder, learned positions
  Longformer  where a sequence fits its sliding window (257 tokens: every key within reach of
              every query, so its banded attention is full attention): CIFAR-10's 64 patches,
              not ListOps' 512 tokens, whose cell is not run and says so
  ViT         yes: a pre-LN encoder; as the authors, a fresh zero position table that trains
  T5          no: its encoder adds learned relative-position buckets to the attention logits
              (and leaves them unscaled); our attention has absolute or rotary positions only,
              so its row is not run (claims.toml: untested, with that reason)
A row's folder can be given on the command line: `gpt2=`, `bert=`, `longformer=`, `vit=`
(hf:/path or a bare path). The smoke scale runs tiny random checkpoints of each family
(model/tiny_hf.py: `tiny-gpt2`, `tiny-bert`, ...), so the code path is exercised offline.
There is no cpu scale: none of these weights installs offline, and a random checkpoint tests
no claim about pretraining.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasonlab.model.hf_families import UNMAPPED
from reasonlab.model.pretrained import as_source, checkpoint
from reasonlab.studies.fpt._support.backbone import resolve
from reasonlab.studies.fpt._support.slides import arm
from reasonlab.studies.fpt.common import (FPTStudy, accuracy_table, by_task, finals, recipe,
                                          task_baselines, tasks)
from reasonlab.studies.kit.base import Report, Results, RunSpec, Scale, grid
from reasonlab.tasks.base import build_task

GPT2, BERT, LONGFORMER, T5, VIT = "GPT-2", "BERT", "Longformer", "T5", "ViT"
PAPER_ROWS = {GPT2: "gpt2", BERT: "bert", LONGFORMER: "longformer", VIT: "vit"}
"""Row -> its FPT_BACKBONES entry at paper scale."""
TINY = {GPT2: "tiny-gpt2", BERT: "tiny-bert", LONGFORMER: "tiny-longformer", VIT: "tiny-vit"}
"""Row -> its tiny random checkpoint at smoke scale (model/tiny_hf.py)."""
OPTIONS = {"gpt2": GPT2, "bert": BERT, "longformer": LONGFORMER, "vit": VIT}
"""Command-line option -> the row whose folder it gives."""
SLIDE = {GPT2: {"ListOps (fpt2021)": "38.4", "MNIST": "98.0", "CIFAR-10": "68.2"},
         BERT: {"ListOps (fpt2021)": "38.3", "CIFAR-10": "68.8"},
         T5: {"ListOps (fpt2021)": "15.4", "CIFAR-10": "64.7"},
         LONGFORMER: {"ListOps (fpt2021)": "17.0", "CIFAR-10": "66.8"},
         VIT: {"ListOps (fpt2021)": "37.4", "MNIST": "97.8", "CIFAR-10": "72.5"}}
"""The slides' numbers per row and task (%)."""


class OtherBackbones(FPTStudy):
    """FPT on each of `rows` (one frozen backbone each) and every task of `task_names`."""

    scales = ("smoke", "paper")
    default_seeds = {"paper": 5}  # at 3 the power is poor (fpt/calibration.py N_PAPER)
    rows: tuple[str, ...] = ()
    task_names: dict[Scale, tuple[str, ...]] = {}
    slide_rows: tuple[str, ...] = ()
    """The slide's rows that are not run (the report says why)."""
    not_run = "a row's checkpoint holds fewer positions than the task's sequences"
    """Why a cell of the accuracy table may be '-'."""
    given: dict[str, str] = {}

    def configure(self, options: Mapping[str, Any]) -> None:
        self.given = {OPTIONS[k]: as_source(v) for k, v in options.items()}

    @classmethod
    def missing(cls) -> str | None:
        return None  # paper: kit/assets.py says what is absent; smoke writes its own

    def source(self, row: str, scale: Scale) -> str:
        """The backbone a row runs: the option's folder, the paper's checkpoint, or (smoke)
        the family's tiny random checkpoint."""
        if row in self.given:
            return self.given[row]
        return TINY[row] if scale == "smoke" else PAPER_ROWS[row]

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """FPT on each row and task, except where the task's sequences exceed what the row's
        checkpoint maps (Longformer past its window)."""
        specs = []
        for row in self.rows:
            src = self.source(row, scale)
            b = resolve(src)
            fits = checkpoint(b.checkpoint).max_positions
            for t in self.task_names[scale]:
                point = tasks(scale)[t]
                if build_task(point["task"]).seq_len > fits:
                    continue  # the report says which cells were not run, and why
                specs += grid(recipe(scale), {row: arm(b, scale)}, sweep={t: point},
                              seeds=seeds, factors={"backbone": src}, sweep_factor="task")
        return specs

    def table(self, results: Results, out: Path) -> tuple[Report, dict[str, Any]]:
        values = finals(by_task(results))
        rep = Report(self.title, out).recipe(results, note=self.note(results))
        rows = [*self.rows, *([T5] if T5 in self.slide_rows else [])]
        rep.add("Accuracy (%)", "Test accuracy at the end of training, mean over seeds; in "
                f"brackets the slide's. '-': not run ({self.not_run}).\n\n"
                + accuracy_table(values, rows, SLIDE, task_baselines(results)))
        return rep, values

    def note(self, results: Results) -> str:
        used = {s.arm: s.factors["backbone"] for s, _ in results}
        return ("Backbones: " + "; ".join(f"{r}: {_named(src)}" for r, src in used.items())
                + (f". T5: not run, {UNMAPPED['t5']}." if T5 in self.slide_rows else "."))


def row_options(rows: tuple[str, ...]) -> dict[str, str]:
    """The `ROW=SOURCE` options of a study with these rows."""
    return {k: f"the {row} row's checkpoint: a folder (hf:/path, or a path) or a Hub name "
               "(hf:ORG/NAME) or registry name" for k, row in OPTIONS.items() if row in rows}


def _named(src: str) -> str:
    title = resolve(src).title
    return src if title == src else f"{title} ({src})"
