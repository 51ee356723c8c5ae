"""Every study runs end to end at smoke scale and writes a report with figures and verdicts."""

import json

import pytest

from reasonlab.errors import AssetError
from reasonlab.runs import config_id
from reasonlab.studies import STUDIES, run_study


@pytest.mark.parametrize("name", list(STUDIES))
def test_study_smoke(name, tmp_path):
    if why := STUDIES[name].missing():  # a declared asset (e.g. pretrained weights) is absent
        pytest.skip(why)
    try:
        report, out = run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)
    except AssetError as e:  # an offline corpus that scripts/setup.sh could not install
        pytest.skip(str(e))
    text = (out / "report.md").read_text()
    assert len(report.verdicts) == len(STUDIES[name].claims)
    for v in report.verdicts:
        assert v.status in ("reproduced", "not reproduced", "inconclusive")
        assert any(ch.isdigit() for ch in v.evidence)  # a verdict carries its numbers
    for png, _ in report.figures:
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and png in text
    assert json.loads((out / "verdicts.json").read_text())
    # A second call reuses the finished runs.
    def n_runs() -> int:  # a study may train nothing (symbols-kernel)
        return len(list((out / "runs").iterdir())) if (out / "runs").exists() else 0

    before = n_runs()
    run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)
    assert n_runs() == before


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


@pytest.mark.parametrize("scale", ["cpu", "paper"])
@pytest.mark.parametrize("name", list(STUDIES))
def test_every_scale_builds_valid_configs(name, scale):
    """The scales the tests do not train still resolve to valid, distinct run configs."""
    if STUDIES[name].missing():
        pytest.skip(STUDIES[name].missing())
    study = STUDIES[name]()
    specs = study.runs(scale, study.default_seeds[scale])
    ids = {config_id(s.config) for s in specs}
    assert len(ids) == len(specs)  # no two arms or seeds collapse onto one run
    assert all(s.config.steps > 0 for s in specs)
