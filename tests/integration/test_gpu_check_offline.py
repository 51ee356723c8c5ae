"""scripts/gpu-check as on an offline GPU node, on the CPU (--device cpu --quick).

The node: a Python with torch preinstalled and nothing else the lab needs, no package index, no
network, a bare checkout carrying .whl/, and a 10-minute slot. The sandbox here: a fresh venv of
this machine's Python that sees torch (with what torch itself requires, and pip) through a .pth
file and nothing else of this environment; a copy of the checkout whose .whl/ holds wheels of
every other runtime dependency, repacked from this environment's installed distributions (no
index, no network needed to build them); the whole command run in a network namespace of its
own (`unshare -n`) where one can be made, with a window (--window) and a time limit. It must
install from the wheels alone and finish within its window, every section within its own
deadline.

The window is WINDOW seconds (REASONLAB_GPU_CHECK_TEST_WINDOW overrides it: on a machine whose
cores are busy with other work, every section is cut short at its deadline, which the test
allows, but the wheels' install may not fit 300 s).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
WINDOW = float(os.environ.get("REASONLAB_GPU_CHECK_TEST_WINDOW", 300))
GRACE_S = 10.0
"""A section may overrun its deadline by this much: the SIGALRM acts when the op in progress
returns to Python, then the section unwinds and its result is written."""

pytestmark = pytest.mark.slow


def gpu_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- the sandbox


def closure(requirements: list[str]) -> set[str]:
    """The installed distributions `requirements` need, dependencies of dependencies included
    (markers evaluated for this interpreter, no extras): canonical names."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        todo += [Requirement(r) for r in md.distribution(name).requires or []]
    return seen


def repack(name: str, dest: Path) -> Path:
    """A wheel of the installed distribution `name`, from the files its RECORD lists: how
    pip would have unpacked it, read back (stored, not compressed: this is a test's copy).
    Files installed outside site-packages (console scripts) are left out: pip writes those
    anew from entry_points.txt."""
    dist = md.distribution(name)
    supported = {str(t) for t in sys_tags()}
    tags = [line.split(":", 1)[1].strip() for line in dist.read_text("WHEEL").splitlines()
            if line.startswith("Tag:")]
    tag = next(t for t in tags if t in supported)  # it is installed here: one of them fits
    info = next(f.parts[0] for f in dist.files if f.parts[0].endswith(".dist-info"))
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    path = dest / f"{stem}-{dist.version}-{tag}.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as whl:
        for f in dist.files:
            if (f.parts[0] == ".." or "__pycache__" in f.parts or f.parts[0] == info and
                    f.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")):
                continue
            data = Path(dist.locate_file(f)).read_bytes()
            whl.writestr(f.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{f.as_posix()},sha256={digest.decode()},{len(data)}")
        record.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def image(folder: Path) -> Path:
    """torch as a GPU image has it: torch, what torch requires, and pip, each top-level entry
    of theirs linked from this environment's site-packages; nothing else."""
    folder.mkdir()
    for name in closure(["torch", "pip"]):
        dist = md.distribution(name)
        for top in {f.parts[0] for f in dist.files} - {"..", "__pycache__"}:
            source = Path(dist.locate_file(top))
            if source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return folder


def sandbox(tmp: Path) -> tuple[Path, Path]:
    """(the sandbox's python, the checkout copy with its .whl/)."""
    from reasonlab.wheels import requirements

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True)
    Path(site.stdout.strip(), "gpu-image.pth").write_text(f"{image(tmp / 'image')}\n")
    checkout = tmp / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", checkout / "src", ignore=ignore)
    shutil.copytree(ROOT / "scripts", checkout / "scripts", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", checkout)
    (checkout / ".whl").mkdir()
    torch_own = closure(["torch", "pip"])
    for name in sorted(closure(requirements()) - torch_own):
        repack(name, checkout / ".whl")
    return py, checkout


def offline() -> list[str]:
    """A prefix that runs a command with no network: a network namespace of its own (as root,
    or as a user through a user namespace), else nothing (the environment's proxies then point
    at a closed port, and pip gets --no-index from the wrapper)."""
    if shutil.which("unshare"):
        for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
            if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
                return prefix
    return []


def sandbox_env(tmp: Path, py: Path) -> dict[str, str]:
    dead = "http://127.0.0.1:9"  # the discard port: nothing answers
    for d in ("home", "tmp"):
        (tmp / d).mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "HOME": str(tmp / "home"),
            "TMPDIR": str(tmp / "tmp"), "PYTHON": str(py), "PYTHONNOUSERSITE": "1",
            "http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead,
            "PIP_RETRIES": "0", "PIP_TIMEOUT": "3", "PIP_CONFIG_FILE": os.devnull}


# ----------------------------------------------------------------------------- the test


def test_the_check_runs_offline_from_the_carried_wheels_within_its_window(tmp_path):
    py, checkout = sandbox(tmp_path)
    env = sandbox_env(tmp_path, py)
    prefix = offline()
    probe = ("import importlib.util as u, torch; "
             "print(sorted(m for m in ('pydantic', 'numpy', 'safetensors', 'tqdm') "
             "if u.find_spec(m)))")
    seen = subprocess.run([*prefix, str(py), "-c", probe], capture_output=True, text=True,
                          env=env, timeout=600)
    assert seen.returncode == 0 and seen.stdout.strip() == "[]", seen  # torch, and nothing else
    if prefix:
        net = subprocess.run([*prefix, str(py), "-c", "import socket; "
                              "socket.create_connection(('pypi.org', 443), timeout=5)"],
                             capture_output=True, env=env, timeout=120)
        assert net.returncode != 0  # no network in there

    out = tmp_path / "out"
    t = time.monotonic()
    p = subprocess.run([*prefix, str(checkout / "scripts" / "gpu-check"), "--device", "cpu",
                        "--quick", "--out", str(out), "--window", str(WINDOW)],
                       capture_output=True, text=True, env=env, timeout=WINDOW + 120)
    wall = time.monotonic() - t
    assert p.returncode == 0, p.stderr[-3000:]
    assert wall <= WINDOW + GRACE_S, wall

    results = json.loads((out / "gpu-check.json").read_text())
    sections = results["sections"]
    assert list(sections) == list(gpu_check().SECTIONS)  # all of them, in order of value
    for name, s in sections.items():
        assert s["status"] == "ok", (name, s)
        assert s["wall_s"] <= s["deadline_s"] + GRACE_S, (name, s)
        assert "cut_short" in s and isinstance(s["result"], dict), (name, s)
    assert results["before_checks_s"] + results["wall_s"] <= WINDOW

    installed = {w.split("==")[0].lower() for w in sections["env"]["result"]["from_wheels"]}
    assert {"pydantic", "numpy", "safetensors", "tqdm", "matplotlib"} <= installed, installed
    assert "torch" not in installed

    # what a section measured when it had the time (every one does on two free cores)
    r = {name: s["result"] for name, s in sections.items()}
    if not sections["fpt launch"]["cut_short"]:
        assert r["fpt launch"]["eager"]["ms_per_step"] > 0
        assert r["fpt launch"]["compiled"]["aot_eager"]["ms_per_step"] > 0
        assert r["fpt launch"]["runs_per_gpu"]["2"]["steps_per_s"] > 0
    if not sections["determinism"]["cut_short"]:
        strict = r["determinism"]["strict"]
        assert strict["rerun"]["bitwise"] and strict["resume"]["bitwise"], strict
        assert strict["killed"]["by_sigkill"]
    if not sections["paper trial"]["cut_short"]:
        assert r["paper trial"]["returncode"] == 0, r["paper trial"]
        assert len(r["paper trial"]["runs"]) == 2  # one seed: BERT and its comparison arm
        assert all(run["finished"] for run in r["paper trial"]["runs"])
    if not sections["smoke"]["cut_short"]:
        assert r["smoke"]["lego-extrapolation"]["returncode"] == 0
    md_text = (out / "gpu-check.md").read_text()
    assert "## fpt launch: ok" in md_text and "## paper trial: ok" in md_text
    print(f"\ngpu-check offline: {wall:.0f} s of a {WINDOW:.0f}-s window "
          f"({results['before_checks_s']} s install and start-up; network "
          f"{'namespace' if prefix else 'proxies only'}); cut short: "
          f"{[n for n, s in sections.items() if s['cut_short']]}")
