"""The wheels a checkout carries to a machine with no package index (scripts/gpu-check).

A GPU image brings Python and a CUDA torch, and often little else the lab needs (no pydantic,
say). Where an index is reachable, `fetch` downloads binary wheels of every runtime dependency
in pyproject.toml but torch, and of what those need in turn, for the target's Python (default
3.12 on manylinux x86-64) into a folder the checkout carries (.whl/, git-ignored), each at the
version installed HERE where this interpreter has it (a pip constraints file: the node runs the
versions the tests passed with). `--leave-out` drops the wheels of packages the image is known
to bring (numpy in a CUDA torch image: 16 MB of a set near 90 MB), to fit a carry limit. On the
offline machine `install` asks pip which of those requirements the running interpreter lacks
(a dry run against the wheels, no index) and installs just those into a folder for
PYTHONPATH: what the image has (its numpy, the one its torch was tested with) stays in use.

Standard library only, and never imported by the lab: it runs before anything is installed.

    python -P src/reasonlab/wheels.py fetch DIR [--python-version 3.12] [--leave-out numpy,...]
    python -P src/reasonlab/wheels.py install DIR TARGET   # prints name==version per install

(-P keeps the script's folder, src/reasonlab/, off sys.path: a module of the lab's named like
one of the standard library's would shadow it there.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64")
"""pip download takes a wheel tagged with any of these (manylinux2014 also admits 2010 and 1).
Glibc 2.28 at most: RHEL 8 and every Ubuntu a CUDA 12 image is built on have it."""
NOT_CARRIED = {"torch"}
"""The image's own: a CUDA build is gigabytes, and the one there matches its driver."""
NOT_PINNED = re.compile(r"torch|triton|nvidia-.*|pip|setuptools|wheel")
"""Installed here but never pinned for the node: its torch stack and the packaging tools."""


class WheelsError(Exception):
    """A one-line reason the wheels cannot be fetched or installed, and what to do."""


def requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """The package's runtime requirements but torch, as pyproject.toml states them."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return [d for d in deps if _name(d) not in NOT_CARRIED]


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def pins() -> list[str]:
    """name==version of every distribution this interpreter has but its torch stack and the
    packaging tools: the constraints a fetch resolves under."""
    from importlib.metadata import distributions

    found = {_name(d.metadata["Name"]): d.version for d in distributions()
             if d.metadata["Name"]}
    return [f"{n}=={v}" for n, v in sorted(found.items()) if not NOT_PINNED.fullmatch(n)]


def fetch_command(dest: Path, python_version: str = "3.12",
                  constraints: Path | None = None) -> list[str]:
    """`pip download` of binary wheels for CPython `python_version` on manylinux x86-64, the
    requirements and their dependencies (resolved for that Python, not this one), under the
    `constraints` file (pins()) where given."""
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    pinned = ["--constraint", str(constraints)] if constraints is not None else []
    return [sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
            "--only-binary=:all:", "--python-version", python_version, "--implementation", "cp",
            *platforms, *pinned, "--dest", str(dest), *requirements()]


def fetch(dest: Path, python_version: str = "3.12", leave_out: tuple[str, ...] = ()) -> None:
    """Download the wheels (pinned to this interpreter's versions), then remove those of the
    `leave_out` packages."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reasonlab-pins-") as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(f"{p}\n" for p in pins()))
        if subprocess.run(fetch_command(dest, python_version, constraints)).returncode:
            raise WheelsError(f"pip could not download the wheels for Python {python_version} "
                              "at this machine's versions (its error is above); run "
                              "--fetch-wheels where `pip download` reaches a package index")
    dropped = {_name(n) for n in leave_out}
    for wheel in dest.glob("*.whl"):
        if wheel_name(wheel) in dropped:
            wheel.unlink()


def wheel_name(wheel: Path) -> str:
    """The normalised distribution name of a wheel file (PEP 427: name-version-...)."""
    return _name(wheel.name.split("-", 1)[0])


def missing(wheels: Path, reqs: list[str] | None = None) -> list[dict[str, str]]:
    """What this interpreter lacks of `reqs` (default: requirements()), as pip would install
    it from `wheels` alone: [{"name", "version", "wheel"}], dependencies included; [] when
    nothing is missing. A dry run: it reads the wheels' metadata and what is installed, never
    an index."""
    reqs = requirements() if reqs is None else reqs
    if importlib.util.find_spec("pip") is None:
        raise WheelsError(f"{sys.executable} has no pip to read the wheels with; "
                          "`python -m ensurepip` installs it with no network")
    links = ["--find-links", str(wheels)] if any(wheels.glob("*.whl")) else []
    with tempfile.TemporaryDirectory(prefix="reasonlab-wheels-") as tmp:
        report = Path(tmp) / "report.json"
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index",
                            "--disable-pip-version-check", "--quiet", "--report", str(report),
                            *links, *reqs], capture_output=True, text=True)
        if p.returncode:
            why = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR:")][:1]
            py = f"{sys.version_info.major}.{sys.version_info.minor}"
            raise WheelsError(
                f"Python {py} lacks packages the wheels in {wheels} do not provide "
                f"({why[0][7:] if why else p.stderr.strip()[-200:]}); run "
                f"`scripts/gpu-check --fetch-wheels --python-version {py}` where a package "
                f"index is reachable and bring {wheels.name}/ along")
        planned = json.loads(report.read_text())["install"]
    return [{"name": item["metadata"]["name"], "version": item["metadata"]["version"],
             "wheel": _local_path(item["download_info"]["url"])} for item in planned]


def _local_path(url: str) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(url)
    if parsed.scheme != "file":  # --no-index: pip had nowhere else to look
        raise WheelsError(f"pip planned to download {url}; only local wheels are used here")
    return unquote(parsed.path)


def install(wheels: Path, target: Path, reqs: list[str] | None = None) -> list[str]:
    """Install what `missing` lists into `target` (for PYTHONPATH), no index, no bytecode (the
    interpreter writes what it uses); returns name==version for each."""
    todo = missing(wheels, reqs)
    if todo:
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                            "--no-compile", "--disable-pip-version-check", "--quiet",
                            "--target", str(target), *(t["wheel"] for t in todo)],
                           capture_output=True, text=True)
        if p.returncode:
            raise WheelsError(f"pip could not install the wheels of {wheels} into {target}: "
                              f"{p.stderr.strip().splitlines()[-1:]}")
    return [f"{t['name']}=={t['version']}" for t in todo]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download the wheels (needs a package index)")
    f.add_argument("dest", type=Path)
    f.add_argument("--python-version", default="3.12", help="the target's Python (X.Y)")
    f.add_argument("--leave-out", default="", help="comma-separated packages the image brings "
                   "(e.g. numpy): their wheels are not kept")
    i = sub.add_parser("install", help="install what this Python lacks, from the wheels only")
    i.add_argument("wheels", type=Path)
    i.add_argument("target", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.command == "fetch":
            if not re.fullmatch(r"3\.\d+", args.python_version):
                raise WheelsError(f"--python-version {args.python_version!r}: give X.Y, e.g. "
                                  "3.12")
            fetch(args.dest, args.python_version,
                  tuple(n for n in args.leave_out.split(",") if n.strip()))
        else:
            for line in install(args.wheels, args.target):
                print(line)
    except WheelsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
