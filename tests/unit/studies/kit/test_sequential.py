"""Sequential replication (kit/sequential.py, `reasonlab run STUDY --until-decided`): the
alpha-spending levels, the per-claim stopping, and the command end to end at smoke scale."""

import json
import math

import numpy as np
import pytest

from reasonlab.cli import main
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.core import Claim, Verdict


def test_obrien_fleming_spending_sums_to_alpha_and_spends_little_early():
    looks = sequential.plan(3, 12)
    assert [k.units for k in looks] == [3, 6, 9, 12]
    assert math.isclose(sum(k.level for k in looks), stats.ALPHA)
    assert looks[0].level < 1e-4 < looks[1].level < looks[2].level < looks[3].level
    # Lan & DeMets' O'Brien-Fleming-type function at t = 1/2: 2 - 2 Phi(2.241 * sqrt 2)
    assert sequential.spent(0.5) == pytest.approx(0.00153, abs=2e-5)
    assert [k.units for k in sequential.plan(3, 10)] == [3, 6, 9, 10]
    with pytest.raises(ValueError):
        sequential.plan(4, 3)


def test_a_look_reads_its_intervals_at_its_nominal_level():
    x = [0.1, 0.2, 0.3]
    wide = stats.mean_of(x)
    with stats.nominal(0.001):
        narrow_level = stats.mean_of(x)
    assert narrow_level.hi - narrow_level.lo > wide.hi - wide.lo
    assert "99.8% CI" in narrow_level.text() and "95% CI" in wide.text()
    assert stats.alpha() == stats.ALPHA  # restored after the block


def test_a_claim_keeps_the_verdict_of_the_look_that_decided_it():
    a, b = Claim("a", "a", "s"), Claim("b", "b", "s")
    looks = sequential.plan(3, 9)
    judge = sequential.Judge(["a", "b"], looks)
    judge.see(looks[0], [Verdict(a, "inconclusive", "1"), Verdict(b, "inconclusive", "1")])
    judge.see(looks[1], [Verdict(a, "reproduced", "2"), Verdict(b, "inconclusive", "2")])
    assert not judge.done
    judge.see(looks[2], [Verdict(a, "inconclusive", "3"), Verdict(b, "inconclusive", "3")])
    va, vb = judge.verdicts()
    assert (va.status, va.evidence, va.look, va.units) == ("reproduced", "2", 2, 6)
    assert (vb.status, vb.look, vb.units) == ("inconclusive", 3, 9)
    assert "decided at look 2 of 3 (6 units)" in va.summary()
    assert "undecided after look 3 of 3 (9 units)" in vb.summary()


def test_a_curtailed_claim_stops_its_sequence_inconclusive():
    """A claim whose precondition is out of reach of the units to come settles at that look
    (the study stops adding units for it); an inconclusive one that is not curtailed waits for
    more."""
    a, b = Claim("a", "a", "s"), Claim("b", "b", "s")
    looks = sequential.plan(3, 9)
    judge = sequential.Judge(["a", "b"], looks)
    judge.see(looks[0], [Verdict(a, "inconclusive", "1", curtailed=True),
                         Verdict(b, "inconclusive", "1")])
    assert not judge.done
    judge.see(looks[1], [Verdict(a, "reproduced", "2"), Verdict(b, "reproduced", "2")])
    assert judge.done
    va, vb = judge.verdicts()
    assert (va.status, va.look, va.units) == ("inconclusive", 1, 3)  # not reopened at look 2
    assert "stopped at look 1 of 3 (3 units): its precondition is out of reach" in va.summary()
    assert (vb.status, vb.look) == ("reproduced", 2)
    # the rules learn how many units may come from the look they are judged at
    seen = []

    def at(n):
        seen.append(sequential.to_come())
        return Verdict(a, "inconclusive", "", curtailed=n >= 6)
    assert sequential.simulate(at, looks) == "inconclusive" and seen == [6, 3]
    assert sequential.to_come() == 0


def test_futility_is_judged_at_alpha_and_only_with_units_to_come():
    """`futile` reads its test at the one-sided ALPHA whatever the look's level, and stops
    nothing outside a sequential run or at its last look (no unit is to come)."""
    levels = []

    def unmet() -> bool:
        levels.append(stats.alpha())
        return True

    assert not sequential.futile(unmet) and levels == []
    with stats.nominal(0.001), sequential.adding(0):
        assert not sequential.futile(unmet) and levels == []
    with stats.nominal(0.001), sequential.adding(3):
        assert sequential.futile(unmet) and levels == [stats.ALPHA]
        assert not sequential.futile(lambda: False)


def test_sequential_false_rate_stays_within_alpha_where_unadjusted_looks_do_not():
    """A one-sample t rule under its null, judged at 3, 6, 9, 12 units: naive looks at 2.5%
    each read "reproduced" well above 2.5%; the spent levels stay within it."""
    rng = np.random.default_rng(0)
    looks = sequential.plan(3, 12)
    naive = [sequential.Look(k.index, k.units, stats.ALPHA) for k in looks]
    counts = {"spent": 0, "naive": 0}
    draws = 2000
    for _ in range(draws):
        x = rng.normal(0.0, 1.0, 12)

        def at(n):
            return Verdict(Claim("c", "c", "s"), stats.better_by(stats.mean_of(x[:n]), 0.0).status,
                           "")
        counts["spent"] += sequential.simulate(at, looks) == "reproduced"
        counts["naive"] += sequential.simulate(at, naive) == "reproduced"
    assert counts["spent"] / draws <= stats.ALPHA + 0.01
    assert counts["naive"] / draws > stats.ALPHA + 0.01  # the test can fail: looks inflate it


@pytest.mark.parametrize("args, needle", [
    (["--max-units", "4"], "--max-units caps --until-decided"),
    (["--until-decided", "--dry-run"], "without --dry-run"),
    (["--until-decided", "--max-units", "1"], "must exceed"),
])
def test_until_decided_user_errors(args, needle, tmp_path, capsys):
    assert main(["run", "lego-stochastic-depth", "--scale", "smoke", "--out", str(tmp_path),
                 *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1


def test_a_study_that_trains_nothing_cannot_add_units(tmp_path, capsys):
    assert main(["run", "symbols-kernel", "--scale", "smoke", "--until-decided",
                 "--out", str(tmp_path)]) == 2
    assert "cannot add units" in capsys.readouterr().err


def test_until_decided_end_to_end_at_smoke_scale(tmp_path, capsys):
    """Two looks (1 then 2 seeds): the second trains only the new seed's runs, the report
    says at which look each claim was decided or curtailed (at smoke scale BERT stays on the
    unigram plateau, which curtails the two end-of-training claims at look 1)."""
    out = tmp_path / "store"
    assert main(["run", "lego-hardcoded-attention", "--scale", "smoke", "--until-decided",
                 "--max-units", "2", "--out", str(out), "--quiet"]) == 0
    folder = out / "lego-hardcoded-attention" / "smoke"
    record = json.loads((folder / "study.json").read_text())
    assert [k["units"] for k in record["sequential"]["looks"]] == [1, 2]
    assert record["seeds"] == record["sequential"]["looks"][record["sequential"]["stopped_at"]
                                                         - 1]["units"]
    runs = {r["id"] for r in record["runs"]}
    assert len(runs) == len(list((out / "runs").iterdir()))  # look 2 reused look 1's runs
    # the summed time is the study's own: this command found none of them finished at its start
    # (look 2 found look 1's), so `reasonlab readme` can read it as measured
    assert record["timing"]["runs_found"] == 0 and record["timing"]["runs"] == len(runs)
    verdicts = {v["claim"]: v for v in json.loads((folder / "verdicts.json").read_text())}
    assert verdicts and all(v["look"]["looks"] == 2 for v in verdicts.values())
    assert record["sequential"]["stopped_at"] == 2  # hardcode-early waits for more seeds
    for key in ("hardcode-late", "hybrid-final"):  # curtailed: not reopened at look 2
        assert verdicts[key]["status"] == "inconclusive" and verdicts[key]["look"]["look"] == 1
        assert ("stopped at look 1 of 2 (1 unit): its precondition is out of reach"
                in verdicts[key]["summary"])
    assert verdicts["hardcode-early"]["look"]["look"] == 2
    report = (folder / "report.md").read_text()
    assert "## Sequential replication" in report and "look" in report
    # the same command again finds every run of every look: it trained nothing, and says so
    assert main(["run", "lego-hardcoded-attention", "--scale", "smoke", "--until-decided",
                 "--max-units", "2", "--out", str(out), "--quiet"]) == 0
    again = json.loads((folder / "study.json").read_text())["timing"]
    assert again["runs_found"] == again["runs"] == len(runs)
