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
from typing import Any, Literal

from pydantic import Field

from reasonlab.analysis.kernel import condition_number
from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.report import plot_matrices, table
from reasonlab.studies.kit.base import STUDIES, Report, Results, Scale, Study, merge
from reasonlab.studies.kit.claims import family_claims
from reasonlab.studies.symbols.analysis import ab_values, kernel_matrices, kernel_model_config
from reasonlab.studies.symbols.common import MODEL, SYMBOLS
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
SIZES: dict[Scale, tuple[int, int]] = {"smoke": (2, 16), "cpu": (32, 256), "paper": (256, 1024)}
"""(initializations averaged, examples per template)."""


class Alphabets(StrictModel):
    """The templates task's symbol alphabets (the rest of each task is the TASKS row's)."""

    n_train_symbols: int = Field(gt=0)
    n_val_symbols: int = Field(gt=0)
    n_test_symbols: int = Field(gt=0)


class KernelRecipe(StrictModel):
    """What the study computes at a scale. `reasonlab run symbols-kernel KEY=VALUE` changes it
    as `reasonlab run` changes a training study's runs (e.g. `n_inits=2 n_per_template=64` to
    time the paper scale first; `model.d_model=256`; `task.n_train_symbols=1000`; `--device
    cpu`); the attention of each setting stays the study's."""

    n_inits: int = Field(gt=0)
    """Random initializations N is averaged over."""
    n_per_template: int = Field(gt=0)
    """Examples drawn per template and alphabet."""
    model: dict[str, Any]
    """ModelConfig keys: the shape of the randomly initialised models."""
    task: Alphabets
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where the models compute (`auto`: CUDA when present); the initializations and examples
    are drawn on the CPU, the same on every device."""


def kernel_recipe(scale: Scale, overrides: Mapping[str, Any]) -> KernelRecipe:
    """The scale's recipe with `overrides` merged in, checked: one ConfigError line naming the
    override that does not fit."""
    n_inits, n_per = SIZES[scale]
    base = {"n_inits": n_inits, "n_per_template": n_per, "model": MODEL[scale],
            "task": SYMBOLS[scale]}
    try:
        recipe = KernelRecipe.build(merge(base, overrides))
        kernel_model_config(recipe.model, True, 2, 2, 8)  # its keys and values, sizes aside
    except ConfigError as e:
        raise ConfigError(f"override does not fit study symbols-kernel: {e} (it takes "
                          "n_inits, n_per_template, model.*, task.n_train_symbols, "
                          "task.n_val_symbols, task.n_test_symbols and device)") from None
    from reasonlab.train.device import check_available  # imports torch: only when checking

    check_available(recipe.device)
    return recipe


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
        rep = Report(self.title, out)
        d = kernel_model_config(r.model, True, 2, 2, 8).d_model
        a, b = ab_values(SETTINGS[MAIN], d)
        rows = [[t, *(f"{c[s]:.3g}" for s in SETTINGS), f"{c['plain'] / c[MAIN]:.3g}"]
                for t, c in conds.items()]
        rep.sections.append(
            f"## cond(N) at initialization (d_model {d}; a = {a:.3f}, b = {b:g}; "
            f"{r.n_inits} initializations, {r.n_per_template} examples per "
            "template)\n\n" + table(["task", *SETTINGS, f"plain / ({MAIN})"], rows))
        plot_matrices({f"{s}: cond {condition_number(N):.3g}": N
                       for s, N in Ns["same/different"].items()}, out / "kernel_same_different.png")
        rep.figure("kernel_same_different.png", "N for same/different (rows, columns: templates "
                   "`$a $a`, `$a $b`) at initialization")
        rep.verdicts = [conditioning_verdict(self.claim("conditioning"), conds, MAIN)]
        return rep
