"""The import rules between reasonlab's layers (docs/design.md §1), read from the source as
tests/unit/test_import_cycles.py reads it: every import statement counts, deferred ones too,
`if TYPE_CHECKING:` ones not.

1. The library (everything outside `reasonlab.studies` but the commands on top of it: `cli`,
   `__main__`, `site`) never imports the studies; `plan` and `sweep` are library.
2. The study kit (`studies/kit/`) never imports a family.
3. A family imports a sibling family only through the modules SHARED states.
4. A study module (one that registers a study) is a leaf: what two studies share lives in a
   support module, and only its family's `calibration` imports it, for the seeds and thresholds
   it drives each rule at. (`studies/__init__.py` finds study modules by discovery, never by an
   import statement.)
5. `analysis/` never imports `train/` (it reads the models and batches it is given).

KNOWN lists what breaks a rule today, each with why; a rule broken anywhere else fails, and an
entry of KNOWN that no longer breaks one fails too, so the list only shrinks.
"""

from __future__ import annotations

from test_import_cycles import ROOT, imports, modules

from reasonlab.studies import STUDIES as REGISTRY

STUDIES = "reasonlab.studies"
KIT = f"{STUDIES}.kit"
TOP = ("reasonlab.cli", "reasonlab.__main__", "reasonlab.site")
"""The commands: they may import anything."""

SHARED: dict[str, tuple[str, ...]] = {
    "artificial": (f"{STUDIES}.lego.common", f"{STUDIES}.lego.analysis",
                   f"{STUDIES}.lego.verdicts"),
}
"""family -> the sibling modules it may import. artificial-pretraining-lego fine-tunes on LEGO,
the follow-up paper's downstream task (docs/papers.md §4): it takes LEGO's task and ALBERT arm
(lego.common), reads the runs as LEGO's studies do (lego.analysis: heads, accuracy per chain
position) and judges the first-pass step and head margin with LEGO's rules (lego.verdicts)."""

KNOWN: dict[tuple[str, str], str] = {}
"""(importer, imported) -> why it is tolerated for now."""


def family(module: str) -> str | None:
    """The family a module of reasonlab.studies belongs to (None for the kit and the package)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["reasonlab", "studies"] or parts[2] == "kit":
        return None
    return parts[2]


STUDY_MODULES = frozenset(REGISTRY[name].__module__ for name in REGISTRY
                          if REGISTRY[name].__module__.startswith(f"{STUDIES}."))
"""reasonlab's modules that register a study."""


def broken(importer: str, imported: str, study_modules: frozenset[str] = STUDY_MODULES
           ) -> str | None:
    """The rule (1-5) an import breaks, or None."""
    if imported.startswith(f"{STUDIES}.") or imported == STUDIES:
        if not importer.startswith(f"{STUDIES}.") and importer != STUDIES \
                and not importer.startswith(TOP):
            return "1: the library imports the studies"
    if importer.startswith(f"{KIT}.") and family(imported) is not None:
        return "2: the kit imports a family"
    a, b = family(importer), family(imported)
    if a is not None and b is not None and a != b and imported not in SHARED.get(a, ()):
        return "3: a family imports a sibling family outside SHARED"
    if imported in study_modules and importer != f"{STUDIES}.{family(imported)}.calibration":
        return "4: a module imports a study module"
    if importer.startswith("reasonlab.analysis") and imported.startswith("reasonlab.train"):
        return "5: analysis/ imports train/"
    return None


def violations(graph: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    return {(a, b): rule for a, targets in graph.items() for b in sorted(targets)
            if (rule := broken(a, b)) is not None}


def test_the_rules_catch_what_they_forbid():
    """Each rule fires on an import that breaks it, and not on its neighbours that keep it."""
    lego, art = f"{STUDIES}.lego", f"{STUDIES}.artificial"
    assert broken("reasonlab.plan", f"{KIT}.sizes").startswith("1")
    assert broken("reasonlab.sweep", f"{KIT}.base").startswith("1")
    assert broken("reasonlab.cli", f"{KIT}.base") is None
    assert broken(f"{KIT}.ledger", f"{lego}.common").startswith("2")
    assert broken(f"{KIT}.base", f"{KIT}.core") is None
    assert broken(f"{STUDIES}.symbols.common", f"{lego}.common").startswith("3")
    assert broken(f"{art}.common", f"{lego}.common") is None  # SHARED
    assert broken(f"{art}.common", f"{lego}._support.masked_lm").startswith("3")
    assert broken(f"{lego}.shortcut", f"{lego}.extrapolation").startswith("4")
    assert broken(f"{lego}.common", f"{lego}.staircase").startswith("4")
    assert broken(f"{art}.calibration", f"{lego}.staircase").startswith("3")
    assert broken(f"{lego}.calibration", f"{lego}.staircase") is None
    assert broken(f"{lego}.shortcut", f"{lego}._support.programs") is None
    assert broken(f"{lego}.shortcut", f"{lego}.analysis") is None
    assert {f"{lego}.extrapolation", f"{STUDIES}.fpt.init"} <= STUDY_MODULES
    assert not {f"{lego}.common", f"{STUDIES}.fpt.slides"} & STUDY_MODULES
    assert broken("reasonlab.analysis.probes", "reasonlab.train.loop").startswith("5")


def test_reasonlab_keeps_its_layers():
    known = modules(ROOT)
    graph = {m: imports(m, p, known) for m, p in known.items()}
    found = violations(graph)
    new = {k: v for k, v in found.items() if k not in KNOWN}
    assert not new, "imports that break the layering (docs/design.md §1): " + "; ".join(
        f"{a} -> {b} (rule {rule})" for (a, b), rule in sorted(new.items()))
    gone = sorted(set(KNOWN) - set(found))
    assert not gone, f"these KNOWN imports no longer break a rule: delete them from KNOWN: {gone}"
