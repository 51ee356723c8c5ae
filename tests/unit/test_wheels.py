"""reasonlab/wheels.py, the carried wheels of scripts/gpu-check: what --fetch-wheels asks pip
for, and the offline install of what the interpreter lacks (a wheel made here, no index)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from reasonlab import wheels

ROOT = Path(__file__).resolve().parents[2]


def test_every_runtime_dependency_but_torch_is_carried():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    carried = wheels.requirements()
    assert [d for d in deps if not d.startswith("torch")] == carried
    assert any(r.startswith("pydantic") for r in carried)


def test_fetch_asks_for_binary_wheels_for_the_nodes_python(tmp_path):
    cmd = wheels.fetch_command(tmp_path, "3.12")
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12"
    assert cmd[cmd.index("--dest") + 1] == str(tmp_path)
    platforms = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--platform"]
    assert "manylinux2014_x86_64" in platforms and all("x86_64" in p for p in platforms)
    assert cmd[-len(wheels.requirements()):] == wheels.requirements()
    assert "--constraint" not in cmd
    pinned = wheels.fetch_command(tmp_path, "3.12", tmp_path / "c.txt")
    assert pinned[pinned.index("--constraint") + 1] == str(tmp_path / "c.txt")


def test_the_fetched_versions_are_this_interpreter_s_but_its_torch_stack():
    from importlib.metadata import version

    pins = dict(p.split("==") for p in wheels.pins())
    assert pins["pydantic"] == version("pydantic") and pins["scipy"] == version("scipy")
    assert not [n for n in pins if n == "torch" or n.startswith("nvidia-") or n == "pip"]


def test_left_out_packages_lose_their_wheels(tmp_path, monkeypatch):
    """fetch with leave_out: what pip downloaded for those names is removed, the rest kept."""
    def download(cmd, **_):
        dest = Path(cmd[cmd.index("--dest") + 1])
        constraints = Path(cmd[cmd.index("--constraint") + 1]).read_text()
        assert "pydantic==" in constraints
        for name in ("numpy-2.4.6-cp312-cp312-manylinux_2_28_x86_64.whl",
                     "pydantic-2.14.4-py3-none-any.whl", "typing_extensions-4.15-py3-none-any.whl"):
            (dest / name).write_bytes(b"")
        return subprocess.CompletedProcess(cmd, 0)
    monkeypatch.setattr(wheels.subprocess, "run", download)
    wheels.fetch(tmp_path, "3.12", ("NumPy", "typing-extensions"))
    assert sorted(p.name for p in tmp_path.glob("*.whl")) == ["pydantic-2.14.4-py3-none-any.whl"]


def probe_wheel(folder: Path) -> Path:
    """A pure-Python wheel of a package no environment has: gpucheck-probe 1.0."""
    path = folder / "gpucheck_probe-1.0-py3-none-any.whl"
    info = "gpucheck_probe-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr("gpucheck_probe.py", "ANSWER = 42\n")
        whl.writestr(f"{info}/METADATA",
                     "Metadata-Version: 2.1\nName: gpucheck-probe\nVersion: 1.0\n")
        whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                     "Root-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{info}/RECORD", f"gpucheck_probe.py,,\n{info}/METADATA,,\n"
                     f"{info}/WHEEL,,\n{info}/RECORD,,\n")
    return path


@pytest.mark.slow
def test_what_is_missing_comes_from_the_wheels_and_what_is_installed_stays(tmp_path):
    """pip decides, with no index: the probe (absent here) from the folder; pydantic (installed
    here) is not reinstalled."""
    folder, target = tmp_path / "whl", tmp_path / "site"
    folder.mkdir()
    probe_wheel(folder)
    assert wheels.install(folder, target, ["gpucheck-probe", "pydantic>=2"]) == [
        "gpucheck-probe==1.0"]
    assert (target / "gpucheck_probe.py").exists() and not (target / "pydantic").exists()
    out = subprocess.run([sys.executable, "-c", "import gpucheck_probe as p; print(p.ANSWER)"],
                         capture_output=True, text=True, env={"PYTHONPATH": str(target)})
    assert out.stdout.strip() == "42"
    assert wheels.install(folder, target, ["pydantic>=2"]) == []  # nothing missing


@pytest.mark.slow
def test_a_requirement_the_wheels_lack_is_one_error_line_that_says_what_to_do(tmp_path):
    p = subprocess.run([sys.executable, "-c", "import sys; from reasonlab import wheels; "
                        "sys.argv[1:] = ['install', sys.argv[1], sys.argv[2]]; "
                        "wheels.requirements = lambda: ['gpucheck-probe-absent>=1']; "
                        "sys.exit(wheels.main())", str(tmp_path), str(tmp_path / "site")],
                       capture_output=True, text=True)
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: Python 3."), err
    assert "gpucheck-probe-absent" in err[0] and "--fetch-wheels --python-version" in err[0]


def test_a_malformed_python_version_is_refused(capsys):
    assert wheels.main(["fetch", "somewhere", "--python-version", "twelve"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --python-version 'twelve'")
