"""Conditioning of the templates x templates kernel matrix N at initialization
(Boix-Adsera et al., ICLR 2024, §4.2-4.3).

The paper's theory: read-out-only training (the random-features kernel) learns a template task
with unseen symbols when N is non-singular, and needs fewer samples when N is better
conditioned; adding a I to W_Q W_K^T and b I to W_V W_O (our attention="identity": logits
+= a X X^T, output += b Attn X) improves the conditioning. We estimate N from the read-out
features of randomly initialised models (`analysis.kernel`), with a = b = 0 (plain) and with
the values fixed before measuring: a = 1 / sqrt(d_model) (so a X X^T between two equal symbols,
X after LayerNorm, is sqrt(d_model), the size of an aligned q.k logit) and b = 1, with the
diagonal of X X^T zeroed (the paper's variant; see MAIN). No training runs.

N is a Monte Carlo estimate (a mean over random initializations and sampled examples), not
the paper's closed-form kernel, so cond(N) moves with the draws: the study's replication unit
is one estimate of N from its own draws, and `--seeds R` computes R of them (replicate 0 is the
estimate the study always computed; replicates 1.. recompute only the two settings the verdict
reads, plain and MAIN, the other settings being reported once).
Compare the measured data efficiency in `symbols-data-efficiency` (same/different).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasonlab.analysis.kernel import condition_number
from reasonlab.studies.kit.base import STUDIES, Report, Results, Scale, Study
from reasonlab.studies.symbols.analysis import kernel_matrices, kernel_section
from reasonlab.studies.symbols._support.kernel_recipe import kernel_recipe
from reasonlab.studies.symbols.verdicts import conditioning_verdict

TEMPLATE_TASKS: dict[str, dict[str, Any]] = {  # the templates task's presets (tasks/templates.py)
    "same/different": {"preset": "same_different"},
    "variable binding": {"preset": "variable_binding"},
    "random (8 templates, length 4)": {"preset": "random", "n_templates": 8, "length": 4,
                                       "n_wildcards": 3, "n_regular": 2},
}
SETTINGS: dict[str, tuple[bool, bool, bool]] = {
    # name: (a on, b on, zero the diagonal of X X^T)
    "plain": (False, False, False),
    "a, zero diag": (True, False, True),
    "a + b, zero diag": (True, True, True),
    "a + b, with diag": (True, True, False),
}
MAIN = "a + b, zero diag"
"""The setting the verdict reads. With the diagonal, a > 0 at initialization makes every
position, the read-out token included, attend mostly to itself (diag(X X^T) = d_model after
LayerNorm, much larger than the off-diagonal terms), so the read-out sees little of the input
and N degenerates (measured: the with-diag row); we found this on a trial before the cpu run,
and report both."""


@STUDIES.register("symbols-kernel")
class SymbolsKernel(Study):
    title = "Abstract symbols: conditioning of the kernel's templates x templates matrix N"
    # estimate: 109 s measured for one replicate of 4 settings (authors' init); 3 replicates,
    # the last two of 2 settings: 109 s x (1 + 2 x 2 / 4)
    trains = False  # kernels of randomly initialised models, at the scale's sizes
    unit = ("one estimate of N: its own random initializations and its own sampled examples "
            "(replicate r draws initializations 1000 + r * n_inits + i and examples with seed r)")

    def check_overrides(self, scale: Scale, overrides: Mapping[str, Any]) -> None:
        kernel_recipe(scale, overrides)

    def analyse(self, results: Results, out: Path) -> Report:
        from reasonlab.train.device import resolve_device

        r = kernel_recipe(results.scale, results.overrides)
        read = {s: SETTINGS[s] for s in ("plain", MAIN)}  # what the verdict reads
        reps = [kernel_matrices(TEMPLATE_TASKS, SETTINGS if i == 0 else read, r.model,
                                r.task.model_dump(),
                                r.n_inits, r.n_per_template, resolve_device(r.device), replicate=i)
                for i in range(results.seeds)]
        conds = [{t: {s: condition_number(N) for s, N in by.items()} for t, by in rp.items()}
                 for rp in reps]
        rep = kernel_section(Report(self.title, out), reps[0], conds[0], r, SETTINGS, MAIN)
        per_replicate = {t: {s: [c[t][s] for c in conds] for s in read} for t in TEMPLATE_TASKS}
        rep.verdicts = [conditioning_verdict(self.claim("conditioning"), per_replicate, MAIN)]
        return rep
