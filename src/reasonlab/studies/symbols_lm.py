"""Identity-augmented attention in a small causal language model (Boix-Adsera et al., ICLR
2024, §6: GPT-2 trained from scratch on WikiText, perplexity slightly better with the a/b
modification).

Offline stand-in (docs/design.md §9 Offline assets): a character-level causal LM on WordNet glosses (Debian
wordnet-base), trained from scratch with and without attention="identity" (a_h, b_h = 0 at
init), same seeds, same steps; validation perplexity on held-out glosses at every evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.report import plt, table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.train.config import TrainConfig

ARMS: dict[str, dict[str, Any]] = {"transformer": {}, "+ identity (a, b)": {"attention": "identity"}}
BASE = dict(norm="pre", attn_bias=False, causal=True)
SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(model=dict(d_model=16, n_layers=1, n_heads=2, d_mlp=32), seq_len=16,
                  n_train=64, n_test=8, batch_size=8, steps=10, eval_every=5, ckpt_every=10,
                  optim=dict(lr=1e-3, warmup_steps=2), threads=1),
    # d_model 128 x 4 layers x 64 characters ran at ~1 step/s on the shared machine (1500
    # steps: ~25 min), so the cpu scale is 4x narrower in tokens and 8x in parameters.
    "cpu": dict(model=dict(d_model=64, n_layers=2, n_heads=4, d_mlp=256), seq_len=32,
                n_train=20_000, n_test=200, batch_size=32, steps=1000, eval_every=200,
                ckpt_every=1000, optim=dict(lr=2e-3, warmup_steps=100, weight_decay=0.01),
                threads=1),
    # our reading of the paper's GPT-2 small from scratch, at character level, for a GPU
    "paper": dict(model=dict(d_model=768, n_layers=12, n_heads=12, d_mlp=3072), seq_len=256,
                  n_train=200_000, n_test=2000, batch_size=64, steps=50_000, eval_every=2500,
                  ckpt_every=5000, optim=dict(lr=3e-4, warmup_steps=2000, weight_decay=0.1)),
}


@STUDIES.register("symbols-language-model")
class SymbolsLanguageModel(Study):
    name = "symbols-language-model"
    title = "Abstract symbols: identity-augmented attention in a small causal LM (WordNet glosses)"
    claims = (
        Claim("perplexity", "The a/b modification slightly lowers validation perplexity of a "
              "language model trained from scratch, at equal steps",
              "Boix-Adsera et al. 2024, §6 and Fig. 4 (GPT-2 on WikiText)"),
    )
    cpu_minutes = 4  # measured under the shared lock (README)
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 2}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        s = dict(SCALES[scale])
        seq_len, model = s.pop("seq_len"), s.pop("model")
        return [RunSpec(arm, seed, TrainConfig.build({
                    **s, "seed": seed, "task": {"name": "corpus_lm", "seq_len": seq_len},
                    "model": {**BASE, **model, **extra}}))
                for arm, extra in ARMS.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        curves = {arm: [r["curve"] for s, r in results if s.arm == arm] for arm in ARMS}
        fig, ax = plt.subplots(figsize=(6.2, 3.8))
        for arm, cs in curves.items():
            steps = [m["step"] for m in cs[0]]
            ppl = np.exp([[m["loss"] for m in c] for c in cs])  # [seeds, evals]
            ax.plot(steps, ppl.mean(0), marker="o", label=f"{arm} (seeds={len(cs)})")
            ax.fill_between(steps, ppl.min(0), ppl.max(0), alpha=0.2)
        ax.set(xlabel="step", ylabel="validation perplexity (per character)", yscale="log",
               title="character LM on held-out WordNet glosses")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "perplexity.png", dpi=120)
        plt.close(fig)

        rep = Report(self.title)
        fin = {arm: np.exp([c[-1]["loss"] for c in cs]) for arm, cs in curves.items()}
        steps = [m["step"] for m in curves["transformer"][0]]
        mean = {arm: np.exp([[m["loss"] for m in c] for c in cs]).mean(0)
                for arm, cs in curves.items()}
        rows = [[arm, *(f"{x:.3f}" for x in mean[arm])] for arm in ARMS]
        rep.sections.append("## Validation perplexity per character (mean over seeds)\n\n"
                            + table(["step", *map(str, steps)], rows))
        rep.figures.append(("perplexity.png", "Validation perplexity during training "
                            "(band: min-max over seeds)"))
        rep.verdicts = [self._verdict(fin)]
        return rep

    def _verdict(self, fin: dict[str, np.ndarray]) -> Verdict:
        p, m = fin["transformer"], fin["+ identity (a, b)"]
        diff = float(p.mean() - m.mean())  # > 0: the modification is better
        se = float(np.sqrt(p.var(ddof=1) / len(p) + m.var(ddof=1) / len(m))) if len(p) > 1 \
            else 0.0
        ev = (f"final validation perplexity: transformer {p.mean():.4f} (seeds "
              f"{', '.join(f'{x:.4f}' for x in p)}), + identity {m.mean():.4f} (seeds "
              f"{', '.join(f'{x:.4f}' for x in m)}); improvement {diff:+.4f} "
              f"({100 * diff / p.mean():+.2f}%), standard error {se:.4f}; reproduced if the "
              "improvement is > 0 and > 2 SE over >= 2 seeds, not reproduced if <= 0")
        if diff > 0 and diff > 2 * se and len(p) > 1:  # one seed has no error bar
            status = "reproduced"
        elif diff <= 0:
            status = "not reproduced"
        else:
            status = "inconclusive"
        return Verdict(self.claims[0], status, ev)
