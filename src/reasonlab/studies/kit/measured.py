"""Each family's measured.json: the verdicts, seeds and measured minutes of its studies per
scale, as `reasonlab readme` recorded them from a store (kit/readme.py). A low module: the
Study class reads its minutes here without importing the studies. Files are found by the
family's package (`reasonlab.studies.lego`, or a plugin's own package); a package without
the file (a plugin's, a test's) has measured nothing."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

MEASURED_FILE = "measured.json"


@cache
def _measured(package: str) -> dict[str, Any]:
    if not package:  # a module outside any package
        return {}
    try:
        f = resources.files(package).joinpath(MEASURED_FILE)
    except ModuleNotFoundError:  # a class defined where its package is not importable by name
        return {}
    return json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}


def measured(package: str) -> dict[str, Any]:
    """study -> scale -> record ({"minutes", "cpu_minutes", "runs", "runs_found", "date",
    "seeds", "verdicts": [verdict records]}) of the family package's measured.json."""
    return _measured(package)


def minutes(package: str, study: str, scale: str) -> float | None:
    return measured(package).get(study, {}).get(scale, {}).get("minutes")


def clear() -> None:
    """Forget what was read (after `reasonlab readme` rewrote the files)."""
    _measured.cache_clear()
