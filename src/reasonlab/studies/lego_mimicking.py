"""LEGO: mimicking initialisation vs random and pretrained (Zhang et al. 2022, §4.2.2, Fig. 6).

Three arms of the all-MiniLM-L6-v2 architecture (see `lego-pretraining`): random init,
pretrained, and random init followed by mimicking (train/mimic.py): head 0 of every layer
learns the manipulation pattern (kernel [1, 2, 4, 2, 1]) and head 1 the association pattern on
random LEGO sentences, with no pretraining data, before the same fine-tuning. Mimicking runs as
the authors' script does (train mode, cosine lr, KL summed over layers and heads); at paper
scale the fine-tuning of all three arms uses that script's batch of 400 (FINETUNE: 300 steps an
epoch of 120k sentences, 200 epochs), not lego-pretraining's 1000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import attention_patterns
from reasonlab.report import table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Verdict
from reasonlab.studies.lego_common import accuracy_report, by_arm, gain_verdict, span_means
from reasonlab.studies.lego_pretraining import (PRETRAINED, RANDOM, NeedsMiniLM,
                                                extrapolation_span, lego_head_scores,
                                                minilm_spec, require_weights,
                                                substitution_note)
from reasonlab.tasks.base import build_task
from reasonlab.train.loop import build_model

MIMIC = "mimicking init"
CLOSED = 0.5
"""Fraction of the pretrained-vs-random gap that mimicking must close ('most of the gap')."""

MIMIC_SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(steps=2, batch_size=4, lr=1e-3),
    # 60 steps x batch 16 at lr 1e-3 took the loss from 3.9 to ~0.6 in a probe run (~2.5 s a
    # step on one core); in the measured cpu run the heads reached manipulation ~0.53 and
    # association ~0.65 in every layer (README). Re-measured with the association scores of
    # issue 18 (mimicking as the authors: train mode, cosine, summed KL): manipulation 0.46-0.52
    # (0.99 with self), association 0.61-0.64 on any token but 0.03-0.04 on variable queries,
    # at its clause-permuted control (0.03): the head links `=`, `,` and ops, not variables
    # (eval / constant / mean: 0.03-0.13, the same picture).
    "cpu": dict(steps=60, batch_size=16, lr=1e-3),
    "paper": dict(steps=1000, batch_size=200, lr=5e-5),  # authors: 10 epochs x 100 steps
}


FINETUNE: dict[Scale, dict[str, Any]] = {
    # The authors' mimicking script fine-tunes with batch 400: 60k steps = 200 epochs of 120k
    # sentences (issue 18); evaluated every 5 epochs.
    "paper": dict(batch_size=400, steps=60_000, eval_every=1500, ckpt_every=3000),
}
"""Fine-tuning overrides of this study's arms, per scale (none: lego-pretraining's recipe, so
its random and pretrained runs are reused)."""


def closed_verdict(claim: Claim, finals: dict[str, list[list[float]]], span: slice,
                   what: str) -> Verdict:
    gap = gain_verdict(claim, span_means(finals[PRETRAINED], span),
                       span_means(finals[RANDOM], span), (PRETRAINED, RANDOM), what)
    r, p, m = (float(span_means(finals[a], span).mean()) for a in (RANDOM, PRETRAINED, MIMIC))
    frac = (m - r) / (p - r) if p != r else float("nan")
    ev = (f"{what}: random {r:.3f}, pretrained {p:.3f}, mimicking {m:.3f}; gap closed "
          f"{frac:.2f} (needs >= {CLOSED}, and a pretrained advantage: {gap.status})")
    if gap.status != "reproduced":
        return Verdict(claim, "inconclusive", ev)
    return Verdict(claim, "reproduced" if frac >= CLOSED else "not reproduced", ev)


@STUDIES.register("lego-mimicking")
class LegoMimicking(NeedsMiniLM):
    name = "lego-mimicking"
    title = "LEGO: mimicking initialisation vs random and pretrained init"
    claims = (Claim("closes-gap", "Mimicking association and manipulation heads closes most of "
                    "the gap between random and pretrained init, with no pretraining data",
                    "Zhang et al. 2022, §4.2.2, Fig. 6"),)
    cpu_minutes = 4.7  # measured: 282 s; its random and pretrained runs reused
    cpu_after = "lego-pretraining"
    default_seeds = {"smoke": 1, "cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        require_weights()
        mimic = {"heads": {0: "manipulation", 1: "association"}, **MIMIC_SCALES[scale]}
        tune = FINETUNE.get(scale, {})
        return [s for seed in range(seeds) for s in (
            minilm_spec(RANDOM, seed, scale, False, **tune),
            minilm_spec(PRETRAINED, seed, scale, True, **tune),
            minilm_spec(MIMIC, seed, scale, False, mimic=mimic, **tune))]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        span = extrapolation_span(results[0][0])
        rep, finals = accuracy_report(self.title, by_arm(results), out, span.start)
        rep.sections += [mimicked_heads(next(s for s, _ in results if s.arm == MIMIC)),
                         substitution_note(results[0][0])]
        rep.verdicts = [closed_verdict(self.claims[0], finals, span,
                                       f"mean accuracy #{span.start}-#{span.stop - 1}")]
        return rep


def mimicked_heads(spec: RunSpec) -> str:
    """Head scores of the mimicking init before fine-tuning (rebuilt: same seed, same
    weights), per layer, for the two mimicked heads: did mimicking take? The association head
    is scored on any repeated token (what it was trained to mimic) and on variable queries
    only (the paper's association head), beside the positional controls; the manipulation head
    without and with its own position (a perfect mimic of [1, 2, 4, 2, 1] scores 0.6 / 1.0)."""
    model = build_model(spec.config)
    task = build_task(spec.config.task)
    batch = task.sample(np.random.default_rng(0), min(64, spec.config.n_test))
    with torch.no_grad():
        s, c = lego_head_scores(attention_patterns(model, batch.tokens, batch.pad_mask), batch,
                                task)
    rows = [[str(l), f"{s['manipulation'][l, 0]:.2f}", f"{s['manipulation_self'][l, 0]:.2f}",
             f"{s['association'][l, 1]:.2f}", f"{s['association_variable'][l, 1]:.2f}",
             f"{c['variables, permuted'][l, 1]:.2f}",
             f"{s['manipulation'][l, 2:].mean():.2f}", f"{s['association'][l, 2:].mean():.2f}"]
            for l in range(s["association"].shape[0])]
    return ("## Mimicking init before fine-tuning: head scores per layer\n\n"
            + table(["layer", "head 0 manipulation", "head 0 manipulation (self incl.)",
                     "head 1 association (any token)", "head 1 association (variables)",
                     "head 1 (variables, clauses permuted)", "other heads manipulation (mean)",
                     "other heads association (mean)"], rows)
            + "\n\nPositional control: a content-blind head attending to the same slot of every "
            f"clause scores {float(c['positional head, any token']):.2f} on any token and "
            f"{float(c['positional head']):.2f} on variables.")
