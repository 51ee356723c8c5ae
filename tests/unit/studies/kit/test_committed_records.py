"""The committed cpu run records (<family>/_support/<study>_cpu_runs.json: the kit's runs.json
of each report, kit/records.py) are the studies' runs and recompute the verdicts measured.json
holds, so the data and the READMEs' generated verdicts cannot drift apart. lego-stochastic-depth's
store report ran 12 seeds (before curtailment stopped the study at look 1, 3 seeds): the records
keep all 12, and the measured verdict is judged on the first 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonlab.runs import config_id
from reasonlab.studies.kit import records as rc
from reasonlab.studies.kit.base import STUDIES

# the checkout's files, as lego's plateau run-record test reads them (the data is no package data)
STUDIES_DIR = Path(__file__).resolve().parents[4] / "src" / "reasonlab" / "studies"
COMMITTED = [  # family, study, file, seeds of the store's report, records
    ("fpt", "fpt-scaling", "scaling_cpu_runs.json", 12, 144),
    ("fpt", "fpt-modality", "modality_cpu_runs.json", 6, 120),
    ("fpt", "fpt-freeze-fewer", "freeze_fewer_cpu_runs.json", 12, 192),
    ("lego", "lego-stochastic-depth", "stochastic_depth_cpu_runs.json", 12, 24),
]
IDS = [c[1] for c in COMMITTED]


def committed(family: str, name: str) -> list[dict]:
    return rc.read_run_records(STUDIES_DIR / family / "_support" / name)


def measured(family: str, study: str) -> dict:
    return json.loads((STUDIES_DIR / family / "measured.json").read_text())[study]["cpu"]


@pytest.mark.parametrize("family,study,name,seeds,n", COMMITTED, ids=IDS)
def test_the_committed_records_cover_every_run_of_the_cpu_study(family, study, name, seeds, n):
    """Every run of the cpu study at the seeds its store's report had (at least the measured
    seeds), each once, under the id the study gives it today, with its arm, seed and factors."""
    records = committed(family, name)
    assert len(records) == n and 1 + max(r["seed"] for r in records) == seeds
    m = measured(family, study)
    assert seeds >= m["seeds"]
    specs = STUDIES[study]().runs("cpu", seeds)
    assert [r["run"] for r in records] == [config_id(s.config) for s in specs]
    rc.records_results(records, specs, "cpu", seeds)  # arm, seed and factors run by run
    if "runs" in m:  # a time the README states: of as many runs as the study has
        assert len(STUDIES[study]().runs("cpu", m["seeds"])) == m["runs"]


@pytest.mark.parametrize("family,study,name,seeds,n", COMMITTED, ids=IDS)
def test_the_committed_records_recompute_the_measured_cpu_verdicts(family, study, name, seeds,
                                                                   n):
    """Each claim judged from the records as the report judged it (records.replay: a
    sequential run's claim at the look that decided it, on that look's seeds at its level, with
    the units still to come), by the study's own `judge_runs`: status, effect and interval as
    measured.json holds them (the README's generated verdicts). The rest of the text is not
    compared: wording (a power quote) may have changed since the run."""
    m = measured(family, study)
    cls = STUDIES[study]
    got = rc.replay(cls(), committed(family, name), "cpu", m)
    assert [w["claim"] for w in m["verdicts"]] == [c.key for c in cls.claims]
    for w in m["verdicts"]:
        v = got[w["claim"]]
        assert v.status == w["status"], w["claim"]
        if "look" in w:
            assert (v.look, v.looks, v.units) == (w["look"]["look"], w["look"]["looks"],
                                                  w["look"]["units"]), w["claim"]
        e, we = v.effect, w["effect"]
        assert (e.what, list(e.n)) == (we["what"], we["n"]), w["claim"]
        assert [e.value, e.lo, e.hi] == pytest.approx([we["value"], we["lo"], we["hi"]],
                                                      rel=1e-9, abs=1e-12), w["claim"]
