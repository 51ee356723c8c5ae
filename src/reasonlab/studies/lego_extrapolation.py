"""LEGO length extrapolation: BERT-like vs ALBERT-like (Zhang et al. 2022, §3, Fig. 3).

Both models are trained on Task 1 (Z2 acting on {+1, -1}), n = 12 clauses, with the loss on the
first 6 chain variables only, and tested on all 12 chain positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.report import final_by_depth, mean_std, plot_curves, plot_positions, table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.studies.lego_common import arm_model, extrapolation_gain
from reasonlab.train.config import TrainConfig

N_CLAUSES, N_TRAIN_VARS = 12, 6
ARMS = {"BERT": False, "ALBERT": True}  # arm -> tie_layers

# Scales. The `cpu` recipe was chosen by measurement on the 2-core reference machine (README,
# "Choosing the CPU scale"). Two choices matter:
# - Rotary positions. From random init LEGO sits on a loss plateau at ln 2: every label is a
#   parity of >= 2 tokens, so no single token correlates with it and the model must find "read
#   the op and argument 2 and 3 tokens to my right" unaided. With learned absolute positions
#   that pattern must be found separately for each of the 12 clause slots, and no recipe we
#   tried left the plateau within the CPU budget; with rotary positions it is one relative
#   pattern, and the same model leaves it. This departs from the paper's BERT (learned
#   positions) and applies to both arms alike; the `paper` scale keeps learned positions.
# - Size within budget. The whole study (2 arms x 2 seeds on 2 cores) must fit 15 minutes, i.e.
#   about 7 minutes of one core per run. A training step is already at the machine's limits
#   (matmuls at the single-core fp32 peak, ~30 GFLOP/s; attention over 62 tokens ~30% of a
#   step), so the budget buys ~750 steps of a 6-layer, d_model 64 model. Of the shapes measured
#   (README), 6 layers with d_mlp 256 at lr 2e-3 left the plateau first (BERT-like: #1 >= 0.9 at
#   step 600); 8 layers escaped later (#0 at 1000) and, run for 1600 steps (32 min), still
#   learned only #0 and #1. An iterative solution resolving one chain step per layer would need
#   7 layers for #6, so extrapolation has little room at this depth: the paper uses 12.
SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(model=dict(d_model=32, n_layers=2, n_heads=2, d_mlp=64, norm="pre",
                             positions="rotary"),
                  optim=dict(lr=3e-3, warmup_steps=5), n_train=512, n_test=256, batch_size=32,
                  steps=20, eval_every=10, ckpt_every=10, threads=1),
    "cpu": dict(model=dict(d_model=64, n_layers=6, n_heads=4, d_mlp=256, norm="pre",
                           init_std=0.1, positions="rotary"),
                optim=dict(lr=2e-3, warmup_steps=100, weight_decay=0.01, min_lr_ratio=0.1),
                n_train=50_000, n_test=1_000, batch_size=64, steps=750, eval_every=75,
                ckpt_every=150, threads=1),
    # The authors' recipe: BERT-base shape, Adam 5e-5 with cosine decay over 200 epochs of
    # 10,000 x n sentences, batch 1000 (paper §3 and appendix), no gradient clipping, for a
    # GPU. The ALBERT arm also takes albert-base-v1's factorised embedding (arm_model).
    "paper": dict(model=dict(d_model=768, n_layers=12, n_heads=12, d_mlp=3072, dropout=0.1),
                  optim=dict(lr=5e-5, warmup_steps=0, weight_decay=0.0, grad_clip=None),
                  n_train=120_000,
                  n_test=12_000, batch_size=1000, steps=24_000, eval_every=600,
                  ckpt_every=1200),
}


def lego_task() -> dict[str, Any]:
    return {"name": "lego", "group": "z2", "n_clauses": N_CLAUSES, "n_train_vars": N_TRAIN_VARS}


@STUDIES.register("lego-extrapolation")
class LegoExtrapolation(Study):
    name = "lego-extrapolation"
    title = "LEGO length extrapolation: BERT-like vs ALBERT-like"
    claims = (
        Claim("classical", "BERT and ALBERT both reach classical generalization on #0-#5",
              "Zhang et al. 2022, §3 Fig. 3"),
        Claim("extrapolation", "ALBERT extrapolates further than BERT on #6-#8",
              "Zhang et al. 2022, §3 Fig. 3"),
    )
    cpu_minutes = 14  # measured: 14 min 5 s on the idle 2-core machine (README)
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = SCALES[scale]
        return [RunSpec(arm, seed, TrainConfig.build({
                    **base, "task": lego_task(), "seed": seed,
                    "model": {**base["model"], **arm_model(tied, scale)}}))
                for arm, tied in ARMS.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        by_arm = {arm: [r for s, r in results if s.arm == arm] for arm in ARMS}
        finals = {arm: final_by_depth(rs) for arm, rs in by_arm.items()}
        plot_positions(finals, out / "accuracy_by_position.png",
                       "final test accuracy per chain position", trained=N_TRAIN_VARS)
        plot_curves({arm: [r["curve"] for r in rs] for arm, rs in by_arm.items()},
                    out / "curves.png", "test accuracy per chain position during training")

        rep = Report(self.title)
        m, o = results[0][0].config.model, results[0][0].config
        rep.sections.append(
            f"## Recipe\n\n{m.n_layers} layers, d_model {m.d_model}, {m.n_heads} heads, d_mlp "
            f"{m.d_mlp}, {m.norm}-LN, {m.positions} positions, init std {m.init_std}; AdamW lr "
            f"{o.optim.lr}, batch {o.batch_size}, {o.steps} steps, {len(by_arm['BERT'])} seeds per "
            "arm. The arms differ only in weight tying"
            + ("" if all(s.config.model.d_embed is None for s, _ in results) else
               " and ALBERT's factorised embedding (d_embed, albert-base-v1)") + "."
            + (" Rotary positions depart from the paper's BERT (learned positions): with learned "
               "positions no CPU-sized run left the ln 2 plateau (README, 'Choosing the CPU "
               "scale')." if m.positions == "rotary" else ""))
        header = ["model"] + [f"#{i}" for i in range(N_CLAUSES)]
        rows = []
        for arm, rows_ in finals.items():
            m, s = mean_std(rows_)
            rows.append([arm] + [f"{x:.3f}" for x in m])
            rows.append([f"{arm} (std)"] + [f"{x:.3f}" for x in s])
        rep.sections.append("## Final test accuracy per chain position (mean and std over "
                            f"{len(finals['BERT'])} seeds)\n\n" + table(header, rows))
        rep.figures += [("accuracy_by_position.png", "Final accuracy per chain position "
                         "(band: ±1 std over seeds; grey: supervised positions)"),
                        ("curves.png", "Accuracy per chain position during training")]
        rep.verdicts = [classical_verdict(self.claims[0], finals),
                        extrapolation_verdict(self.claims[1], finals)]
        return rep


CLASSICAL_THRESHOLD = 0.95
"""Mean accuracy on the supervised positions that counts as classical generalization."""


def classical_verdict(claim: Claim, finals: dict[str, list[list[float]]]) -> Verdict:
    accs = {arm: float(np.mean(np.asarray(rows)[:, :N_TRAIN_VARS])) for arm, rows in finals.items()}
    worst = {arm: float(np.min(np.asarray(rows)[:, :N_TRAIN_VARS].mean(1)))
             for arm, rows in finals.items()}
    ok = all(v >= CLASSICAL_THRESHOLD for v in worst.values())
    ev = "; ".join(f"{arm} #0-#5 mean {accs[arm]:.3f} (worst seed {worst[arm]:.3f})"
                   for arm in finals) + f"; threshold {CLASSICAL_THRESHOLD} for every seed"
    return Verdict(claim, "reproduced" if ok else "not reproduced", ev)


def extrapolation_verdict(claim: Claim, finals: dict[str, list[list[float]]]) -> Verdict:
    return extrapolation_gain(claim, finals, "ALBERT", "BERT", N_TRAIN_VARS)  # #6-#8
