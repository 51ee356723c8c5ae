"""Does the structure that transfers to language grow LEGO's heads? (Chiang & Lee's corpora,
docs/papers.md §4, read with LEGO §4.2, docs/papers.md §1.)

For every encoder pretrained on the follow-up's corpora (studies/artificial/common.py; one
masked-LM run per corpus and seed, and random init):
the association / manipulation / broadcast head scores the project computes
(analysis/attention.py, as lego-pretraining uses them: association on variable queries, beside
its positional controls) measured on LEGO sentences BEFORE any fine-tuning, per unit (a seed
pretrains and fine-tunes: common.PIPELINE_UNIT), and LEGO accuracy per chain position AFTER
fine-tuning. The
same again for an ALBERT-like encoder (layers tied, LEGO's ALBERT arm), pretrained on every
corpus in runs of its own: LEGO finds ALBERT's recurrence suits the task (docs/papers.md §1),
so each claim gets one verdict per encoder. Both claims are hypotheses of the issue, not the
papers'; the numbers judge them.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.artificial.analysis import head_sections, label, speed_sections
from reasonlab.studies.artificial.common import (ALBERT, BERT, FINETUNE, LEGO, PIPELINE_UNIT,
                                                 SCRATCH, recipes, runs, structured)
from reasonlab.studies.artificial.verdicts import association_verdict, speed_verdict
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study
from reasonlab.studies.lego.analysis import positions_section


@STUDIES.register("artificial-pretraining-lego")
class ArtificialPretrainingLego(Study):
    title = "Artificial pretraining and LEGO's heads"
    # Not yet measured with a pretraining run per seed: 9.5 min (567 s on 2 quiet cores from an
    # empty runs folder) with one pretraining per corpus and 2 seeds, 16 pretraining and 36
    # LEGO runs. Split by FLOPs at the rates artificial-pretraining's two measured scales give
    # a pretraining and a fine-tuning run (pretraining.py), a pretraining run is 14.9 s and a
    # LEGO run 9.1 s of the wall clock: the per-seed grid's 48 pretraining and 54 LEGO runs at
    # 3 seeds come to about 20 minutes.
    default_seeds = {"cpu": 3}
    unit = PIPELINE_UNIT

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
        positions_section(rep, finals,
                          trained=first.task.n_train_vars)  # type: ignore[attr-defined]
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
