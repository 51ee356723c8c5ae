"""No import cycles inside the reasonlab package.

Every import statement counts: module-level ones and the deferred ones inside functions alike
(a deferred import only postpones the cycle to the first call; `runs` <-> `train.loop` was such
a cycle). Imports under `if TYPE_CHECKING:` never run and do not count. An edge goes to the
module an import names (`from reasonlab.model import config` -> reasonlab.model.config;
`from reasonlab.model import MODELS` -> reasonlab.model, the package's __init__), not to the
parent packages Python imports on the way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import reasonlab

ROOT = Path(reasonlab.__file__).parent

KNOWN: set[frozenset[str]] = set()
"""Cycles tolerated for now (each with the reason and who removes it); none today."""


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = _type_checking_only(tree)
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from .x import y
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for a in node.names:
                target = f"{base}.{a.name}"
                out.add(target if target in known else base)
    return {m for m in out if m in known and m != name}


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.add(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_cycles():
    """It can fail: a two-module, a three-module and a deferred cycle are found; a chain is not."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(graph) == {frozenset("ab"), frozenset("cde")}


def test_imports_are_read_from_source(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import a  # noqa\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n")  # deferred: counts
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import c\n"
        "from .. import a\n")
    (pkg / "c.py").write_text("from pkg.sub.b import x\n")
    known = modules(pkg)
    graph = {m: imports(m, p, known) for m, p in known.items()}
    assert graph["pkg"] == {"pkg.a"} and graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}  # the TYPE_CHECKING import of c does not count
    assert cycles(graph) == {frozenset({"pkg.a", "pkg.sub.b"})}


def test_no_import_cycles_in_reasonlab():
    known = modules(ROOT)
    graph = {m: imports(m, p, known) for m, p in known.items()}
    found = cycles(graph)
    new = [sorted(c) for c in found - KNOWN]
    assert not new, f"import cycles: {new}; move what both sides need into a lower module"
    gone = [sorted(c) for c in KNOWN - found]
    assert not gone, f"these known cycles are gone: delete them from KNOWN: {gone}"
