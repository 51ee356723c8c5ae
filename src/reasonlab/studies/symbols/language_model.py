"""Identity-augmented attention in a small causal language model (Boix-Adsera et al., ICLR
2024, §6: GPT-2 trained from scratch on WikiText, perplexity slightly better with the a/b
modification).

A character-level causal LM trained from scratch with and without attention="identity"
(a_h, b_h = 0 at init), same seeds, same steps; validation perplexity on held-out text at every
evaluation. At paper scale on the paper's WikiText-103, from the user's files (its raw release
or its Hugging Face dataset: tasks/corpora.py; `reasonlab run` says whether it was found);
offline (smoke, cpu) on WordNet glosses (Debian wordnet-base, docs/design.md §9), the stand-in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonlab.report import plot_perplexity
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.symbols.common import lm_recipe
from reasonlab.studies.symbols.verdicts import perplexity_verdict

ARMS = {"transformer": {}, "+ identity (a, b)": {"model": {"attention": "identity"}}}
EXPECTED_DROP = 0.017
"""The relative perplexity drop the verdict's power is quoted at: 1.7%, what our first cpu run
measured (7.919 -> 7.782, 2 seeds); the paper calls its drop on WikiText slight (§6, Fig. 4)
and gives no size at our scale."""


@STUDIES.register("symbols-language-model")
class SymbolsLanguageModel(Study):
    title = "Abstract symbols: identity-augmented attention in a small causal LM (WordNet glosses)"
    # 7 seeds: the most within the 15-minute budget; with the seeds paired as measured
    # (symbols/calibration.py, noise.toml) the perplexity rule's power at a 1.7% drop is 0.99
    default_seeds = {"cpu": 7}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(lm_recipe(scale), ARMS, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        curves = results.curves()
        steps = [m["step"] for m in curves["transformer"][0]]
        ppl = {arm: np.exp([[m["loss"] for m in c] for c in cs]) for arm, cs in curves.items()}
        plot_perplexity(ppl, steps, out / "perplexity.png")  # ppl: arm -> [seeds, evals]
        rep = Report(self.title, out).recipe(results).table(
            "Validation perplexity per character (mean over seeds)", ["step", *map(str, steps)],
            [[arm, *(f"{x:.3f}" for x in p.mean(0))] for arm, p in ppl.items()])
        rep.figure("perplexity.png", "Validation perplexity during training (band: min-max "
                   "over seeds)")
        plain = ppl["transformer"][:, -1]
        rep.verdicts = [perplexity_verdict(self.claim("perplexity"), plain,
                                           ppl["+ identity (a, b)"][:, -1],
                                           EXPECTED_DROP * float(plain.mean()))]
        return rep
