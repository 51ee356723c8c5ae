"""A LayerNorm on the embeddings undoes small initialization (our finding; no paper
or public code reports it).

The anchor paper (Zhang et al. 2024, arXiv 2405.05409, §3) finds that a small initialization
(large gamma) gives inferential solutions. The knob acts through the scale of everything a
layer sees, the embeddings included. BERT's post-LN puts a LayerNorm on the summed embeddings
W_E[x] + W_pos[p]; it rescales them to unit RMS whatever their initial scale, so layer 1 sees
the same input at every gamma. The authors' model has no such LayerNorm (docs/papers.md).

Arms, all at the phase study's smallest initialization (largest gamma) and depth 2:
  - "authors": the authors' layers (the same runs as that cell of `anchors-init-phase`);
  - "authors + embedding LayerNorm": the same with one layer added;
  - "BERT post-LN (our previous)": what the anchor studies used before (embedding LayerNorm,
    biases, GELU, eps 1e-12).
Besides the solution type, the report shows the RMS of layer 1's input (`blocks.0.
hook_resid_pre`) on the test set: about 1 with the LayerNorm, the initial scale without.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.anchors.analysis import (heldout_section, layer1_rms, run_solution,
                                                share_of)
from reasonlab.studies.anchors.common import DEPTH, GRID, PHASE_SEEDS, STRUCTURES, cell, recipe
from reasonlab.studies.anchors.verdicts import undoes_verdict
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid


@STUDIES.register("anchors-embedding-norm")
class AnchorsEmbeddingNorm(Study):
    title = "Anchor functions: a LayerNorm on the embeddings and small initialization"
    # measured at 3 seeds: 142 s (6 new runs; the authors' arm is the phase study's cell); at
    # PHASE_SEEDS 24 new runs, estimated 4 x 2.4 = 9.6 min after anchors-init-phase
    default_seeds = {"cpu": PHASE_SEEDS, "paper": PHASE_SEEDS}
    unit = "one run per training seed and model structure"
    cpu_after = ("anchors-init-phase",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        small = cell(max(GRID[scale][0]), DEPTH[scale])  # the phase grid's smallest init
        return [s for arm in STRUCTURES
                for s in grid(recipe(scale, arm), {arm: small}, seeds=seeds)]

    def analyse(self, results: Results, out: Path) -> Report:
        recs = [{"arm": spec.arm, "layer1_rms": layer1_rms(result),
                 **run_solution(spec, result, out).to_json()} for spec, result in results]
        by_arm = {a: [r for r in recs if r["arm"] == a] for a in STRUCTURES}
        share = {a: share_of(rs, "inferential") for a, rs in by_arm.items()}
        rep = heldout_section(Report(self.title, out).recipe(results),
                              results, {(a, f"{share[a]:.2f}"): rs for a, rs in by_arm.items()},
                              ["structure", "inferential share"],
                              ("inferential", "symmetric", "seen_acc", "layer1_rms"),
                              " Layer-1 input RMS: root mean square of "
                              "`blocks.0.hook_resid_pre` on the test set, after training.")
        rep.verdicts = [undoes_verdict(self.claim("embedding-ln"), by_arm["authors"],
                                       by_arm["authors + embedding LayerNorm"])]
        return rep
