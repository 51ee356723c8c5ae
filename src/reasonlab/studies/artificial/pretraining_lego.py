"""Does the structure that transfers to language grow LEGO's heads? (Chiang & Lee's corpora,
docs/papers.md §4, read with LEGO §4.2, docs/papers.md §1.)

For every encoder of `artificial-pretraining` (one masked-LM run per corpus, and random init):
the association / manipulation / broadcast head scores the project computes
(analysis/attention.py, as lego-pretraining uses them: association on variable queries, beside
its positional controls) measured on LEGO sentences BEFORE any fine-tuning, and LEGO accuracy
per chain position AFTER fine-tuning (the LEGO runs of `artificial-pretraining`, shared). The
same again for an ALBERT-like encoder (layers tied, LEGO's ALBERT arm), pretrained on every
corpus in runs of its own: LEGO finds ALBERT's recurrence suits the task (docs/papers.md §1),
so each claim gets one verdict per encoder. Both claims are hypotheses of the issue, not the
papers'; the numbers judge them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from reasonlab.analysis.attention import attention_patterns, top_heads  # noqa: E402
from reasonlab.report import grouped_bars, plot_first_pass  # noqa: E402
from reasonlab.studies.artificial.common import (ALBERT, BERT, LEGO,  # noqa: E402
                                                 SCRATCH, STATISTICS, recipes,
                                                 runs, split_arm, structured)
from reasonlab.studies.kit.base import (STUDIES, Claim, Report, Results, RunSpec,  # noqa: E402
                                    Scale, Study)
from reasonlab.studies.kit.core import Verdict  # noqa: E402
from reasonlab.studies.lego.analysis import lego_head_scores  # noqa: E402
from reasonlab.studies.lego.verdicts import HEAD_MARGIN, first_pass_steps  # noqa: E402
from reasonlab.studies.kit.verdicts import MIN_GAIN, gain_verdict, verdict  # noqa: E402
from reasonlab.tasks.base import build_task  # noqa: E402
from reasonlab.train.loop import build_model  # noqa: E402

Scores = dict[str, torch.Tensor]


def heads_before_finetuning(spec: RunSpec, run_dir: Path, n: int = 64
                            ) -> tuple[Scores, Scores]:
    """(head scores, association controls) of the run's model at step 0 -- the pretrained
    encoder (or random init) with its fresh head -- on n LEGO sentences."""
    model = build_model(spec.config, root=run_dir.parent.parent)  # <root>/runs/<id>
    task = build_task(spec.config.task)
    batch = task.sample(np.random.default_rng(0), n)
    pattern = attention_patterns(model, batch.tokens, batch.pad_mask)
    return lego_head_scores(pattern, batch, task)


def association_verdict(claim: Claim, c: Scores, random: Scores) -> Verdict:
    """The best head by variable-query association must beat the best random-init head AND
    its own positional controls (clause-permuted score, same-slot head) by HEAD_MARGIN."""
    (l, h, v), *_ = top_heads(c["variables"], 1)
    r = top_heads(random["variables"], 1)[0][2]
    control = max(float(c["variables, permuted"][l, h]), float(c["positional head"]))
    ev = (f"best association head (variable queries) L{l}H{h} {v:.2f} vs random-init best "
          f"{r:.2f} and its positional control {control:.2f}; needs >= {HEAD_MARGIN} above "
          "both")
    return verdict(claim, v - r >= HEAD_MARGIN and v - control >= HEAD_MARGIN, ev)


def learning_speed(curve: list[dict[str, Any]]) -> float:
    """Mean supervised accuracy over the evaluations (area under the learning curve): higher
    = learned sooner."""
    return float(np.mean([m["acc_supervised"] for m in curve]))


def speed_verdict(claim: Claim, curves: dict[str, list[list[dict[str, Any]]]],
                  struct: tuple[str, ...]) -> Verdict:
    """Structured corpora vs token statistics: per seed, the area under the LEGO learning curve
    averaged over the corpora of each group."""
    def group(names: tuple[str, ...]) -> np.ndarray:
        return np.mean([[learning_speed(c) for c in curves[n]] for n in names], axis=0)

    stats = tuple(c for c in STATISTICS if c in curves)
    return gain_verdict(claim, group(struct), group(stats), ("+".join(struct), "+".join(stats)),
                        "LEGO mean supervised accuracy over training (area under the curve)",
                        MIN_GAIN)


def plot_head_scores(best: dict[str, dict[str, float]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(max(9.0, 0.6 * len(best)), 3.8))
    grouped_bars(ax, best)
    ax.set(ylabel="best head's score", ylim=(0, 1),
           title="Head scores on LEGO sentences before fine-tuning, per pretraining corpus")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def label(init: str, kind: str) -> str:
    """An encoder's name in tables and figures: the init, "(ALBERT)" for the tied encoder."""
    return init if kind == BERT else f"{init} ({kind})"


@STUDIES.register("artificial-pretraining-lego")
class ArtificialPretrainingLego(Study):
    title = "Artificial pretraining and LEGO's heads"
    claims = (
        Claim("nesting-heads", "Pretraining on nested parentheses yields association heads "
              "without any LEGO data (hypothesis; BERT-like encoder)",
              "our hypothesis; LEGO §4.2.1 heads, Chiang & Lee's nesting corpus "
              "(docs/papers.md §1, §4)"),
        Claim("structured-faster", "Encoders pretrained on structured corpora learn LEGO "
              "faster than those pretrained on token statistics (hypothesis; BERT-like)",
              "our hypothesis; docs/papers.md §4"),
        Claim("nesting-heads-albert", "The same for the ALBERT-like encoder: nesting "
              "pretraining yields association heads (hypothesis)",
              "our hypothesis; docs/papers.md §1, §4"),
        Claim("structured-faster-albert", "The same for the ALBERT-like encoder: structured "
              "corpora learn LEGO faster than token statistics (hypothesis)",
              "our hypothesis; docs/papers.md §4"),
    )
    cpu_minutes = 9.2  # measured: 554 s after artificial-pretraining, otherwise idle (README)
    cpu_after = "artificial-pretraining"
    default_seeds = {"cpu": 2}  # artificial-pretraining's, so its LEGO runs are shared

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return runs(scale, seeds, [LEGO]) + runs(scale, seeds, [LEGO], ALBERT)

    def analyse(self, results: Results, out: Path) -> Report:
        lego = [(s, r) for s, r in results if not s.arm.startswith("pretrain ")]
        keys = list(dict.fromkeys(split_arm(s.arm)[1:] for s, _ in lego))  # (init, kind)
        by = {k: [(s, r) for s, r in lego if split_arm(s.arm)[1:] == k] for k in keys}
        names = {k: label(*k) for k in keys}
        rep = recipes(Report(self.title, out), results)
        finals = {names[k]: [r["final"]["acc_by_depth"] for _, r in rs] for k, rs in by.items()}
        n_train = lego[0][0].config.task.n_train_vars  # type: ignore[attr-defined]
        rep.positions(finals, trained=n_train)
        passes = {k: [first_pass_steps(r["curve"]) for _, r in rs] for k, rs in by.items()}
        steps = lego[0][0].config.steps
        for kind in (BERT, ALBERT):
            png = f"steps_to_0.9{'' if kind == BERT else '_' + kind.lower()}.png"
            plot_first_pass({names[k]: p for k, p in passes.items() if k[1] == kind}, steps,
                            out / png)
            rep.figure(png, f"First step at which each chain position reaches 0.9, per "
                       f"pretraining corpus ({kind}-like encoder)")
        rep.table("Steps to 0.9 per chain position (mean over seeds; inf = never)",
                  ["init"] + [f"#{k}" for k in range(len(finals[names[keys[0]]][0]))],
                  [[names[k]] + [f"{np.mean(col):.0f}" for col in np.asarray(p).T]
                   for k, p in passes.items()])
        scores, controls = {}, {}
        for k, rs in by.items():
            s, r = rs[0]
            scores[k], controls[k] = heads_before_finetuning(s, Path(r["dir"]))
        best = {names[k]: {"association (variables)": top_heads(controls[k]["variables"], 1)[0][2],
                           "manipulation": top_heads(scores[k]["manipulation"], 1)[0][2],
                           "broadcast": top_heads(scores[k]["broadcast"], 1)[0][2]}
                for k in keys}
        rows = []
        for k in keys:
            l, h, v = top_heads(controls[k]["variables"], 1)[0]
            b = best[names[k]]
            rows.append([names[k], f"L{l}H{h} {v:.2f}",
                         f"{float(controls[k]['variables, permuted'][l, h]):.2f}",
                         f"{float(controls[k]['positional head']):.2f}",
                         f"{b['manipulation']:.2f}", f"{b['broadcast']:.2f}"])
        rep.table("Head scores on LEGO sentences before fine-tuning (best head per pattern)",
                  ["init", "association (variables)", "same head, clauses permuted",
                   "positional head", "manipulation", "broadcast"], rows,
                  after="64 LEGO sentences; association on variable queries with its positional "
                  "controls as in lego-pretraining (analysis/attention.py). An ALBERT-like "
                  "encoder applies one layer at every depth, so its heads LkHh are the same "
                  "weights at each k.")
        plot_head_scores(best, out / "head_scores.png")
        rep.figure("head_scores.png", "Best head per pattern on LEGO sentences before "
                   "fine-tuning, per pretraining corpus and encoder")
        struct = structured(results.scale)
        for kind, heads, faster in (
                (BERT, self.claim("nesting-heads"), self.claim("structured-faster")),
                (ALBERT, self.claim("nesting-heads-albert"),
                 self.claim("structured-faster-albert"))):
            curves = {i: [r["curve"] for _, r in rs] for (i, k), rs in by.items() if k == kind}
            rep.verdicts += [association_verdict(heads, controls[("nesting", kind)],
                                                 controls[(SCRATCH, kind)]),
                             speed_verdict(faster, curves, struct)]
        return rep
