"""A LayerNorm on the embeddings undoes small initialization (our finding, issue 17; no paper
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
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.solutions import FIT_THRESHOLD, MAJORITY
from reasonlab.model import run_with_cache
from reasonlab.report import table
from reasonlab.runs import load_run_model
from reasonlab.studies.anchors_common import STRUCTURES, anchor_config, run_solution
from reasonlab.studies.anchors_init_phase import CLAIM_MAJORITY, GRID
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.train.loop import make_data

DEPTH: dict[Scale, int] = {"smoke": 1, "cpu": 2, "paper": 2}


def gamma(scale: Scale) -> float:
    """The phase grid's smallest initialization (largest gamma) at this scale."""
    return max(GRID[scale][0])


@STUDIES.register("anchors-embedding-norm")
class AnchorsEmbeddingNorm(Study):
    name = "anchors-embedding-norm"
    title = "Anchor functions: a LayerNorm on the embeddings and small initialization"
    claims = (
        Claim("embedding-ln", "A LayerNorm on the embeddings undoes small initialization: "
              "with it, small init no longer gives inferential solutions",
              "our finding (issue 17), on Zhang et al. 2024 §3; no paper reports it"),
    )
    cpu_minutes = 4.6  # measured: 278 s (6 new runs; the authors' arm is the phase study's cell)
    cpu_after = "anchors-init-phase"
    default_seeds = {"smoke": 1, "cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return [RunSpec(arm, s, anchor_config(scale, s, gamma(scale), DEPTH[scale],
                                              structure=arm))
                for arm in STRUCTURES for s in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        recs = [{"arm": spec.arm, "seed": spec.seed, "layer1_rms": layer1_rms(result),
                 **run_solution(spec, result, out).to_json()} for spec, result in results]
        arms = list(dict.fromkeys(r["arm"] for r in recs))
        by_arm = {a: [r for r in recs if r["arm"] == a] for a in arms}
        m0 = results[0][0].config.model

        def mean(a: str, k: str) -> float:
            return float(np.mean([r[k] for r in by_arm[a]]))

        def share(a: str) -> float:
            return float(np.mean([r["verdict"] == "inferential" for r in by_arm[a]]))

        rows = [[a, " ".join(r["verdict"][:3] for r in by_arm[a]), f"{share(a):.2f}"] +
                [f"{mean(a, k):.3f}" for k in ("inferential", "symmetric", "seen_acc",
                                               "layer1_rms")] for a in arms]
        rep = Report(self.title)
        rep.sections.append(
            f"## Held-out pair (4,3) at gamma={m0.init.gamma:g}, depth {m0.n_layers}\n\n"
            f"Per-run verdicts as in the phase study (unfit below seen accuracy "
            f"{FIT_THRESHOLD}; a type needs >= {MAJORITY} of the held-out predictions). "
            "Layer-1 input RMS: root mean square of `blocks.0.hook_resid_pre` on the test "
            "set, after training.\n\n" + table(
                ["structure", "verdicts (seeds)", "inferential share", "inferential",
                 "symmetric", "seen acc", "layer-1 input RMS"], rows))
        a, b = "authors", "authors + embedding LayerNorm"
        ev = (f"inferential share {share(a):.2f} without the embedding LayerNorm vs "
              f"{share(b):.2f} with it (needs > {CLAIM_MAJORITY} without, < {CLAIM_MAJORITY} "
              f"with); mean inferential fraction {mean(a, 'inferential'):.3f} vs "
              f"{mean(b, 'inferential'):.3f}; layer-1 input RMS {mean(a, 'layer1_rms'):.3f} vs "
              f"{mean(b, 'layer1_rms'):.3f}; seen acc {mean(a, 'seen_acc'):.3f} vs "
              f"{mean(b, 'seen_acc'):.3f}")
        if share(a) <= CLAIM_MAJORITY:
            status = "inconclusive"
            ev += "; inconclusive: without it small init gives no inferential majority either"
        else:
            status = "reproduced" if share(b) < CLAIM_MAJORITY else "not reproduced"
        rep.verdicts = [Verdict(self.claims[0], status, ev)]
        return rep


@torch.no_grad()
def layer1_rms(result: dict[str, Any]) -> float:
    """RMS of the first block's input over the run's test set."""
    config, model = load_run_model(Path(result["dir"]))
    _, test = make_data(config)
    _, cache = run_with_cache(model, test.tokens[:500], names_filter="blocks.0.hook_resid_pre")
    return float(cache["blocks.0.hook_resid_pre"].pow(2).mean().sqrt())
