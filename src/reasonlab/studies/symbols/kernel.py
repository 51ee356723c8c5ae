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
Compare the measured data efficiency in `symbols-data-efficiency` (same/different).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasonlab.analysis.kernel import condition_number
from reasonlab.studies.kit.base import STUDIES, Report, Results, Scale, Study
from reasonlab.studies.kit.claims import family_claims
from reasonlab.studies.symbols.analysis import kernel_matrices, kernel_section
from reasonlab.studies.symbols.kernel_recipe import kernel_recipe
from reasonlab.studies.symbols.verdicts import conditioning_verdict

TASKS: dict[str, dict[str, Any]] = {
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
    claims = family_claims(__package__)["symbols-kernel"]
    cpu_minutes = 1.8  # measured: 109 s (authors' init)
    trains = False  # kernels of randomly initialised models, at the scale's sizes

    def check_overrides(self, scale: Scale, overrides: Mapping[str, Any]) -> None:
        kernel_recipe(scale, overrides)

    def analyse(self, results: Results, out: Path) -> Report:
        from reasonlab.train.device import resolve_device

        r = kernel_recipe(results.scale, results.overrides)
        Ns = kernel_matrices(TASKS, SETTINGS, r.model, r.task.model_dump(), r.n_inits,
                             r.n_per_template, resolve_device(r.device))
        conds = {t: {s: condition_number(N) for s, N in by.items()} for t, by in Ns.items()}
        rep = kernel_section(Report(self.title, out), Ns, conds, r, SETTINGS, MAIN)
        rep.verdicts = [conditioning_verdict(self.claim("conditioning"), conds, MAIN)]
        return rep
