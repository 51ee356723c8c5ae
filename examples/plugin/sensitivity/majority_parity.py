"""The study `sensitivity-majority-parity`: one model shape trained on the majority and on the
parity of the same random bits; the claim holds when the majority's final test accuracy beats
the parity's by the kit's minimum accuracy gain, over seeds. Its claims come from claims.toml by
the study's name, as for reasonlab's own studies."""

from __future__ import annotations

from pathlib import Path

from reasonlab.report import pm
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.kit.verdicts import gain_verdict

from .common import ARMS, MAJORITY, PARITY, recipe


@STUDIES.register("sensitivity-majority-parity")
class MajorityParity(Study):
    title = "Sensitivity: the majority of n bits against their parity"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), ARMS, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        acc = {arm: [r["final"]["acc"] for r in rs] for arm, rs in results.arms().items()}
        rep = Report(self.title, out).recipe(results)
        rep.table("Final test accuracy", ["function", "mean ± std over seeds"],
                  [[arm, pm(v)] for arm, v in acc.items()])
        rep.verdicts = [gain_verdict(self.claim("majority-easier"), acc[MAJORITY], acc[PARITY],
                                     (MAJORITY, PARITY), "final test accuracy")]
        return rep
