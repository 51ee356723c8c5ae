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

from reasonlab.studies.artificial.analysis import head_sections, label, speed_sections
from reasonlab.studies.artificial.common import (ALBERT, BERT, FINETUNE, LEGO, SCRATCH, recipes,
                                                 runs, structured)
from reasonlab.studies.artificial.verdicts import association_verdict, speed_verdict
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study


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
        lego = results.where(phase=FINETUNE)
        keys = dict.fromkeys((s.factors["init"], s.factors["kind"]) for s, _ in lego)
        by = {(i, k): lego.where(init=i, kind=k) for i, k in keys}  # (init, encoder kind)
        names = {k: label(*k) for k in by}
        first = lego.first.config
        rep = recipes(Report(self.title, out), results)
        finals = {names[k]: [r["final"]["acc_by_depth"] for _, r in rs] for k, rs in by.items()}
        rep.positions(finals, trained=first.task.n_train_vars)  # type: ignore[attr-defined]
        speed_sections(rep, by, names, first.steps, out)
        controls = head_sections(rep, by, names, out)
        for kind, heads, faster in (
                (BERT, self.claim("nesting-heads"), self.claim("structured-faster")),
                (ALBERT, self.claim("nesting-heads-albert"),
                 self.claim("structured-faster-albert"))):
            curves = {i: [r["curve"] for _, r in rs] for (i, k), rs in by.items() if k == kind}
            rep.verdicts += [association_verdict(heads, controls[("nesting", kind)],
                                                 controls[(SCRATCH, kind)]),
                             speed_verdict(faster, curves, structured(results.scale))]
        return rep
