"""Name -> class registries (TASKS, ATTENTION, INITS, STUDIES, ...).

A variant is one registry entry; code never branches on variant names in several places.
"""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from reasonlab.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._entries[name] = obj
            return obj

        return deco

    def __getitem__(self, name: str) -> T:
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
