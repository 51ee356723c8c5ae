"""Name -> class registries (TASKS, ATTENTION, INITS, STUDIES, ...).

A variant is one registry entry; code never branches on variant names in several places.

Entries register from reasonlab's own modules and from plugins (reasonlab.plugins): each entry
remembers the module that registered it, so a plugin taking a name reasonlab (or another plugin)
already uses is one PluginError line naming both, whichever of the two was imported first. A
lookup of a name the registry does not hold loads the plugins first (once per process).
"""

import sys
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from reasonlab import plugins
from reasonlab.errors import ConfigError, PluginError

T = TypeVar("T")


def ours(module: str) -> bool:
    """A module of reasonlab itself (not a plugin's, a test's or a user's script)."""
    return module == "reasonlab" or module.startswith("reasonlab.")


def caller(depth: int = 1) -> str:
    """The module whose code called the function `depth` frames up (a decorator's caller: the
    module the decorated class is defined in, even for an instance such as a checkpoint)."""
    return sys._getframe(depth + 1).f_globals.get("__name__", "?")


class Registry(Generic[T]):
    instances: "list[Registry[Any]]" = []
    """Every registry made (what a test that loads a plugin restores afterwards)."""

    def __init__(self, kind: str):
        Registry.instances.append(self)
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        """name -> the module that registered it."""

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj, caller())
            return obj

        return deco

    def add(self, name: str, obj: T, origin: str) -> None:
        """Register `obj` as `name` on behalf of the module `origin`."""
        if name in self._entries:
            raise self._clash(name, origin)
        self._entries[name] = obj
        self._origins[name] = origin
        if not ours(origin):  # withdrawn again if its plugin then fails to import
            plugins.on_failure(lambda: self._forget(name))

    def _forget(self, name: str) -> None:
        self._entries.pop(name, None)
        self._origins.pop(name, None)

    def _clash(self, name: str, origin: str) -> Exception:
        old = self._origins.get(name, "?")
        if ours(old) and ours(origin):  # reasonlab's own bug, not the user's
            return ValueError(f"{self.kind} {name!r} registered twice")
        if ours(old) or ours(origin):
            plugin, builtin = (origin, old) if ours(old) else (old, origin)
            return PluginError(f"{self.kind} {name!r} of {plugin} is a name reasonlab's own "
                               f"{self.kind} uses ({builtin}); rename it")
        return PluginError(f"{self.kind} {name!r} is registered by both {old} and {origin}; "
                           "rename one")

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            plugins.load()  # a plugin's name, in a process that has not imported them yet
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise ConfigError(f"unknown {self.kind} {name!r}; choose one of: {known}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items())
