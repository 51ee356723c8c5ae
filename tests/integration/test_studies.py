"""Every study runs end to end at smoke scale and writes a report with figures and verdicts."""

import json

import pytest

from reasonlab.errors import AssetError
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
