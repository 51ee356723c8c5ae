"""Studies, one subpackage per paper family (lego/, symbols/, anchors/, fpt/, artificial/), plus
the kit they are written with (kit/). A study registers itself in STUDIES when its module is
imported; the families are found by discovery, so a new family is a new folder, not an edit here.
Families from outside the package (reasonlab.plugins) are imported after reasonlab's own.
"""

import importlib
import pkgutil

from reasonlab import plugins
from reasonlab.studies.kit.base import STUDIES, run_study

KIT = "kit"


def families() -> list[str]:
    """reasonlab's own family subpackages, by name (every subpackage but the kit); all
    families, plugins' included: kit/families.py."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and m.name != KIT)


def _import_families() -> None:
    """Import every module of every family, so each study registers itself."""
    for family in families():
        package = importlib.import_module(f"{__name__}.{family}")
        for m in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
            importlib.import_module(m.name)


_import_families()
plugins.load()

__all__ = ["STUDIES", "families", "run_study"]
