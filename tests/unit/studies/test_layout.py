"""A family folder shows its studies (docs/adding-a-family.md §5): every `[[studies.X]]` of its
claims.toml is registered by a module of its own named after it (`lego-mixed-lengths` in
lego/mixed_lengths.py), and every module of the folder is such a study or one of the fixed
support modules (kit/families.py SUPPORT_MODULES); other support code lives under `_support/`.
"""

from __future__ import annotations

from importlib.resources import files

import pytest

from reasonlab.studies import STUDIES, families
from reasonlab.studies.kit.claims import family_file
from reasonlab.studies.kit.families import SUPPORT_MODULES, SUPPORT_PACKAGE

PACKAGE = "reasonlab.studies"



def module_of(family: str, study: str) -> str:
    """The module a family's study lives in: its name without the family, `-` as `_`."""
    return study.removeprefix(f"{family}-").replace("-", "_")


def problems(family: str, claimed: set[str], registered: dict[str, str],
             entries: list[tuple[str, bool]]) -> set[str]:
    """Each way a family's folder and claims file disagree, as one line. `claimed`: the study
    names of its claims.toml; `registered`: study name -> the module that registers it (the
    family's only); `entries`: (name, is a folder) of what the family's folder holds."""
    package = f"{PACKAGE}.{family}"
    out = set()
    for name in sorted(claimed | set(registered)):
        want = module_of(family, name)
        if name not in registered:
            out.add(f"[studies.{name}] in {family}/claims.toml has no registered study")
        elif name not in claimed:
            out.add(f"{name} is registered but has no [studies.{name}] in {family}/claims.toml")
        elif registered[name] != f"{package}.{want}":
            got = registered[name].removeprefix(f"{PACKAGE}.").replace(".", "/")
            out.add(f"{got}.py registers {name}: want {family}/{want}.py")
    named = {module_of(family, name): name for name in claimed}
    for entry, folder in entries:
        stem = entry.removesuffix(".py")
        if folder:
            if not entry.startswith(("_", ".")):  # _support/, __pycache__
                out.add(f"{family}/{entry}/ is a folder other than {SUPPORT_PACKAGE}/")
        elif not entry.endswith(".py") or stem == "__init__" or stem in SUPPORT_MODULES:
            continue
        elif stem not in named:
            out.add(f"{family}/{entry} is neither a study nor a support module")
        elif registered.get(named[stem]) != f"{package}.{stem}":
            out.add(f"{family}/{entry} is named after {named[stem]} but does not register it")
    return out


def family_problems(family: str) -> set[str]:
    """`problems` of one of reasonlab's families, as its files and registry are."""
    package = f"{PACKAGE}.{family}"
    claimed = set(family_file(package).get("studies", {}))
    registered = {name: STUDIES[name].__module__ for name in STUDIES
                  if STUDIES[name].__module__.startswith(f"{package}.")}
    entries = [(p.name, p.is_dir()) for p in files(package).iterdir()]
    return problems(family, claimed, registered, entries)


def test_the_check_names_each_kind_of_problem():
    """It can fail: each way a folder can hide its studies is one line."""
    lego = f"{PACKAGE}.lego"
    claimed = {"lego-a", "lego-b-c", "lego-d", "lego-e"}
    registered = {"lego-a": f"{lego}.a", "lego-b-c": f"{lego}.a", "lego-d": f"{lego}.e",
                  "lego-f": f"{lego}.f"}
    entries = [("__init__.py", False), ("common.py", False), ("_support", True),
               ("a.py", False), ("d.py", False), ("e.py", False), ("f.py", False),
               ("slides.py", False), ("figures", True), ("claims.toml", False)]
    assert problems("lego", claimed, registered, entries) == {
        "lego/a.py registers lego-b-c: want lego/b_c.py",  # two studies in one file
        "lego/e.py registers lego-d: want lego/d.py",  # a study in a file named otherwise
        "[studies.lego-e] in lego/claims.toml has no registered study",
        "lego-f is registered but has no [studies.lego-f] in lego/claims.toml",
        "lego/d.py is named after lego-d but does not register it",
        "lego/e.py is named after lego-e but does not register it",
        "lego/f.py is neither a study nor a support module",
        "lego/slides.py is neither a study nor a support module",  # support by another name
        "lego/figures/ is a folder other than _support/",
    }
    assert family_problems("lego") == set()


@pytest.mark.parametrize("family", families())
def test_every_study_has_its_file_and_every_file_is_a_study_or_support(family):
    assert family_problems(family) == set()

