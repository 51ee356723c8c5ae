"""LEGO: fine-tuning pretrained weights vs random init (Zhang et al. 2022, §4.2, Figs. 6-7).

The architecture is the one pretrained checkpoint that reaches us offline, all-MiniLM-L6-v2
(a 6-layer, d_model 384 BERT; model/pretrained.py), in three arms: random init (BERT's
N(0, 0.02)), pretrained, and pretrained with `=`, `,` and the operators renamed to arbitrary
real words (task.rename_ops, the paper's control for token semantics). Task 1's points are the
real BERT tokens `0` / `1`, as the authors write them (model/pretrained.py, TOKEN_ALIASES).
A fourth claim looks at the pretrained model before any fine-tuning: its best association and
manipulation heads (analysis/attention.py), against a random-init model of the same shape on
the same sentences. The association head is the paper's (§4.2.1: a value moved between two
occurrences of the same VARIABLE, oblivious to position), so it is scored on variable queries
only and must also beat two positional controls: a content-blind "same slot of every clause"
head, and the head itself on sentences whose clauses were permuted.

Scales: MiniLM is ~11M non-embedding parameters, ~4 s per batch-32 step on one core at 62
tokens, so the `cpu` scale shortens the chain (n = 8, first 4 supervised, extrapolation
measured on #4-#6) and runs one seed; `paper` is the paper's n = 12 with 6 supervised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import (association_controls, attention_patterns,
                                          head_scores, plot_attention, reading_order,
                                          special_ids, top_heads)
from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.pretrained import MINILM, pretrained_transformer
from reasonlab.model.transformer import Transformer
from reasonlab.report import table
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
    # The authors: Adam 5e-5, cosine over 200 epochs of 120k sentences, batch 1000, no
    # gradient clipping.
    "paper": dict(lego=(12, 6), optim=dict(lr=5e-5, warmup_steps=0, weight_decay=0.0,
                                           grad_clip=None),
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


def lego_head_scores(pattern: torch.Tensor, batch: Any, task: Any
                     ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(every head score, the association controls) of attention `pattern` [layers, batch,
    heads, T, T] on LEGO sentences `batch` (analysis/attention.py)."""
    variables = [task.vocab.id(v) for v in task.var_names]
    scores = head_scores(pattern, batch.tokens, batch.pad_mask, special_ids(task.vocab.tokens),
                         variables=variables)
    controls = association_controls(pattern, batch.tokens, variables, CLAUSE_LEN,
                                    pad_mask=batch.pad_mask)
    return scores, controls


def head_evidence(task_cfg: dict[str, Any], out: Path, n: int = 64
                  ) -> tuple[dict[str, dict[str, torch.Tensor]],
                             dict[str, dict[str, torch.Tensor]]]:
    """Head scores and association controls of the pretrained model (no fine-tuning) and of a
    random-init model of the same shape, on the same n sentences; draws the best heads' maps
    (chain order, §4.2.1)."""
    task = build_task(task_cfg)
    batch = task.sample(np.random.default_rng(0), n)
    models = {PRETRAINED: pretrained_transformer(CKPT, task.vocab.tokens, task.n_classes,
                                                 task.seq_len).eval(),
              RANDOM: Transformer(ModelConfig.build({
                  **MINILM.architecture, "vocab_size": len(task.vocab),
                  "n_classes": task.n_classes, "max_seq_len": task.seq_len}),
                  generator=torch.Generator().manual_seed(0)).eval()}
    scores, controls, patterns = {}, {}, {}
    for arm, m in models.items():
        patterns[arm] = attention_patterns(m, batch.tokens)
        scores[arm], controls[arm] = lego_head_scores(patterns[arm], batch, task)
    best = [top_heads(scores[PRETRAINED][k], 1)[0][:2]
            for k in ("association_variable", "manipulation")]
    order = reading_order(task.seq_len, batch.label_pos[0].tolist(), CLAUSE_LEN)
    shown = {k: scores[PRETRAINED][k] for k in ("association", "association_variable",
                                                "manipulation", "broadcast")}
    plot_attention(patterns[PRETRAINED][:, 0], [task.vocab.tokens[t] for t in
                                                batch.tokens[0].tolist()],
                   out / "pretrained_heads.png", heads=best, order=order, scores=shown,
                   title="pretrained, no fine-tuning: best association (variable queries, "
                         "left) and\nmanipulation (right) head; clauses in chain order")
    return scores, controls


def association_table(controls: dict[str, dict[str, torch.Tensor]], k: int = 3) -> str:
    """Markdown: each model's top heads by the variable-only association score, beside the
    any-token score and the positional controls."""
    rows = []
    for arm, c in controls.items():
        for l, h, v in top_heads(c["variables"], k):
            rows.append([arm, f"L{l}H{h}", f"{c['any token'][l, h]:.2f}", f"{v:.2f}",
                         f"{c['variables, permuted'][l, h]:.2f}"])
        rows.append([arm, "positional head (same slot mod 5)",
                     f"{float(c['positional head, any token']):.2f}",
                     f"{float(c['positional head']):.2f}", "-"])
    return ("## Association heads and their positional controls (§4.2.1)\n\n"
            + table(["model", "head", "any token", "variables", "variables, clauses permuted"],
                    rows)
            + "\n\n'any token': mass on other occurrences of the query's token (every query "
            "whose token repeats); 'variables': the same over variable queries only, the "
            "paper's association head; 'clauses permuted': that head's variable score on the "
            "same sentences with their clauses shuffled (what its positional habits earn); the "
            "positional head attends to the same slot of every other clause, content-blind.")


def heads_verdict(claim: Claim, scores: dict[str, dict[str, torch.Tensor]],
                  controls: dict[str, dict[str, torch.Tensor]]) -> Verdict:
    """Association: the best pretrained head by the variable-only score must beat the best
    random-init head AND its own positional controls (clause-permuted score, positional head)
    by HEAD_MARGIN. Manipulation: the best pretrained head must beat the best random-init head
    by HEAD_MARGIN."""
    parts, ok = [], True
    c = controls[PRETRAINED]
    (l, h, v), *_ = top = top_heads(c["variables"], 3)
    r = top_heads(controls[RANDOM]["variables"], 1)[0][2]
    control = max(float(c["variables, permuted"][l, h]), float(c["positional head"]))
    ok &= v - r >= HEAD_MARGIN and v - control >= HEAD_MARGIN
    parts.append("association (variable queries): pretrained top heads "
                 + ", ".join(f"L{a}H{b} {x:.2f}" for a, b, x in top)
                 + f" vs random-init best {r:.2f} and positional control {control:.2f} (L{l}H{h}"
                 f" on clause-permuted sentences {float(c['variables, permuted'][l, h]):.2f}, "
                 f"same-slot head {float(c['positional head']):.2f})")
    p = top_heads(scores[PRETRAINED]["manipulation"], 3)
    r = top_heads(scores[RANDOM]["manipulation"], 1)[0][2]
    ok &= p[0][2] - r >= HEAD_MARGIN
    parts.append("manipulation: pretrained top heads " + ", ".join(f"L{a}H{b} {x:.2f}"
                                                                 for a, b, x in p)
                 + f" vs random-init best {r:.2f}")
    ev = ("; ".join(parts) + f"; needs the best pretrained head >= {HEAD_MARGIN} above the "
          "best random-init head for both, and the association head also >= "
          f"{HEAD_MARGIN} above its positional control")
    return Verdict(claim, "reproduced" if ok else "not reproduced", ev)


def substitution_note(spec: RunSpec) -> str:
    """What fine-tuning all-MiniLM-L6-v2 instead of BERT-base can and cannot show."""
    n_layers = MINILM.architecture["n_layers"]
    n_train = spec.config.task.n_train_vars  # type: ignore[attr-defined]
    n = spec.config.task.n_clauses  # type: ignore[attr-defined]

    def span(lo: int, hi: int) -> str:
        return f"#{lo}" if lo == hi else f"#{lo}-#{hi}"

    cut = max(n_train, min(n, n_layers))  # first unsupervised depth out of a loop's reach
    many = "positions {} are" if cut - n_train > 1 else "position {} is"
    within = (f"the unsupervised {many.format(span(n_train, cut - 1))} within that reach"
              if cut > n_train else "no unsupervised position is within that reach")
    beyond = f", {span(cut, n - 1)} beyond it" if n > cut else ""
    return (
        "## What the all-MiniLM-L6-v2 substitution can and cannot show\n\n"
        "No BERT-base weights reach us offline, so the pretrained model is all-MiniLM-L6-v2: a "
        "BERT-family encoder (post-LN, the same uncased WordPiece tokens) but 6 layers x 384, "
        "distilled and then trained as a sentence-embedding model, not BERT-base's 12 x 768 "
        "masked-language-model checkpoint. It can show whether pretrained BERT-family weights "
        "carry association and manipulation heads, and whether they make LEGO faster to fit "
        "and better extrapolated than random init of the same shape. It cannot stand for the "
        "paper's BERT-base numbers: with 6 layers a one-layer-per-hop loop resolves chain "
        f"depth d only when d + 1 <= {n_layers}, so it has no room past #{n_layers - 1} (here "
        f"{within}{beyond}); and its sentence-embedding "
        "training may have reshaped the heads that BERT's pretraining produced.")


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
        Claim("heads", "Before fine-tuning, the pretrained model has association heads "
              "(between occurrences of the same variable, beyond what position explains) and "
              "manipulation heads", "Zhang et al. 2022, §4.2.1, Fig. 7"),
    )
    cpu_minutes = 6.7  # measured: 404 s on the 2-core machine (RESULTS_VERSION 3)
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
        scores, controls = head_evidence(first.task.model_dump(), out, n=min(64, first.n_test))
        rep.sections += [association_table(controls), substitution_note(results[0][0])]
        rep.figures.append(("pretrained_heads.png", "Pretrained model before fine-tuning: best "
                            "association (variable queries) and manipulation heads"))
        steps = {a: [converge_steps(r["curve"]) for r in rs] for a, rs in arms.items()}
        rep.verdicts = [
            extrapolation_gain(self.claims[0], finals, PRETRAINED, RANDOM, n_train),
            converge_verdict(self.claims[1], steps[PRETRAINED], steps[RANDOM],
                             (PRETRAINED, RANDOM)),
            extrapolation_gain(self.claims[2], finals, RENAMED, RANDOM, n_train),
            heads_verdict(self.claims[3], scores, controls),
        ]
        return rep
