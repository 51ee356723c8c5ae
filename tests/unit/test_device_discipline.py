"""Every tensor a run makes lives on the run's device: a check that needs no GPU.

On CUDA a tensor factory that names no device (`torch.zeros(n)`) makes a CPU tensor, and the
first op mixing it with the run's tensors fails ("Expected all tensors to be on the same
device"), often minutes into a run (the old `accuracy_by` did so at the first evaluation).
On the CPU the same code runs fine, so no ordinary test sees it. This test reads the source of
train/, model/ and analysis/ and requires every factory call to say where its tensor lives:

- a `device=` argument (e.g. `device=x.device`, derived from an input), or
- an immediate `.to(...)` on the result, or
- inside an `__init__` (a module's parameters and buffers move with `model.to(device)`), or
- a `# host:` comment on the call's line saying why the CPU is meant (e.g. a tensor drawn from
  a seeded CPU generator and moved by the caller).

`*_like` factories, `new_*` methods and ops on inputs derive their device and are never
flagged. The runtime side (a smoke training and the analyses under a guard that treats the
run's tensors as if they lived on another device) is in test_device_guard.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "reasonlab"
CHECKED = ("train", "model", "analysis")
FACTORIES = {"zeros", "ones", "empty", "full", "arange", "eye", "tensor", "as_tensor", "randn",
             "rand", "randint", "randperm", "linspace", "logspace", "from_numpy"}
"""torch functions that make a tensor from sizes or host data, on the default (CPU) device
unless told otherwise."""


def _factory_calls(tree: ast.AST) -> list[tuple[ast.Call, list[ast.AST]]]:
    """(call, its ancestors) for every `torch.<factory>(...)` call."""
    out: list[tuple[ast.Call, list[ast.AST]]] = []

    def walk(node: ast.AST, parents: list[ast.AST]) -> None:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
                and node.func.attr in FACTORIES):
            out.append((node, parents))
        for child in ast.iter_child_nodes(node):
            walk(child, [*parents, node])

    walk(tree, [])
    return out


def _placed(call: ast.Call, parents: list[ast.AST], lines: list[str]) -> bool:
    if any(k.arg == "device" for k in call.keywords):
        return True
    parent = parents[-1] if parents else None
    if (isinstance(parent, ast.Attribute) and parent.attr == "to"
            and len(parents) > 1 and isinstance(parents[-2], ast.Call)):
        return True  # torch.tensor(...).to(device)
    if any(isinstance(p, ast.FunctionDef) and p.name == "__init__" for p in parents):
        return True
    return any("# host:" in lines[i - 1]
               for i in range(call.lineno, (call.end_lineno or call.lineno) + 1))


def unplaced(root: Path = SRC) -> list[str]:
    """`file:line: torch.f(...)` for every factory call that does not say its device."""
    bad = []
    for sub in CHECKED:
        for path in sorted((root / sub).rglob("*.py")):
            text = path.read_text()
            lines = text.splitlines()
            for call, parents in _factory_calls(ast.parse(text)):
                if not _placed(call, parents, lines):
                    bad.append(f"{path.relative_to(root)}:{call.lineno}: "
                               f"{ast.unparse(call)[:90]}")
    return bad


def test_every_tensor_factory_names_its_device() -> None:
    bad = unplaced()
    assert not bad, ("tensor factories that name no device (on CUDA they make CPU tensors "
                     "and the run fails when they meet the run's tensors); pass device=, "
                     ".to(...) the result, or mark a deliberate CPU tensor `# host: why`:\n"
                     + "\n".join(bad))


@pytest.mark.parametrize("code, ok", [
    ("def f(k):\n    return torch.zeros(3, dtype=torch.float64).index_add_(0, k, k)\n", False),
    ("def f(k):\n    return torch.zeros(3, device=k.device)\n", True),
    ("def f(k):\n    return torch.tensor([1, 2]).to(k.device)\n", True),
    ("def f(k):\n    return torch.arange(3)  # host: indices for a CPU list\n", True),
    ("class M:\n    def __init__(self):\n        self.w = torch.empty(3)\n", True),
    ("def f(k):\n    return torch.ones_like(k)\n", True),
])
def test_the_check_itself(tmp_path: Path, code: str, ok: bool) -> None:
    """The check flags a device-less factory (the old `accuracy_by`) and accepts the fixes."""
    (tmp_path / "train").mkdir()
    for sub in CHECKED[1:]:
        (tmp_path / sub).mkdir()
    (tmp_path / "train" / "m.py").write_text("import torch\n" + code)
    assert (unplaced(tmp_path) == []) == ok
