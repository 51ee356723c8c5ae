"""Every study runs end to end at smoke scale and writes a report with figures and verdicts."""

import json
import re

import pytest

from reasonlab.errors import AssetError
from reasonlab.runs import config_id
from reasonlab.studies import STUDIES, run_study
from reasonlab.studies.kit import records as rc
from reasonlab.studies.kit.base import Study
from reasonlab.studies.kit.core import SCALES


NO_CPU = {"fpt-backbones", "fpt-vit", "lego-plateau", "lego-short-chain"}
"""Studies without a cpu scale: each claim's weights reach no machine offline (FPT), or its
claims are about a plateau the cpu recipe's 750 steps never reach the end of (lego-plateau,
lego-short-chain: long, and paper for the first)."""
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
        # every run's numbers beside the report (kit/records.py; some studies write their
        # own, richer runs.json); a study that judges from them alone does so from the file
        saved_runs = rc.read_run_records(out / rc.RUNS_JSON)
        assert len(saved_runs) == len(specs)
        if cls.judge_runs is not Study.judge_runs:
            again = rc.judge_records(cls(), saved_runs, "smoke", cls.default_seeds["smoke"])
            assert [(v.status, v.evidence) for v in again] == [
                (v.status, v.evidence) for v in report.verdicts]
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
    lego-extrapolation's BERT runs are lego-staircase's fixed-root runs, lego-probes' BERT runs,
    lego-mixed-lengths' fixed-length runs and lego-shortcut's #0-#5 runs, its ALBERT runs
    lego-stochastic-depth's baseline; all at 3 seeds, so every seed is shared."""
    ids = {name: {(s.arm, s.seed): config_id(s.config)
                  for s in STUDIES[name]().runs("long", STUDIES[name].default_seeds["long"])}
           for name in ("lego-extrapolation", "lego-staircase", "lego-probes",
                        "lego-stochastic-depth", "lego-mixed-lengths", "lego-shortcut")}
    ext = ids["lego-extrapolation"]
    assert STUDIES["lego-extrapolation"].default_seeds["long"] == 3 and len(ext) == 6
    for seed in (0, 1, 2):
        assert ext[("BERT", seed)] == ids["lego-staircase"][("fixed (paper)", seed)]
        assert ext[("BERT", seed)] == ids["lego-probes"][("BERT", seed)]
        assert ext[("BERT", seed)] == ids["lego-mixed-lengths"][("fixed length 12", seed)]
        assert ext[("BERT", seed)] == ids["lego-shortcut"][("#0-#5", seed)]
        assert ext[("ALBERT", seed)] in ids["lego-stochastic-depth"].values()
    assert ("identity-attention term", 2) in ids["lego-staircase"]  # the levers, 3 seeds


def test_each_lego_lever_changes_only_what_it_names():
    """lego-staircase's long-scale levers are the fixed-root recipe with one change each; the
    curriculum lever starts from a 4-clause run of 300 steps (all 4 positions supervised),
    shared by its seeds, and is otherwise the recipe."""
    from reasonlab.studies.lego.common import LEVERS

    specs = {(s.arm, s.seed): s.config for s in STUDIES["lego-staircase"]().runs("long", 3)}
    base = specs[("fixed (paper)", 0)].model_dump()

    def diff(a: dict, b: dict, at: str = "") -> set[str]:
        keys = set(a) | set(b)
        out = set()
        for k in keys:
            x, y = a.get(k), b.get(k)
            if isinstance(x, dict) and isinstance(y, dict):
                out |= diff(x, y, f"{at}{k}.")
            elif x != y:
                out.add(f"{at}{k}")
        return out

    changed = {lever: diff(specs[(lever, 0)].model_dump(), base) for lever in LEVERS}
    assert changed["weight decay 0.1"] == {"optim.weight_decay"}
    assert changed["8 layers"] == {"model.n_layers"}
    assert changed["batch 128"] == {"batch_size"}
    assert changed["d_model 128"] == {"model.d_model", "model.d_mlp"}  # heads of 32
    assert changed["cosine over 1500 steps"] == {"steps"}
    assert changed["short-chain warm-up"] == {"init_from"}
    warm = specs[("short-chain warm-up", 0)].init_from
    assert (warm.task.n_clauses, warm.task.n_train_vars, warm.steps) == (4, 4, 300)
    assert all(specs[("short-chain warm-up", s)].init_from == warm for s in (1, 2))


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
    run; the scales share no run (but `long` may reuse cpu runs it leaves as they are), and
    each trains on more examples than the one below it."""
    cls = STUDIES[name]
    if cls.missing():
        pytest.skip(cls.missing())
    if not cls.trains:  # computes at initialization: no runs at any scale, and says so
        assert "runs" not in vars(cls)
        return
    seen = 0
    ids: set[str] = set()
    cpu_ids: set[str] = set()
    # cpu too, except where no checkpoint a claim needs installs offline (FPT's other
    # backbones: tiny random ones at smoke scale, the papers' at paper scale)
    assert set(cls.scales) >= {"smoke", "paper"}
    assert "cpu" in cls.scales or name in NO_CPU
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
        # each (arm, sweep point) has n seeds in a block k*n .. (k+1)*n-1 of its own (a study
        # that pools cells gives each cell a block, so that no two pooled runs share a seed)
        for seeds in per_arm.values():
            first = min(seeds)
            assert first % n == 0
            assert sorted(s - first for s in seeds) == sorted(list(range(n)) * (len(seeds) // n))
        scale_ids = {config_id(s.config) for s in specs}
        # `long` may reuse cpu runs it does not lengthen (artificial-pretraining's scratch
        # fine-tuning: one factor, pretraining length, changes), never smoke's or paper's
        reused = scale_ids & ids
        assert len(scale_ids) == len(specs) and (not reused or scale == "long")
        assert reused <= cpu_ids and len(reused) < len(scale_ids)
        if scale == "cpu":
            cpu_ids = scale_ids
        ids |= scale_ids
        examples = max(s.config.steps * s.config.batch_size for s in specs)
        assert examples > seen, scale
        seen = examples


def test_a_command_that_resumes_runs_says_so_in_its_timing(tmp_path):
    """A run an earlier command left with a checkpoint and no result is finished by this one,
    which then times only part of it: study.json counts it (`reasonlab readme` then reads the
    time as a lower bound)."""
    _, out = run_study("lego-extrapolation", "smoke", out=tmp_path, workers=1, quiet=True)
    first = json.loads((out / "study.json").read_text())["timing"]
    assert (first["runs_found"], first["runs_resumed"]) == (0, 0)
    runs = sorted((tmp_path / "runs").iterdir())
    (runs[0] / "result.json").unlink()  # as if killed after its last checkpoint
    run_study("lego-extrapolation", "smoke", out=tmp_path, workers=1, quiet=True)
    timing = json.loads((out / "study.json").read_text())["timing"]
    assert (timing["runs"], timing["runs_found"], timing["runs_resumed"]) == (2, 1, 1)
    assert (runs[0] / "result.json").is_file()
