"""Pretraining without human language, as the seed's table has it (Chiang & Lee, arXiv
2012.11995; the seed: frozen-pretrained-transformers.txt, second half, "Results" and the slides
after it).

Each of the seed's 13 rows is an init (studies/artificial/seed.py): no pretraining, or one
masked-LM pretraining run on its corpus (tasks/artificial.py, tasks/natural.py), fine-tuned on
two WordNet sentence-pair tasks (graded similarity like STS-B, definition match like MRPC /
QNLI) and two single-sentence ones (supersense, part of speech; like CoLA / SST-2), 3 seeds.
The report is the seed's table with its eight GLUE columns beside our four, and one verdict per
claim the table supports (claims 1-10, restated from the seed). Two corpora of the authors'
follow-up (Flat, Shuffle-64) stay as labelled extra rows with the follow-up's gains.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.artificial import seed_verdicts as sv
from reasonlab.studies.artificial.seed import SeedStudy, runs
from reasonlab.studies.artificial.seed_analysis import scores, seed_recipes, seed_sections
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("artificial-pretraining")
class ArtificialPretraining(SeedStudy):
    title = "Pretraining without human language: the seed's table (Chiang & Lee)"
    claims = family_claims(__package__)["artificial-pretraining"]
    cpu_minutes = 44.4  # measured: 2663 s on 2 quiet cores from an empty runs folder (README)
    default_seeds = {"cpu": 3}
    scales = ("smoke", "cpu", "long", "paper")  # long: pretraining past the grammar's horizon
    minutes = {"long": 138.3}  # measured: 8298 s on 2 quiet cores from an empty runs folder

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return runs(scale, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        s = scores(results)  # init -> task -> score per seed
        rep = seed_recipes(Report(self.title, out), results)
        seed_sections(rep, results, s, out)
        rep.verdicts = [sv.judge(c, s) for c in self.claims]
        return rep
