"""Every study runs end to end at smoke scale and writes a report with figures and verdicts."""

import json
import re

import pytest

from reasonlab.errors import AssetError
from reasonlab.runs import config_id
from reasonlab.studies import STUDIES, run_study
from reasonlab.studies.kit.core import SCALES


NUMBER = re.compile(r"\d+\.\d+|\d+|\binf\b")  # inf: a step never reached


@pytest.mark.parametrize("name", list(STUDIES))
def test_study_smoke(name, tmp_path):
    cls = STUDIES[name]
    if why := cls.missing():  # a declared asset (e.g. pretrained weights) is absent
        pytest.skip(why)
    try:
        report, out = run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)
    except AssetError as e:  # an offline corpus that scripts/setup.sh could not install
        pytest.skip(str(e))
    text = (out / "report.md").read_text()
    # one verdict per claim, in the claims' order, each with the numbers it rests on
    assert [v.claim.key for v in report.verdicts] == [c.key for c in cls.claims]
    saved = json.loads((out / "verdicts.json").read_text())
    assert [(v["claim"], v["status"], v["evidence"]) for v in saved] == [
        (v.claim.key, v.status, v.evidence) for v in report.verdicts]
    for v in report.verdicts:
        assert v.status in ("reproduced", "not reproduced", "inconclusive")
        assert len(NUMBER.findall(v.evidence)) >= 2, v.evidence  # a measurement and its rule
        assert v.evidence in text
    assert report.figures or report.sections
    for png, _ in report.figures:
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and f"({png})" in text

    # Runs: a study that trains trains exactly its distinct configs; one that does not says so
    # and leaves no run behind.
    def runs() -> list[str]:
        runs_dir = tmp_path / "runs"
        return sorted(p.name for p in runs_dir.iterdir()) if runs_dir.exists() else []

    if cls.trains:
        specs = cls().runs("smoke", cls.default_seeds["smoke"])
        assert runs() == sorted({config_id(s.config) for s in specs}) != []
    else:
        assert "runs" not in vars(cls) and runs() == []
    before = runs()
    run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)  # a second call reuses them
    assert runs() == before


def test_a_scale_the_study_lacks_fails_in_one_line(tmp_path):
    """`long` exists only where a study defines it: elsewhere one ConfigError, nothing
    written."""
    from reasonlab.errors import ConfigError

    lacking = next(n for n, c in STUDIES.items() if "long" not in c.scales)
    with pytest.raises(ConfigError, match="has no 'long' scale; use one of smoke, cpu, paper"):
        run_study(lacking, "long", out=tmp_path / "x", workers=1, quiet=True)
    assert not (tmp_path / "x").exists()


def test_the_long_scale_reuses_runs_across_lego_studies():
    """The fitted-model LEGO studies have a long scale, and its shared arms are one run each:
    lego-extrapolation's BERT runs are lego-staircase's fixed-root runs and lego-probes' BERT
    runs, its ALBERT runs lego-stochastic-depth's baseline."""
    ids = {name: {(s.arm, s.seed): config_id(s.config)
                  for s in STUDIES[name]().runs("long", STUDIES[name].default_seeds["long"])}
           for name in ("lego-extrapolation", "lego-staircase", "lego-probes",
                        "lego-stochastic-depth", "lego-mixed-lengths", "lego-shortcut")}
    ext = ids["lego-extrapolation"]
    assert STUDIES["lego-extrapolation"].default_seeds["long"] == 2 and len(ext) == 4
    for seed in (0, 1):
        assert ext[("BERT", seed)] == ids["lego-staircase"][("fixed (paper)", seed)]
        assert ext[("BERT", seed)] == ids["lego-probes"][("BERT", seed)]
        assert ext[("ALBERT", seed)] in ids["lego-stochastic-depth"].values()
    assert ("identity-attention term", 2) in ids["lego-staircase"]  # the levers, 3 seeds


def test_studies_share_runs_by_default(tmp_path, monkeypatch):
    """Without --out, reports go to reasonlab-out/<study>/<scale> and every study uses one
    runs folder, so lego-probes finds lego-extrapolation's finished runs and trains nothing."""
    monkeypatch.chdir(tmp_path)
    _, out = run_study("lego-extrapolation", "smoke", workers=1, quiet=True)
    assert out.resolve() == (tmp_path / "reasonlab-out" / "lego-extrapolation" / "smoke").resolve()
    runs = tmp_path / "reasonlab-out" / "runs"
    trained = sorted(p.name for p in runs.iterdir())
    assert len(trained) == 2  # BERT and ALBERT, one seed each
    _, probes_out = run_study("lego-probes", "smoke", workers=1, quiet=True)
    assert sorted(p.name for p in runs.iterdir()) == trained  # reused, none added
    assert (probes_out / "report.md").exists() and not (probes_out / "runs").exists()


def test_two_studies_with_one_out_keep_both_reports(tmp_path):
    """--out is the root: each study's report goes to <out>/<study>/<scale>, never on top of
    another's."""
    _, a = run_study("lego-extrapolation", "smoke", out=tmp_path, workers=1, quiet=True)
    _, b = run_study("lego-probes", "smoke", out=tmp_path, workers=1, quiet=True)
    assert a == tmp_path / "lego-extrapolation" / "smoke"
    assert b == tmp_path / "lego-probes" / "smoke"
    for folder, name in ((a, "lego-extrapolation"), (b, "lego-probes")):
        assert json.loads((folder / "study.json").read_text())["study"] == name
        assert (folder / "report.md").exists() and (folder / "verdicts.json").exists()
    assert not (tmp_path / "report.md").exists()


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_scale_builds_its_own_growing_grid(name):
    """cpu and paper resolve to valid configs too (the tests train smoke only): every arm has
    the scale's seeds, numbered from 0, with the config's seed; no two specs collapse onto one
    run; the scales share no run, and each trains on more examples than the one below it."""
    cls = STUDIES[name]
    if cls.missing():
        pytest.skip(cls.missing())
    if not cls.trains:  # computes at initialization: no runs at any scale, and says so
        assert "runs" not in vars(cls)
        return
    seen = 0
    ids: set[str] = set()
    assert set(cls.scales) >= {"smoke", "cpu", "paper"}
    for scale in (s for s in SCALES if s in cls.scales):  # smallest first
        n = cls.default_seeds[scale]
        specs = cls().runs(scale, n)
        assert specs and all(s.config.seed == s.seed for s in specs)
        # a pretraining run that other runs initialise from (TrainConfig.init_from) is one run
        # shared by all their seeds, so it is exempt from the seeds rule
        shared = {config_id(s.config.init_run) for s in specs if s.config.init_run is not None}
        per_arm: dict[str, list[int]] = {}
        for s in specs:
            if config_id(s.config) not in shared:
                per_arm.setdefault(s.arm, []).append(s.seed)
        for seeds in per_arm.values():  # each (arm, sweep point) has seeds 0..n-1
            assert sorted(seeds) == sorted(list(range(n)) * (len(seeds) // n))
        scale_ids = {config_id(s.config) for s in specs}
        assert len(scale_ids) == len(specs) and not scale_ids & ids
        ids |= scale_ids
        examples = max(s.config.steps * s.config.batch_size for s in specs)
        assert examples > seen, scale
        seen = examples
