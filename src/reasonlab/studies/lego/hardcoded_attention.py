"""LEGO §5: BERT vs Hardcode vs Hybrid on masked-LM pretraining (Zhang et al. 2022, §5, Fig. 9;
docs/papers.md §1.1).

"The Hardcode model learns faster but gradually falls short, while the hybrid model achieves
the best of both worlds: it learns faster at the beginning and achieves even (slightly) lower
validation loss at the end" (1.49 BERT / 1.66 Hardcode / 1.47 Hybrid), with fewer FLOPs.

Fig. 8 (right) compares "inference Flops and model size" on "a batch of 64 sequences of 512
tokens": the study counts both for the three arms at BERT-base's shape (`inference_cost`, a
deterministic count read exactly, whatever the scale trained).

Recipe and arms: lego/_support/masked_lm.py. Every loss verdict is taken twice, on the curves
against optimiser steps and against training FLOPs (`Transformer.flops_per_token` x tokens
seen), and needs both (kit/curves.py, lego/verdicts.py). The two end-of-training claims are
about trained models: they are judged only once BERT has left the unigram plateau
(lego.verdicts.left_plateau), inconclusive before.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.sizes import flops_per_step
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.kit.curves import early_step, plot_loss_curves
from reasonlab.studies.kit.verdicts import requires
from reasonlab.studies.lego.analysis import loss_table, no_context_loss, plateau_section
from reasonlab.studies.lego._support.masked_lm import (BERT, HARDCODE, HYBRID,
                                                       INFERENCE_SHAPE, PAPER_TOKENS, RECIPES,
                                                       arms, inference_cost)
from reasonlab.studies.lego.verdicts import (EARLY, at_least_as_low, cheaper, faster_early,
                                             worse_at_end)
from reasonlab.tasks.base import build_task


@STUDIES.register("lego-hardcoded-attention")
class LegoHardcodedAttention(Study):
    title = "LEGO §5: hardcoded attention (Hardcode, Hybrid) vs BERT on masked-LM pretraining"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(RECIPES[scale], arms(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        curves = {a: [[(m["step"], m["loss"]) for m in c] for c in cs]
                  for a, cs in results.curves().items()}
        fps = {s.arm: flops_per_step(s.config) for s, _ in results}
        paper = {s.arm: flops_per_step(s.config) for s in grid(RECIPES["paper"], arms("paper"))}
        early = early_step(curves[BERT][0], results.first.config.steps, EARLY)
        rep = loss_table(Report(self.title, out).recipe(results), results, curves, fps, paper,
                         PAPER_TOKENS, early)
        plot_loss_curves(curves, fps, out / "val_loss.png", "Masked-LM pretraining: BERT vs "
                         "Hardcode vs Hybrid", ylabel="validation masked-LM loss (nats)")
        rep.figure("val_loss.png", "Validation masked-LM loss against optimiser steps (left) "
                   "and training FLOPs (right); thin lines: seeds")
        plateau = no_context_loss(build_task(results.first.config.task))
        trained = plateau_section(rep, curves[BERT], plateau)
        claim = self.claim
        rep.verdicts = [
            faster_early(claim("hardcode-early"), curves, fps, HARDCODE, BERT, early),
            requires(worse_at_end(claim("hardcode-late"), curves, fps, HARDCODE, BERT), *trained),
            requires(at_least_as_low(claim("hybrid-final"), curves, fps, HYBRID, BERT), *trained),
            cheaper(claim("hybrid-flops"), {
                "FLOPs per step at this scale": (fps[HYBRID], fps[BERT]),
                "FLOPs per step at BERT-base": (paper[HYBRID], paper[BERT])}),
            cheaper(claim("inference-cost"), inference_section(rep, inference_cost()),
                    what="inference FLOPs and parameters"),
        ]
        return rep


def inference_section(rep: Report, cost: dict[str, tuple[float, int]]
                      ) -> dict[str, tuple[float, float]]:
    """§5, Fig. 8 (right): inference FLOPs and model size of the three arms at BERT-base's shape
    (`inference_cost`); adds the table, returns "arm quantity" -> (arm, BERT) for `cheaper`."""
    batch, seq = INFERENCE_SHAPE
    flops_b, params_b = cost[BERT]
    rep.table(
        f"Inference cost at BERT-base's shape (Fig. 8 right: a batch of {batch} x {seq} tokens)",
        ["arm", "parameters", "x BERT", f"forward FLOPs per batch of {batch} x {seq}", "x BERT"],
        [[a, f"{p / 1e6:.1f} M", f"{p / params_b:.3f}", f"{f / 1e12:.2f} T",
          f"{f / flops_b:.3f}"] for a, (f, p) in cost.items()],
        after="Counted from the models built at BERT-base's shape (12 layers of width 768, 12 "
        "heads; Hybrid keeps 6 of them, our reading of the paper's Appendix C, which we do not "
        "have), on the meta device: every parameter, embeddings included (the masked-LM "
        "read-out is its own vocabulary x 768 matrix here, the same in every arm, where BERT "
        "ties it to the embeddings), and the forward FLOPs of `Transformer.flops_per_token`, "
        "dense matmuls (a sparse product of the hardcoded maps would cost less). Fig. 8 plots "
        "the paper's values; they are not in the text we have, so none sits beside ours.")
    pairs: dict[str, tuple[float, float]] = {}
    for arm in (HARDCODE, HYBRID):
        flops, params = cost[arm]
        pairs[f"{arm} inference FLOPs"] = (flops, flops_b)
        pairs[f"{arm} parameters"] = (params, params_b)
    return pairs
