"""Which code judges a claim, found from the code itself rather than from an annotation, so
that the calibration suite (kit/calibration.py) has nothing slip past it: a rule written
without a return annotation, as a static method, a nested function or a lambda is found as
surely as an annotated module function.

A rule is any code object of the calibrated modules that builds a `Verdict` or calls a rule
(by name: a function, or a module attribute holding one, such as a lambda bound to a name),
closed transitively. Comprehensions belong to the function they are written in. Not rules:
module and class bodies, and a study's `analyse` and `judge_runs`, which hand each claim to its
rules (the rules are what is calibrated; the study's smoke test checks one verdict per claim).
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Iterator, Sequence

KIT = "reasonlab.studies.kit.verdicts"
NOT_RULES = ("analyse", "judge_runs")
"""Methods that dispatch claims to rules rather than judge one."""
ESTIMATORS = frozenset({"mean_of", "difference", "paired", "contrast", "ratio", "proportion",
                        "log_contrast", "share_difference", "order_decision", "fisher",
                        "paired_losses"})
"""Names whose call computes an interval or a test from noisy units (kit/stats.py and the
families' exact tests): a rule that uses one is calibrated by a case, never Exempt."""
_INLINE = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """The function and lambda code objects nested in `code` (class bodies opened)."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            if c.co_name not in _INLINE:
                yield c
            yield from _codes(c)


def names(code: types.CodeType) -> set[str]:
    """The global and attribute names `code` reads, its comprehensions' included."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name in _INLINE:
            out |= names(c)
    return out


def _is_body(code: types.CodeType) -> bool:
    """A module or class body (not a function)."""
    return code.co_name == "<module>" or "__qualname__" in code.co_names[:3]


def module_codes(module: str) -> list[types.CodeType]:
    """Every function, method and lambda code object of a module, compiled from its source."""
    mod = importlib.import_module(module)
    src = inspect.getsource(mod)
    top = compile(src, inspect.getsourcefile(mod) or module, "exec", dont_inherit=True)
    return [c for c in _codes(top) if not _is_body(c)]


def code_key(module: str, code: types.CodeType) -> str:
    """A rule's name: module.qualname (a lambda's with @line, several share a qualname)."""
    q = code.co_qualname
    return f"{module}.{q}" + (f"@{code.co_firstlineno}" if "<lambda>" in q else "")


def rules(modules: Sequence[str]) -> dict[str, types.CodeType]:
    """qualified name (module.qualname; a lambda's with @line) -> code object of every rule of
    `modules` (see the module docstring)."""
    every = list(dict.fromkeys([*modules, KIT]))  # the kit's rules are called by name anywhere
    codes = {code_key(m, c): c for m in every for c in module_codes(m)}
    aliases: dict[str, set[str]] = {}  # module attribute name -> the code keys it holds
    for m in every:
        for attr, obj in vars(importlib.import_module(m)).items():
            f = getattr(obj, "__func__", obj)
            if isinstance(f, types.FunctionType) and f.__module__ == m:
                aliases.setdefault(attr, set()).add(code_key(m, f.__code__))
    found = {k for k, c in codes.items() if "Verdict" in c.co_names}
    while True:
        called = {n for k in found for n in (codes[k].co_name, *(
            a for a, ks in aliases.items() if k in ks)) if n != "<lambda>"}
        more = {k for k, c in codes.items() if k not in found and names(c) & called}
        if not more:
            break
        found |= more
    own = tuple(f"{m}." for m in modules)
    return {k: codes[k] for k in sorted(found)
            if codes[k].co_name not in NOT_RULES and k.startswith(own)}
