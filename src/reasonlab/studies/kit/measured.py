"""Each family's measured.json: the verdicts, seeds and measured minutes of its studies per
scale, as `reasonlab readme` recorded them from a store (kit/readme.py). A low module: the
Study class reads its minutes here without importing the studies."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

MEASURED_FILE = "measured.json"


@cache
def _measured(family: str) -> dict[str, Any]:
    f = resources.files(f"reasonlab.studies.{family}").joinpath(MEASURED_FILE)
    return json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}


def measured(family: str) -> dict[str, Any]:
    """study -> scale -> record ({"minutes", "cpu_minutes", "runs", "runs_found", "date",
    "seeds", "verdicts": [verdict records]}) of the family's measured.json."""
    return _measured(family)


def minutes(family: str, study: str, scale: str) -> float | None:
    return measured(family).get(study, {}).get(scale, {}).get("minutes")


def clear() -> None:
    """Forget what was read (after `reasonlab readme` rewrote the files)."""
    _measured.cache_clear()
