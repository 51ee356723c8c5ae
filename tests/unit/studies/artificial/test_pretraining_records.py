"""artificial-pretraining's run records (paper_table_analysis.score_records, runs.json beside the
report): a round trip on hand-made results, and the cpu run's committed records
(_support/pretraining_cpu_runs.json) recompute the verdicts measured.json holds, so the data and
the README's generated verdicts cannot drift apart."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from reasonlab.runs import config_id
from reasonlab.studies.artificial import pretraining
from reasonlab.studies.artificial._support import paper_table_analysis as pa
from reasonlab.studies.artificial._support import paper_table_verdicts as sv
from reasonlab.studies.kit import records as rc
from reasonlab.studies.artificial._support.paper_table import corpora, downstream, inits, runs
from reasonlab.studies.artificial.common import FINETUNE, PRETRAIN, SCRATCH
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.base import STUDIES, Results

# the checkout's files, as lego's run-record test reads them (the data file is no package data)
FAMILY = Path(__file__).resolve().parents[4] / "src" / "reasonlab" / "studies" / "artificial"
COMMITTED = FAMILY / "_support" / "pretraining_cpu_runs.json"
STUDY = "artificial-pretraining"


def fabricated(monkeypatch: pytest.MonkeyPatch, seeds: int = 2) -> Results:
    """The smoke scale's runs with made-up finals: each number distinct per run, and the
    similarity task's Spearman (read from a model) replaced by one made up from its run id."""
    def score(run_dir: Path, metric: str, n: int) -> float:
        assert metric == "spearman"
        return int(Path(run_dir).name[:6], 16) / 16**6

    monkeypatch.setattr(pa, "run_score", score)
    pairs = []
    for k, s in enumerate(runs("smoke", seeds)):
        final = {"acc": 0.5 + k / 1000} | ({"loss": 9.0 - k / 100}
                                           if s.factors["phase"] == PRETRAIN else {})
        pairs.append((s, {"dir": f"/nowhere/runs/{config_id(s.config)}", "final": final}))
    return Results(pairs, "smoke", seeds)


def same_scores(a: dict, b: dict) -> bool:
    """Equal tables: the same tasks and inits in the same order, the same per-seed arrays."""
    return (list(a) == list(b) and all(list(a[t]) == list(b[t]) for t in a)
            and all(np.array_equal(a[t][i], b[t][i]) for t in a for i in a[t]))


def test_records_round_trip_to_the_scores_the_verdicts_read(monkeypatch, tmp_path):
    results = fabricated(monkeypatch)
    records = pa.score_records(results)
    assert len(records) == len(results)
    path = tmp_path / "runs.json"
    rc.write_run_records(records, path)
    text = path.read_text()
    assert len(text.splitlines()) == len(records) + 2  # "[", one run a line, "]"
    assert rc.read_run_records(path) == records
    want = pa.scores(results)
    assert list(want) == list(downstream("smoke"))
    assert list(want["pos"]) == inits("smoke") and all(len(v) == 2 for v in want["pos"].values())
    assert same_scores(pa.read_scores(path), want)
    # each fine-tuning record names the pretraining run of its corpus and seed it started from
    pre = {(r["corpus"], r["seed"]): r["run"] for r in records if r["phase"] == PRETRAIN}
    assert len(pre) == 2 * len(corpora("smoke"))
    for r in records:
        if r["phase"] == FINETUNE:
            assert r["from"] == (None if r["init"] == SCRATCH else pre[(r["init"], r["seed"])])
            assert r["metric"] == downstream("smoke")[r["task"]].metric
    # the file's order does not matter: seeds are sorted, tasks in column order
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    got = pa.records_scores(shuffled)
    assert list(got) == list(want)
    assert all(np.array_equal(got[t][i], want[t][i]) for t in want for i in want[t])
    with pytest.raises(ValueError, match="two records"):
        pa.records_scores(records + [next(r for r in records if r["phase"] == FINETUNE)])


def test_the_analysis_writes_runs_json_and_judges_what_it_holds(monkeypatch, tmp_path):
    """analyse writes runs.json beside the report and its verdicts are those of the scores read
    back from that file (the tables and figure, which read real tasks, are left out)."""
    results = fabricated(monkeypatch)
    monkeypatch.setattr(pretraining, "seed_sections", lambda *a: None)
    monkeypatch.setattr(pretraining, "seed_recipes", lambda rep, results: rep)
    study = STUDIES[STUDY]()
    rep = study.analyse(results, tmp_path)
    s = pa.read_scores(tmp_path / "runs.json")
    assert same_scores(s, pa.scores(results))
    assert [(v.status, v.evidence) for v in rep.verdicts] == [
        (v.status, v.evidence) for v in (sv.judge(c, s) for c in study.claims)]


# -------------------------------------------------------------------- the committed cpu run


def committed() -> list[dict]:
    return rc.read_run_records(COMMITTED)


def measured() -> dict:
    return json.loads((FAMILY / "measured.json").read_text())[STUDY]["cpu"]


def test_the_committed_records_cover_every_run_of_the_cpu_study():
    """Every run of the cpu study at its measured seeds, each once, under the id the study gives
    it today: every corpus's pretraining run and every task x init fine-tuning run per seed."""
    seeds = measured()["seeds"]
    assert seeds == 6
    records = committed()
    specs = STUDIES[STUDY]().runs("cpu", seeds)
    assert [r["run"] for r in records] == [config_id(s.config) for s in specs]
    assert len(records) == measured()["runs"] == 444
    for r, s in zip(records, specs, strict=True):
        assert r["phase"] == s.factors["phase"] and r["seed"] == s.seed
        keys = ("corpus",) if r["phase"] == PRETRAIN else ("task", "init")
        assert all(r[k] == s.factors[k] for k in keys)
    s = pa.records_scores(records)
    assert list(s) == list(downstream("cpu"))
    for t in s:
        assert list(s[t]) == inits("cpu")  # the seed's 13 rows and the follow-up's 2
        assert all(len(v) == seeds and np.isfinite(v).all() for v in s[t].values())
    for init in sv.SEED_INITS + (SCRATCH,):  # every row a verdict reads
        assert all(init in s[t] for t in s)


def test_the_committed_records_recompute_the_measured_cpu_verdicts():
    """Each claim judged as the report judged it: the run's looks (3 seeds, then 3 more to 6:
    study.json's `sequential`), each verdict at the nominal level of the look that decided it
    (or its last), on the first `units` seeds, with the units still to come after that look
    (futility stops: kit/sequential.py). Status, effect and interval as measured.json holds
    them (the README's generated verdicts)."""
    cls = STUDIES[STUDY]
    m = measured()
    looks = sequential.plan(cls.default_seeds["cpu"], m["seeds"])
    assert [k.units for k in looks] == [3, 6]
    s = pa.records_scores(committed())
    want = {v["claim"]: v for v in m["verdicts"]}
    assert list(want) == [c.key for c in cls.claims]
    for claim in cls.claims:
        w = want[claim.key]
        look = looks[w["look"]["look"] - 1]
        assert (w["look"]["looks"], w["look"]["units"]) == (len(looks), look.units)
        first = {t: {i: v[:look.units] for i, v in by.items()} for t, by in s.items()}
        with stats.nominal(look.level), sequential.adding(looks[-1].units - look.units):
            v = sv.judge(claim, first)
        assert v.status == w["status"], claim.key
        e, we = v.effect, w["effect"]
        assert (e.what, list(e.n)) == (we["what"], we["n"]), claim.key
        assert [e.value, e.lo, e.hi] == pytest.approx([we["value"], we["lo"], we["hi"]],
                                                      rel=1e-9, abs=1e-12), claim.key
