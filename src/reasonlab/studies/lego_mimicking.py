"""LEGO: mimicking initialisation vs random and pretrained (Zhang et al. 2022, §4.2.2, Fig. 6).

Three arms of the all-MiniLM-L6-v2 architecture (see `lego-pretraining`): random init,
pretrained, and random init followed by mimicking (model/mimic.py): head 0 of every layer
learns the manipulation pattern (kernel [1, 2, 4, 2, 1]) and head 1 the association pattern on
random LEGO sentences, with no pretraining data, before the same fine-tuning. Mimicking runs as
the authors' script does (train mode, cosine lr, KL summed over layers and heads); at paper
scale the fine-tuning of all three arms uses that script's batch of 400 (FINETUNE: 300 steps an
epoch of 120k sentences, 200 epochs), not lego-pretraining's 1000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.studies.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Verdict, grid
from reasonlab.studies.lego_common import (PRETRAINED, RANDOM, NeedsMiniLM, accuracy_report,
                                           extrapolation_span, minilm_arms, minilm_recipe,
                                           span_means)
from reasonlab.studies.lego_heads import mimicked_heads, substitution_note
from reasonlab.studies.verdicts import gain_verdict, requires, threshold_verdict, at_least

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
    """Mimicking closes >= CLOSED of the random-to-pretrained gap, which must itself exist
    (gain_verdict of pretrained over random reproduced)."""
    gap = gain_verdict(claim, span_means(finals[PRETRAINED], span),
                       span_means(finals[RANDOM], span), (PRETRAINED, RANDOM), what)
    r, p, m = (float(span_means(finals[a], span).mean()) for a in (RANDOM, PRETRAINED, MIMIC))
    frac = (m - r) / (p - r) if p != r else float("nan")
    ev = (f"{what}: random {r:.3f}, pretrained {p:.3f}, mimicking {m:.3f}; gap closed "
          f"{frac:.2f} (needs >= {CLOSED}, and a pretrained advantage: {gap.status})")
    return requires(threshold_verdict(claim, frac, ev, at_least(CLOSED)),
                    gap.status == "reproduced", "no pretrained advantage to close")


@STUDIES.register("lego-mimicking")
class LegoMimicking(NeedsMiniLM):
    title = "LEGO: mimicking initialisation vs random and pretrained init"
    claims = (Claim("closes-gap", "Mimicking association and manipulation heads closes most of "
                    "the gap between random and pretrained init, with no pretraining data",
                    "Zhang et al. 2022, §4.2.2, Fig. 6"),)
    cpu_minutes = 4.7  # measured: 282 s; its random and pretrained runs reused
    cpu_after = "lego-pretraining"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        mimic = {"heads": {0: "manipulation", 1: "association"}, **MIMIC_SCALES[scale]}
        arms = minilm_arms()
        arms[MIMIC] = {**arms[RANDOM], "mimic": mimic}
        return grid(minilm_recipe(scale), arms, [FINETUNE.get(scale, {})], seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        span = extrapolation_span(results.first)
        rep, finals = accuracy_report(self.title, results, out, span.start)
        rep.sections += [mimicked_heads(next(s for s, _ in results if s.arm == MIMIC)),
                         substitution_note(results.first)]
        rep.verdicts = [closed_verdict(self.claims[0], finals, span,
                                       f"mean accuracy #{span.start}-#{span.stop - 1}")]
        return rep
