"""Study families: the packages that each hold one paper's claims.toml, its studies and their
support modules. reasonlab's own are the subpackages of studies/ (`lego`, `symbols`, ...); a
plugin's (reasonlab.plugins) is the package its registered studies are defined in. Either is
named by its key, the package's last name (`reasonlab claims KEY`), and two families may not
share one.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from reasonlab.errors import ConfigError, PluginError
from reasonlab.registry import ours

BUILTIN = "reasonlab.studies"
SUPPORT_MODULES = ("common", "analysis", "verdicts", "calibration", "paper")
"""A family folder's fixed support modules (docs/adding-a-family.md): recipes, analyses, verdict
rules, calibration cases, the paper's numbers. Every other module of the folder is a study, named
after it (`lego-mixed-lengths` in lego/mixed_lengths.py); other support code lives in the
SUPPORT_PACKAGE subpackage, so that the folder's listing shows its studies."""
SUPPORT_PACKAGE = "_support"


def builtin() -> list[str]:
    """reasonlab's own families, by key (studies/<key>/)."""
    from reasonlab.studies import families

    return families()


def package_of(study: type) -> str:
    """The package a study class is defined in: its family's, if it has one."""
    return study.__module__.rpartition(".")[0]


def families() -> dict[str, str]:
    """key -> package of every family: reasonlab's own, then each plugin's (the package of
    every registered study defined outside reasonlab), in study order."""
    from reasonlab.studies import STUDIES

    out = {key: f"{BUILTIN}.{key}" for key in builtin()}
    for name, cls in STUDIES.items():
        package = package_of(cls)
        if ours(package) or not package:
            continue
        key = package.rpartition(".")[2]
        if out.setdefault(key, package) != package:
            raise PluginError(f"study {name}'s family package {package} has the key {key!r} of "
                              f"the family {out[key]}; rename the package")
    return out


def package(family: str) -> str:
    """The package of the family keyed `family`."""
    known = families()
    if family not in known:
        raise ConfigError(f"no family {family!r}; families: {', '.join(known)}")
    return known[family]


def family_of(study: type) -> str:
    """The key of the family a study class is defined in."""
    for key, pkg in families().items():
        if study.__module__.startswith(f"{pkg}."):
            return key
    raise ConfigError(f"study class {study.__qualname__} ({study.__module__}) is not in a "
                      "family package")


def readme_path(family: str) -> str:
    """Where the family's README is: repository-relative for reasonlab's own, the file's
    path for a plugin's."""
    pkg = package(family)
    if pkg == f"{BUILTIN}.{family}":
        return f"src/reasonlab/studies/{family}/README.md"
    return str(Path(importlib.import_module(pkg).__file__ or "").parent / "README.md")
