"""Which structure transfers: masked-LM pretraining on artificial corpora, then fine-tuning on
English (Chiang & Lee; docs/papers.md §4).

Each corpus of tasks/artificial.py (and `english`, the WordNet glosses) pretrains one encoder
(one run per corpus, shared by every downstream run through the run store); each is fine-tuned
on WordNet supersense and part of speech (tasks/glosses.py, split by gloss) and on the reasoning
tasks LEGO and ListOps, beside the same architecture from random init (`scratch`). The table
follows the paper's layout: gain over scratch per corpus per task (mean over seeds), with the
paper's GLUE-average gain beside ours. The claims are judged on the English tasks, as the
paper's are on GLUE; the reasoning tasks are reported beside them.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.artificial.analysis import gain_tables, plot_gains
from reasonlab.studies.artificial.common import downstream, recipes, runs, structured, tasks
from reasonlab.studies.artificial.verdicts import (english_best_verdict, structure_verdict,
                                                   uniform_verdict)
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study

SOURCE = "Chiang & Lee (arXiv 2012.11995 and follow-up), GLUE average gains; docs/papers.md §4"


@STUDIES.register("artificial-pretraining")
class ArtificialPretraining(Study):
    title = "Artificial pretraining: which structure transfers (Chiang & Lee)"
    claims = (
        Claim("structure", "Structured corpora (nesting, flat) transfer better than token "
              "statistics (uniform, unigram, bigram)", SOURCE,
              "GLUE average gain: Flat-128 +14.5, Nesting +12.0; Bigram +2.2, Uniform -0.2"),
        Claim("uniform", "Uniform random tokens transfer no better than no pretraining",
              SOURCE, "GLUE average gain: Uniform -0.2"),
        Claim("english", "No artificial corpus matches English", SOURCE,
              "GLUE average gain: English +20.5, the best artificial corpus Flat-128 +14.5"),
    )
    cpu_minutes = 26.3  # measured: 1579 s on the 2-core machine, otherwise idle (README)
    default_seeds = {"cpu": 2}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return runs(scale, seeds, tasks(scale))

    def analyse(self, results: Results, out: Path) -> Report:
        acc = downstream(results)
        rep = recipes(Report(self.title, out), results)
        gains = gain_tables(rep, results, acc)
        plot_gains(gains, out / "gain_per_corpus.png")
        rep.figure("gain_per_corpus.png", "Gain over scratch per corpus: ours per task (left), "
                   "Chiang & Lee's GLUE average (right)")
        struct = structured(results.scale)
        rep.verdicts = [structure_verdict(self.claim("structure"), acc, struct),
                        uniform_verdict(self.claim("uniform"), acc),
                        english_best_verdict(self.claim("english"), acc)]
        return rep
