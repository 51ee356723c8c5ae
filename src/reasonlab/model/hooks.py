"""Named hook points, in the style of TransformerLens (Nanda & Bloom, 2022).

Every activation worth interpreting passes through a `HookPoint`. A HookPoint is the identity
and costs one list check unless a hook is attached. Its name is its module name in the model
(`blocks.3.attn.hook_pattern`), so `model.named_modules()` lists them all.

    out, cache = run_with_cache(model, tokens)
    cache["blocks.0.attn.hook_pattern"]      # [batch, n_heads, q_pos, k_pos]
    cache.stack("hook_resid_post")           # [n_layers, batch, seq, d_model]

    def zero_head(pattern, hook):            # patching: return a new tensor
        pattern[:, 2] = 0
        return pattern
    with model.hooks([("blocks.1.attn.hook_pattern", zero_head)]):
        out = model(tokens)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import nn

HookFn = Callable[[torch.Tensor, "HookPoint"], torch.Tensor | None]
NameFilter = str | Sequence[str] | Callable[[str], bool] | None


class HookHandle:
    """Returned by `HookPoint.add_hook`; `remove()` detaches that one hook."""

    def __init__(self, point: HookPoint, fn: HookFn):
        self.point, self.fn = point, fn

    def remove(self) -> None:
        fns = self.point._fns
        for i, f in enumerate(fns):  # identity, not ==, so the same fn may be attached twice
            if f is self.fn:
                del fns[i]
                return


class HookPoint(nn.Module):
    """Identity on a tensor; attached hooks `fn(tensor, hook) -> tensor | None` run in order.

    A hook that returns a tensor replaces the activation (patching); one that returns None
    only observes it (caching).
    """

    def __init__(self) -> None:
        super().__init__()
        self._fns: list[HookFn] = []
        self.name: str = ""  # set by `name_hook_points` to the module's path in the model

    @property
    def has_hooks(self) -> bool:
        """Whether anything will look at this point: one of our hooks, a PyTorch module hook
        (local or global), or a forward set on the instance (nnsight and accelerate wrap a
        module by replacing its `forward`). Code that would skip computing the activation
        (the fused attention kernel never forms the pattern) asks this first."""
        return bool(self._fns or self._forward_hooks or self._forward_pre_hooks
                    or self._backward_hooks or self._backward_pre_hooks or _global_hooks()
                    or "forward" in self.__dict__)

    def add_hook(self, fn: HookFn) -> HookHandle:
        self._fns.append(fn)
        return HookHandle(self, fn)

    def remove_hooks(self) -> None:
        self._fns.clear()

    # `__call__` is overridden so that an unhooked point skips nn.Module's call machinery: a
    # few truthiness checks and return. Any PyTorch module hook -- on this point
    # (`register_forward_hook`, pre-hooks, backward hooks) or global
    # (`nn.modules.module.register_module_forward_hook`), or a `forward` replaced on the
    # instance (nnsight's) -- sends the call through nn.Module.__call__, so it fires.
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if not self.has_hooks:
            return x
        return super().__call__(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for fn in self._fns:
            out = fn(x, self)
            if out is not None:
                x = out
        return x

    def extra_repr(self) -> str:
        return f"name={self.name!r}, hooks={len(self._fns)}"


_GLOBAL = (nn.modules.module._global_forward_hooks, nn.modules.module._global_forward_pre_hooks,
           nn.modules.module._global_backward_hooks,
           nn.modules.module._global_backward_pre_hooks)
"""torch's registries of global module hooks (dicts it fills and empties in place)."""


def _global_hooks() -> bool:
    """Whether any global module hook is registered (read at every call: tools register them
    after the model is built)."""
    return bool(_GLOBAL[0] or _GLOBAL[1] or _GLOBAL[2] or _GLOBAL[3])


def name_hook_points(model: nn.Module) -> None:
    """Give every HookPoint its module path as `.name` (call at the end of __init__)."""
    for name, m in model.named_modules():
        if isinstance(m, HookPoint):
            m.name = name


def hook_points(model: nn.Module) -> dict[str, HookPoint]:
    """Module path -> HookPoint, in forward order of registration."""
    return {n: m for n, m in model.named_modules() if isinstance(m, HookPoint)}


def _matcher(names: NameFilter) -> Callable[[str], bool]:
    if names is None:
        return lambda n: True
    if isinstance(names, str):
        return lambda n: n == names
    if callable(names):
        return names
    wanted = set(names)
    return lambda n: n in wanted


@contextlib.contextmanager
def hooks(
    model: nn.Module, fwd_hooks: Sequence[tuple[str | Callable[[str], bool], HookFn]]
) -> Iterator[nn.Module]:
    """Attach `(name or name-predicate, fn)` hooks for the duration of the block.

    Only the hooks added here are removed on exit, even if the block raises.
    """
    points = hook_points(model)
    handles: list[HookHandle] = []
    try:
        for name, fn in fwd_hooks:
            if isinstance(name, str):
                if name not in points:
                    raise KeyError(f"no hook point {name!r}; known: {', '.join(points)}")
                handles.append(points[name].add_hook(fn))
            else:
                handles += [p.add_hook(fn) for n, p in points.items() if name(n)]
        yield model
    finally:
        for h in reversed(handles):
            h.remove()


_LAYER = re.compile(r"^(?:\w+\.)?blocks\.(\d+)\.(.+)$")
"""`blocks.{l}.<name>`, or a wrapper's `<module>.blocks.{l}.<name>` (FPT's `backbone.`)."""


class ActivationCache(dict[str, torch.Tensor]):
    """Hook name -> detached activation, for one forward pass."""

    def stack(self, name: str) -> torch.Tensor:
        """Per-layer entries `blocks.{l}.<name>` (or a wrapper's `backbone.blocks.{l}.<name>`)
        stacked in layer order: [n_layers_run, ...].

        `name` is the part after `blocks.{l}.`, e.g. "hook_resid_post" or "attn.hook_pattern".
        With stochastic depth only the layers that ran are present.
        """
        per_layer = {}
        for key, t in self.items():
            m = _LAYER.match(key)
            if m and m.group(2) == name:
                per_layer[int(m.group(1))] = t
        if not per_layer:
            raise KeyError(f"no cached per-layer entry named {name!r}")
        return torch.stack([per_layer[layer] for layer in sorted(per_layer)])


def device_of(model: nn.Module) -> torch.device | None:
    """The device of the model's parameters (None for a model without any): where an analysis
    sends each batch of examples, so that a model loaded on the run's GPU computes there on
    examples drawn on the CPU (init_stages.load_run_model's `device`)."""
    p = next(iter(model.parameters()), None)
    return None if p is None else p.device


def to_device_of(model: nn.Module, batch: Any) -> Any:
    """`batch` (a Batch or a tensor) on the model's device; itself when it is there already."""
    device = device_of(model)
    if device is None:
        return batch
    where = batch.device if isinstance(batch, torch.Tensor) else batch.tokens.device
    return batch if where == device else batch.to(device)


def run_with_cache(
    model: nn.Module, *args: object, names_filter: NameFilter = None, **kwargs: object
) -> tuple[object, ActivationCache]:
    """Run `model(*args, **kwargs)` and cache the activations at the selected hook points.

    names_filter: None (all), one name, a list of names, or a predicate on names.
    Cached tensors are detached; gradients of the output are unaffected.
    """
    cache = ActivationCache()
    match = _matcher(names_filter)

    def save(x: torch.Tensor, hook: HookPoint) -> None:
        cache[hook.name] = x.detach()

    points = hook_points(model)
    if names_filter is not None and not callable(names_filter):  # names: each must exist
        asked = [names_filter] if isinstance(names_filter, str) else list(names_filter)
        unknown = [n for n in asked if n not in points]
        if unknown:
            raise KeyError(f"no hook point {unknown[0]!r} in this model; known: "
                           f"{', '.join(points)}")
    names = [n for n in points if match(n)]
    with hooks(model, [(n, save) for n in names]):
        out = model(*args, **kwargs)
    return out, cache


class HookedModule(nn.Module):
    """Mixin giving a model `hook_points()`, `hooks(...)`, `run_with_cache(...)`."""

    def hook_points(self) -> dict[str, HookPoint]:
        return hook_points(self)

    def hooks(
        self, fwd_hooks: Sequence[tuple[str | Callable[[str], bool], HookFn]]
    ) -> contextlib.AbstractContextManager[nn.Module]:
        return hooks(self, fwd_hooks)

    def run_with_cache(
        self, *args: object, names_filter: NameFilter = None, **kwargs: object
    ) -> tuple[object, ActivationCache]:
        return run_with_cache(self, *args, names_filter=names_filter, **kwargs)

    def reset_hooks(self) -> None:
        for p in self.hook_points().values():
            p.remove_hooks()
