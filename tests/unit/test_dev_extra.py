"""The suite runs on the dev extra (README: `bash scripts/setup.sh --dev && .venv/bin/python -m
pytest`). A test that needs an optional package skips without it (`pytest.importorskip`), so
here: every package a test skips for is one the dev extra (or the base install) provides, and
every package the dev extra lists is installed. A machine set up with the dev extra that still
lacks one fails here, by name, instead of silently skipping the tests that need it."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    """'nnsight==0.8.1' -> 'nnsight'; names compared as PEP 503 normalises them."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def dev_extra() -> set[str]:
    return {_name(r) for r in _project()["optional-dependencies"]["dev"]}


def skipped_modules() -> set[str]:
    """Top-level modules of every `pytest.importorskip("...")` in the tests."""
    out = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "importorskip" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                out.add(str(node.args[0].value).split(".")[0])
    return out


def test_every_package_the_dev_extra_lists_is_installed():
    missing = []
    for name in sorted(dev_extra()):
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    assert not missing, (f"the dev extra's {missing} are not installed, so the tests that "
                         "need them skip: run `bash scripts/setup.sh --dev`")


def test_every_package_a_test_skips_for_comes_with_the_dev_extra():
    provided = dev_extra() | {_name(r) for r in _project()["dependencies"]}
    owners = importlib.metadata.packages_distributions()
    outside = {m: owners.get(m) for m in skipped_modules()
               if not {_name(d) for d in owners.get(m, [])} & provided}
    assert not outside, (f"tests skip without {outside}, which neither the dev extra nor the "
                         "base install provides: add them to the dev extra in pyproject.toml")
