"""LEGO: fine-tuning pretrained weights vs random init (Zhang et al. 2022, §4.2, Figs. 6-7).

The architecture is the one pretrained checkpoint that reaches us offline, all-MiniLM-L6-v2
(a 6-layer, d_model 384 BERT; model/pretrained.py), in three arms: random init (BERT's
N(0, 0.02)), pretrained, and pretrained with `=`, `,` and the operators renamed to arbitrary
real words (task.rename_ops, the paper's control for token semantics). A fourth claim looks at
the pretrained model before any fine-tuning: its best association and manipulation heads
(analysis/attention.py), against a random-init model of the same shape on the same sentences.

Scales: MiniLM is ~11M non-embedding parameters, ~4 s per batch-32 step on one core at 62
tokens, so the `cpu` scale shortens the chain (n = 8, first 4 supervised, extrapolation
measured on #4-#6) and runs one seed; `paper` is the paper's n = 12 with 6 supervised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import (attention_patterns, head_scores, plot_attention,
                                          reading_order, special_ids, top_heads)
from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.pretrained import MINILM, pretrained_transformer
from reasonlab.model.transformer import Transformer
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.studies.lego_common import accuracy_report, by_arm, extrapolation_gain
from reasonlab.tasks.base import build_task
from reasonlab.tasks.lego import CLAUSE_LEN
from reasonlab.train.config import TrainConfig

CKPT = "all-minilm-l6-v2"
RANDOM, PRETRAINED, RENAMED = "random init", "pretrained", "pretrained, renamed ops"
HEAD_MARGIN = 0.2
"""Best pretrained head minus best random-init head, per pattern, that counts as 'has heads'."""
CONVERGED = 0.9
"""Accuracy on the supervised positions that counts as converged."""

SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(lego=(3, 2), optim=dict(lr=1e-4, warmup_steps=1), n_train=16, n_test=8,
                  batch_size=4, steps=2, eval_every=1, ckpt_every=2, threads=1),
    # A MiniLM step is compute-bound (~2 ms per token on one core): batch 16 of 42 tokens is
    # ~1.4 s, so 3 runs x 200 steps on 2 cores fit the 15 minutes.
    "cpu": dict(lego=(8, 4), optim=dict(lr=1e-4, warmup_steps=20, weight_decay=0.01),
                n_train=10_000, n_test=300, batch_size=16, steps=200, eval_every=25,
                ckpt_every=50, threads=1),
    # The authors: Adam 5e-5, cosine over 200 epochs of 120k sentences, batch 1000.
    "paper": dict(lego=(12, 6), optim=dict(lr=5e-5, warmup_steps=0, weight_decay=0.0),
                  n_train=120_000, n_test=12_000, batch_size=1000, steps=24_000,
                  eval_every=600, ckpt_every=1200),
}


def lego(scale: Scale, **kw: Any) -> dict[str, Any]:
    n, n_train = SCALES[scale]["lego"]
    return {"name": "lego", "group": "z2", "n_clauses": n, "n_train_vars": n_train, **kw}


def minilm_spec(arm: str, seed: int, scale: Scale, pretrained: bool, **over: Any) -> RunSpec:
    """A run of the MiniLM architecture; `over` may set task keys (task_kw) or a mimic dict."""
    base = {k: v for k, v in SCALES[scale].items() if k != "lego"}
    task = lego(scale, **over.pop("task_kw", {}))
    model = {"dropout": 0.1} if scale == "paper" else {}
    if not pretrained:
        model.update(MINILM.architecture)
    cfg = {**base, **over, "task": task, "seed": seed, "model": model}
    if pretrained:
        cfg["pretrained"] = CKPT
    return RunSpec(arm, seed, TrainConfig.build(cfg))


def missing_weights() -> str | None:
    return None if MINILM.available() else f"needs the pretrained weights: {MINILM.install_hint}"


class NeedsMiniLM(Study):
    """A study that fine-tunes all-MiniLM-L6-v2: it declares the weights, so tests skip it with
    the install hint when the package is absent."""

    @classmethod
    def missing(cls) -> str | None:
        return missing_weights()


def require_weights() -> None:
    if why := missing_weights():
        raise ConfigError(f"this study {why}")


def extrapolation_span(spec: RunSpec) -> slice:
    task = spec.config.task
    n_train = task.n_train_vars  # type: ignore[attr-defined]
    return slice(n_train, min(n_train + 3, task.n_clauses))  # type: ignore[attr-defined]


def converge_steps(curve: list[dict[str, Any]]) -> float:
    """First evaluated step with accuracy on the supervised positions >= CONVERGED."""
    return next((float(m["step"]) for m in curve if m["acc_supervised"] >= CONVERGED),
                float("inf"))


def converge_verdict(claim: Claim, fast: list[float], slow: list[float],
                     names: tuple[str, str]) -> Verdict:
    ev = (f"first step with supervised accuracy >= {CONVERGED}: {names[0]} {fast}, "
          f"{names[1]} {slow} (inf = never); needs {names[0]} earlier in every seed")
    if all(np.isinf(fast)):
        return Verdict(claim, "inconclusive" if all(np.isinf(slow)) else "not reproduced", ev)
    ok = all(f < s for f, s in zip(fast, slow, strict=True))
    return Verdict(claim, "reproduced" if ok else "not reproduced", ev)


def head_evidence(task_cfg: dict[str, Any], out: Path, n: int = 64
                  ) -> tuple[dict[str, dict[str, torch.Tensor]], Any, Any]:
    """Head scores of the pretrained model (no fine-tuning) and of a random-init model of the
    same shape, on the same n sentences; draws the best heads' maps (chain order, §4.2.1)."""
    task = build_task(task_cfg)
    batch = task.sample(np.random.default_rng(0), n)
    special = special_ids(task.vocab.tokens)
    models = {PRETRAINED: pretrained_transformer(CKPT, task.vocab.tokens, task.n_classes,
                                                 task.seq_len).eval(),
              RANDOM: Transformer(ModelConfig.build({
                  **MINILM.architecture, "vocab_size": len(task.vocab),
                  "n_classes": task.n_classes, "max_seq_len": task.seq_len}),
                  generator=torch.Generator().manual_seed(0)).eval()}
    scores, patterns = {}, {}
    for arm, m in models.items():
        patterns[arm] = attention_patterns(m, batch.tokens)
        scores[arm] = head_scores(patterns[arm], batch.tokens, special=special,
                                  names=["association", "manipulation", "broadcast"])
    best = [top_heads(scores[PRETRAINED][k], 1)[0][:2] for k in ("association", "manipulation")]
    order = reading_order(task.seq_len, batch.label_pos[0].tolist(), CLAUSE_LEN)
    plot_attention(patterns[PRETRAINED][:, 0], [task.vocab.tokens[t] for t in
                                                batch.tokens[0].tolist()],
                   out / "pretrained_heads.png", heads=best, order=order,
                   scores=scores[PRETRAINED],
                   title="pretrained, no fine-tuning: best association (left) and\n"
                         "manipulation (right) head; clauses in chain order")
    return scores, task, batch


def heads_verdict(claim: Claim, scores: dict[str, dict[str, torch.Tensor]]) -> Verdict:
    parts, ok = [], True
    for k in ("association", "manipulation"):
        p = top_heads(scores[PRETRAINED][k], 3)
        r = top_heads(scores[RANDOM][k], 1)[0][2]
        ok &= p[0][2] - r >= HEAD_MARGIN
        parts.append(f"{k}: pretrained top heads " + ", ".join(f"L{l}H{h} {v:.2f}"
                                                              for l, h, v in p)
                     + f" vs random-init best {r:.2f}")
    ev = "; ".join(parts) + f"; needs best pretrained - best random >= {HEAD_MARGIN} for both"
    return Verdict(claim, "reproduced" if ok else "not reproduced", ev)


@STUDIES.register("lego-pretraining")
class LegoPretraining(NeedsMiniLM):
    name = "lego-pretraining"
    title = "LEGO: pretrained (all-MiniLM-L6-v2) vs random init"
    claims = (
        Claim("extrapolation", "Pretrained weights extrapolate better than random init",
              "Zhang et al. 2022, §4.2, Fig. 6"),
        Claim("convergence", "Pretrained weights converge in fewer steps than random init",
              "Zhang et al. 2022, §4.2, Fig. 6"),
        Claim("renaming", "Renaming `=`, `,` and the operators to arbitrary tokens keeps the "
              "advantage over random init", "Zhang et al. 2022, §4.2.1"),
        Claim("heads", "Before fine-tuning, the pretrained model has association and "
              "manipulation heads", "Zhang et al. 2022, §4.2.1, Fig. 7"),
    )
    cpu_minutes = 10.4  # measured on the idle 2-core machine
    default_seeds = {"smoke": 1, "cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        require_weights()
        return [s for seed in range(seeds) for s in (
            minilm_spec(RANDOM, seed, scale, False),
            minilm_spec(PRETRAINED, seed, scale, True),
            minilm_spec(RENAMED, seed, scale, True, task_kw={"rename_ops": True}))]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        arms = by_arm(results)
        n_train = extrapolation_span(results[0][0]).start
        rep, finals = accuracy_report(self.title, arms, out, n_train)
        first = results[0][0].config
        scores, _, _ = head_evidence(first.task.model_dump(), out, n=min(64, first.n_test))
        rep.figures.append(("pretrained_heads.png", "Pretrained model before fine-tuning: best "
                            "association and manipulation heads"))
        steps = {a: [converge_steps(r["curve"]) for r in rs] for a, rs in arms.items()}
        rep.verdicts = [
            extrapolation_gain(self.claims[0], finals, PRETRAINED, RANDOM, n_train),
            converge_verdict(self.claims[1], steps[PRETRAINED], steps[RANDOM],
                             (PRETRAINED, RANDOM)),
            extrapolation_gain(self.claims[2], finals, RENAMED, RANDOM, n_train),
            heads_verdict(self.claims[3], scores),
        ]
        return rep
