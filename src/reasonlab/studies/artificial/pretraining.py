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
from reasonlab.studies.artificial.seed import SeedStudy, runs, seed_avg, seed_avgs
from reasonlab.studies.artificial.seed_analysis import scores, seed_recipes, seed_sections
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale

SEED = "Chiang & Lee (arXiv 2012.11995), the seed's Results table"


@STUDIES.register("artificial-pretraining")
class ArtificialPretraining(SeedStudy):
    title = "Pretraining without human language: the seed's table (Chiang & Lee)"
    claims = (
        Claim("random-beats-scratch", "Pretraining on random tokens is better than no "
              "pretraining (the follow-up, arXiv 2109.03537, finds uniform tokens no better: "
              "-0.2; this study follows the seed)", SEED,
              "Avg: " + seed_avgs("Rand. Baseline", "No Pre-train") + " (+4.5 points); STS-B 0.29 "
              "vs 0.17"),
        Claim("distribution-random", "For unstructured random tokens the token distribution "
              "hardly matters (Zipf vs uniform)", SEED,
              "Avg: " + seed_avgs("Zipf Baseline", "Rand. Baseline")),
        Claim("distribution-stack", "For the stack grammar the token distribution hardly "
              "matters (Zipf vs uniform pushes)", SEED,
              "Avg: " + seed_avgs("Artificial (Zipf)", "Artificial (Uni.)")),
        Claim("structure", "The stack grammar transfers better than unstructured random "
              "tokens", SEED, "Avg: Artificial (Uni.) / (Zipf) "
              f"{seed_avg('Artificial (Uni.)'):.3f} / {seed_avg('Artificial (Zipf)'):.3f}; "
              f"Rand. / Zipf Baseline {seed_avg('Rand. Baseline'):.3f} / "
              f"{seed_avg('Zipf Baseline'):.3f}"),
        Claim("vocabulary-size", "A stack grammar over more token types transfers better "
              "(5000 > 500 > 50), the types it never uses left untrained", SEED,
              "Avg: " + seed_avgs("Artificial (5000)", "Artificial (500)", "Artificial (50)")),
        Claim("substitution", "Writing 50 types as random ids of their group (50-s) recovers "
              "much of the 50-type corpus's loss", SEED,
              "Avg: " + seed_avgs("Artificial (50-s)", "Artificial (50)", "Artificial (5000)")),
        Claim("other-language", "The stack grammar transfers about as well as another human "
              "language (Kannada; ours: German)", SEED,
              "Avg: " + seed_avgs("Kannada", "Artificial (Zipf)")),
        Claim("non-language", "Natural non-language data (proteins, JavaScript) is no better "
              "than random tokens", SEED,
              "Avg: " + seed_avgs("Amino Acid", "Java Script", "Rand. Baseline", "Zipf Baseline")),
        Claim("english-best", "English pretraining transfers best", SEED,
              "Avg: " + seed_avgs("Pre-train En", "Kannada") + " (the next best)"),
        Claim("sentence-pair", "The gains lie in sentence-pair tasks (STS-B above all); on "
              "single-sentence tasks no non-English corpus helps", SEED,
              "STS-B: No Pre-train 0.17, Pre-train En / Kannada / Artificial (Zipf) 0.76; "
              "SST-2 0.83 vs 0.81-0.82, CoLA 0.13 vs 0.11-0.12"),
    )
    cpu_minutes = None  # set from the measured run (README)
    default_seeds = {"cpu": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return runs(scale, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        s = scores(results)  # init -> task -> score per seed
        rep = seed_recipes(Report(self.title, out), results)
        seed_sections(rep, results, s, out)
        rep.verdicts = [sv.judge(c, s) for c in self.claims]
        return rep
