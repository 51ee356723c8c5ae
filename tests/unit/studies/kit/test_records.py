"""The kit's run records (kit/records.py, runs.json beside every report): a round trip on
hand-made results back to the Results a study's `judge_runs` reads, the checks that records are the
study's runs, and `replay` judging each claim at the sequential look that decided it."""

from __future__ import annotations

import json
import random

import pytest

from reasonlab.runs import config_id
from reasonlab.studies.kit import records as rc
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.base import Claim, Report, Results, Study, Verdict, grid
from reasonlab.studies.kit.stats import Estimate
from reasonlab.studies.lego.common import recipe

A, B = Claim("a", "claim a", "§1"), Claim("b", "claim b", "§2")


class Toy(Study):
    """Two arms, one sweep factor; its verdicts read each run's final accuracy and say at which
    seeds, level and units to come they were judged (what `replay` must set)."""

    name, title, claims = "toy-records", "t", (A, B)
    default_seeds = {"smoke": 3}

    def runs(self, scale, seeds):
        return grid(recipe("smoke"), {"X": {}, "Y": {"model": {"tie_layers": True}}},
                    {"short": {"n_train": 256}, "long": {"n_train": 512}}, seeds,
                    factors={"task": "lego"}, sweep_factor="size")

    def analyse(self, results, out):
        rep = Report(self.title, out)
        rep.verdicts = self.judge_runs(results)
        return rep

    def judge_runs(self, results):
        acc = {k: sum(float(r["final"]["acc"]) for _, r in rs) for k, rs in
               results.by("arm").items()}
        said = (f"X {acc['X']:.4f} Y {acc['Y']:.4f} at {results.seeds} seeds, level "
                f"{stats.alpha():.6f}, {sequential.to_come()} to come")
        est = Estimate(acc["X"] - acc["Y"], -1.0, 1.0, (results.seeds,) * 2, what="X - Y")
        return [Verdict(A, "reproduced", said, est), Verdict(B, "inconclusive", said, est)]


def fabricated(seeds: int) -> Results:
    """Each run's finals distinct (a nested metric and a list among them), as result.json's."""
    specs = Toy().runs("smoke", seeds)
    return Results([(s, {"dir": f"/nowhere/runs/{config_id(s.config)}", "curve": [],
                         "final": {"step": 10, "acc": 0.5 + k / 100, "acc_by_depth": [k, 1],
                                   "val": {"acc": k / 7}}})
                    for k, s in enumerate(specs)], "smoke", seeds)


def test_records_round_trip_to_the_results_the_verdicts_read(tmp_path):
    results = fabricated(3)
    records = rc.run_records(results)
    assert [r["run"] for r in records] == [config_id(s.config) for s, _ in results]
    assert records[0]["factors"] == {"task": "lego", "arm": "X", "size": "short"}
    path = tmp_path / rc.RUNS_JSON
    rc.write_run_records(records, path)
    assert len(path.read_text().splitlines()) == len(records) + 2  # "[", one run a line, "]"
    assert rc.read_run_records(path) == records
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)  # the file's order does not matter: the specs' does
    back = rc.records_results(shuffled, Toy().runs("smoke", 3), "smoke", 3)
    assert [s for s, _ in back] == [s for s, _ in results]
    assert [r["final"] for _, r in back] == [r["final"] for _, r in results]
    assert [(v.status, v.evidence) for v in Toy().judge_runs(back)] == [
        (v.status, v.evidence) for v in Toy().judge_runs(results)]
    # fewer seeds than the records hold: their first seeds, the rest skipped
    first = Results([(s, r) for s, r in results if s.seed < 2], "smoke", 2)
    assert [v.evidence for v in rc.judge_records(Toy(), records, "smoke", 2)] == [
        v.evidence for v in Toy().judge_runs(first)]


def test_records_that_are_not_the_studys_runs_are_refused():
    records = rc.run_records(fabricated(2))
    specs = Toy().runs("smoke", 2)
    with pytest.raises(ValueError, match="no record of run"):
        rc.records_results(records[1:], specs, "smoke", 2)
    with pytest.raises(ValueError, match="two records"):
        rc.records_results(records + records[:1], specs, "smoke", 2)
    moved = [dict(r, factors={**r["factors"], "size": "huge"}) if i == 0 else r
             for i, r in enumerate(records)]
    with pytest.raises(ValueError, match="is not X seed 0"):
        rc.records_results(moved, specs, "smoke", 2)

    class Opaque(Toy):
        def judge_runs(self, results):
            return None  # the default: verdicts that read curves or checkpoints

    with pytest.raises(TypeError, match="defines no judge_runs"):
        rc.judge_records(Opaque(), records, "smoke", 2)


def test_replay_judges_each_claim_at_the_look_that_decided_it():
    """A sequential run from 3 seeds to 12 (looks 3, 6, 9, 12): claim a decided at look 2,
    claim b undecided after look 4, each judged on its look's seeds, at its level, with the
    units to come after it; a fixed-seed run at the kit's level with none to come."""
    records = rc.run_records(fabricated(12))
    looks = sequential.plan(3, 12)
    measured = {"seeds": 12, "verdicts": [
        {"claim": "a", "look": {"look": 2, "looks": 4, "units": 6}},
        {"claim": "b", "look": {"look": 4, "looks": 4, "units": 12}}]}
    got = rc.replay(Toy(), records, "smoke", measured)
    assert (got["a"].look, got["a"].units, got["b"].look, got["b"].units) == (2, 6, 4, 12)
    assert got["a"].evidence.endswith(f"at 6 seeds, level {looks[1].level:.6f}, 6 to come")
    assert got["b"].evidence.endswith(f"at 12 seeds, level {looks[3].level:.6f}, 0 to come")
    fixed = rc.replay(Toy(), records, "smoke", {"seeds": 3, "verdicts": [{"claim": "a"}]})
    assert fixed["a"].evidence.endswith(f"at 3 seeds, level {stats.ALPHA:.6f}, 0 to come")
    # stopped at look 1 of 4: the cap is the default (4 x 3 seeds), so look 1 has 9 to come
    early = rc.replay(Toy(), records, "smoke", {"seeds": 3, "verdicts": [
        {"claim": "a", "look": {"look": 1, "looks": 4, "units": 3}}]})
    assert early["a"].evidence.endswith(f"level {looks[0].level:.6f}, 9 to come")
    with pytest.raises(ValueError, match="not those planned"):
        rc.replay(Toy(), records, "smoke", {"seeds": 3, "verdicts": [
            {"claim": "a", "look": {"look": 1, "looks": 3, "units": 3}}]})


def test_a_study_run_writes_its_records_beside_the_report(tmp_path, monkeypatch):
    """_run_study writes runs.json before the analysis (a study's own, richer file replaces
    it); its records rebuild the Results the verdicts were judged from."""
    from reasonlab.studies.kit import base

    results = fabricated(2)
    monkeypatch.setattr(base, "execute_all", lambda configs, *a, **k: [
        dict(r) for _, r in results])
    study = Toy()
    (tmp_path / "toy").mkdir()  # run_study's output_dir
    report, out = base._run_study(study, study.runs("smoke", 2), "smoke", 2, tmp_path,
                                  tmp_path / "toy", 1, True, "local", None, {})
    records = rc.read_run_records(out / rc.RUNS_JSON)
    assert records == rc.run_records(results)
    assert [v.evidence for v in rc.judge_records(study, records, "smoke", 2)] == [
        v.evidence for v in report.verdicts]
    assert json.loads((out / "study.json").read_text())["runs"][0]["id"] == records[0]["run"]
