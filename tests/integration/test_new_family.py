"""`reasonlab new family NAME [--out DIR]`: the skeleton of a study family. Written as a plugin
it passes its own tests in a fresh process (its rule, its calibration, its study at smoke
scale), and its calibration cases pass the rules tests/unit/studies/test_calibration.py holds
every family to; written into a checkout it is the same files; bad names and existing folders
are one error line with nothing written."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonlab import plugins
from reasonlab.cli import main
from reasonlab.studies.kit import newfamily, readme
from reasonlab.studies.kit.calibration import (MAX_FALSE, Exempt, families_cases, noise,
                                               noise_entries, rule_functions, sim_problems)
from reasonlab.studies.kit.calibration_engine import Sim, run_sim

NAME = "demo_fam"


@pytest.mark.slow  # a fresh interpreter importing torch and every family: ~10-16 s on 2 cores
def test_a_new_plugin_family_passes_its_own_tests_in_a_fresh_process(tmp_path, capsys):
    assert main(["new", "family", NAME, "--out", str(tmp_path)]) == 0
    written = capsys.readouterr().out
    assert f"wrote {tmp_path / NAME / 'claims.toml'}" in written
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get(
        "PYTHONPATH", "")]), plugins.ENV: ""}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(tmp_path / "tests")], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0 and "3 passed" in p.stdout, p.stdout + p.stderr


def test_its_calibration_cases_pass_the_calibration_test_s_rules(tmp_path, isolated_plugins,
                                                                 monkeypatch):
    monkeypatch.setenv(plugins.ENV, "")
    newfamily.write_family(NAME, None, tmp_path)
    plugins.include([tmp_path])
    [(family, cases)] = list(families_cases(NAME))
    assert family == NAME and cases and not any(isinstance(c, Exempt) for c in cases)
    assert set(rule_functions(NAME)) == {c.name for c in cases} == {
        f"{NAME}.verdicts.deeper_is_better"}
    entries = noise_entries(NAME)
    for case in cases:
        assert isinstance(case, Sim) and entries[case.noise]["sd"] > 0
        assert entries[case.noise]["source"] and set(case.units().values()) == {3}
        out = run_sim(case, noise(NAME, case.noise), null_draws=300, power_draws=100)
        assert not sim_problems(out), sim_problems(out)
        assert max(out.false_rate.values()) <= MAX_FALSE and out.power[3] > 0.8
    # a plugin family is the plugin's: `reasonlab readme` rewrites reasonlab's own READMEs only
    assert "Author et al. YEAR" not in readme.paper_table()
    assert all(NAME not in str(path) for path in readme.blocks())


def test_in_a_checkout_it_is_the_same_family_with_the_readme_s_generated_block(tmp_path):
    plugin, checkout = tmp_path / "plugin", tmp_path / "checkout"
    (checkout / "src" / "reasonlab" / "studies").mkdir(parents=True)
    (checkout / "tests" / "unit" / "studies").mkdir(parents=True)
    newfamily.write_family(NAME, None, plugin)
    paths = newfamily.write_family(NAME, checkout, None)
    family = checkout / "src" / "reasonlab" / "studies" / NAME
    assert sorted(p.name for p in family.iterdir()) == sorted(newfamily.FILES)
    for f in newfamily.FILES:
        if f != "README.md":  # relative imports: the same modules in both places
            assert (family / f).read_text() == (plugin / NAME / f).read_text(), f
    test = checkout / "tests" / "unit" / "studies" / NAME / f"test_{NAME}.py"
    assert test in paths and (test.parent / "__init__.py").is_file()
    assert f"from reasonlab.studies.{NAME} import verdicts" in test.read_text()
    assert "plugins.include" not in test.read_text()
    text = (family / "README.md").read_text()
    for heading in ("## Studies and measured verdicts", "## How the verdicts decide",
                    "## Recipe choices and measured notes"):
        assert f"\n{heading}\n" in text
    # `reasonlab readme` fills its verdict block as it fills every family's
    filled = readme.replace_blocks(text, {"verdicts (cpu)": "| table |"}, family / "README.md")
    assert "| table |" in filled
    assert readme.BEGIN.format(what="verdicts (cpu)") not in (plugin / NAME / "README.md"
                                                              ).read_text()


@pytest.mark.parametrize("args, needle", [
    (["lego"], "a family 'lego' exists already"),
    (["9lives"], "use lowercase letters"),
    (["class"], "use lowercase letters"),
    (["json", "--out", "{tmp}"], "a module 'json' is importable already"),
    (["fresh", "--out", "{tmp}/taken"], "exists; nothing was written"),
])
def test_bad_names_and_existing_folders_are_one_line_and_write_nothing(args, needle, tmp_path,
                                                                       capsys):
    (tmp_path / "taken" / "fresh").mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    assert main(["new", "family", *[a.format(tmp=tmp_path) for a in args]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err
    assert sorted(tmp_path.rglob("*")) == before
