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
from reasonlab.studies.artificial.seed import FINETUNE, PRETRAIN, SCRATCH, runs, seed_avg
from reasonlab.studies.artificial.seed_analysis import (plot_seed_table, pretraining_table,
                                                        scores, seed_table)
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study

SEED = "Chiang & Lee (arXiv 2012.11995), the seed's Results table"


def _avg(*rows: str) -> str:
    return ", ".join(f"{r} {seed_avg(r):.3f}" for r in rows)


@STUDIES.register("artificial-pretraining")
class ArtificialPretraining(Study):
    title = "Pretraining without human language: the seed's table (Chiang & Lee)"
    claims = (
        Claim("random-beats-scratch", "Pretraining on random tokens is better than no "
              "pretraining (the follow-up, arXiv 2109.03537, finds uniform tokens no better: "
              "-0.2; this study follows the seed)", SEED,
              "Avg: " + _avg("Rand. Baseline", "No Pre-train") + " (+4.5 points); STS-B 0.29 "
              "vs 0.17"),
        Claim("distribution-random", "For unstructured random tokens the token distribution "
              "hardly matters (Zipf vs uniform)", SEED,
              "Avg: " + _avg("Zipf Baseline", "Rand. Baseline")),
        Claim("distribution-stack", "For the stack grammar the token distribution hardly "
              "matters (Zipf vs uniform pushes)", SEED,
              "Avg: " + _avg("Artificial (Zipf)", "Artificial (Uni.)")),
        Claim("structure", "The stack grammar transfers better than unstructured random "
              "tokens", SEED, "Avg: Artificial (Uni.) / (Zipf) "
              f"{seed_avg('Artificial (Uni.)'):.3f} / {seed_avg('Artificial (Zipf)'):.3f}; "
              f"Rand. / Zipf Baseline {seed_avg('Rand. Baseline'):.3f} / "
              f"{seed_avg('Zipf Baseline'):.3f}"),
        Claim("vocabulary-size", "A stack grammar over more token types transfers better "
              "(5000 > 500 > 50), the types it never uses left untrained", SEED,
              "Avg: " + _avg("Artificial (5000)", "Artificial (500)", "Artificial (50)")),
        Claim("substitution", "Writing 50 types as random ids of their group (50-s) recovers "
              "much of the 50-type corpus's loss", SEED,
              "Avg: " + _avg("Artificial (50-s)", "Artificial (50)", "Artificial (5000)")),
        Claim("other-language", "The stack grammar transfers about as well as another human "
              "language (Kannada; ours: German)", SEED,
              "Avg: " + _avg("Kannada", "Artificial (Zipf)")),
        Claim("non-language", "Natural non-language data (proteins, JavaScript) is no better "
              "than random tokens", SEED,
              "Avg: " + _avg("Amino Acid", "Java Script", "Rand. Baseline", "Zipf Baseline")),
        Claim("english-best", "English pretraining transfers best", SEED,
              "Avg: " + _avg("Pre-train En", "Kannada") + " (the next best)"),
        Claim("sentence-pair", "The gains lie in sentence-pair tasks (STS-B above all); on "
              "single-sentence tasks no non-English corpus helps", SEED,
              "STS-B: No Pre-train 0.17, Pre-train En / Kannada / Artificial (Zipf) 0.76; "
              "SST-2 0.83 vs 0.81-0.82, CoLA 0.13 vs 0.11-0.12"),
    )
    cpu_minutes = None  # set from the measured run (README)
    default_seeds = {"cpu": 3}

    @classmethod
    def missing(cls) -> str | None:
        from reasonlab.tasks.natural import missing_packages

        absent = missing_packages()
        return None if not absent else (f"needs the Debian packages {', '.join(absent)} "
                                        f"(`apt-get install {' '.join(absent)}`, which "
                                        "scripts/setup.sh does)")

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return runs(scale, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        s = scores(results)
        rep = Report(self.title, out)
        for part, note in ((results.where(phase=PRETRAIN), "Pretraining runs (one per corpus, "
                            "seed 0)."),
                           (results.where(phase=FINETUNE, init=SCRATCH), "Fine-tuning runs, "
                            "no-pretraining arm; a pretrained arm is the same with "
                            "`init_from` = its corpus's pretraining run.")):
            if part:
                rep.recipe(part, note=note)
        seed_table(rep, results, s)
        pretraining_table(rep, results)
        plot_seed_table(s, out / "seed_table.png")
        rep.figure("seed_table.png", "Average gain over no pretraining per seed row: ours "
                   "(4 WordNet tasks) beside Chiang & Lee's (8 GLUE tasks)")
        rep.verdicts = [sv.judge(c, s) for c in self.claims]
        return rep
