"""Base class for typed configs: unknown keys rejected, errors name the field."""

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from reasonlab.errors import ConfigError


class StrictModel(BaseModel):
    """Frozen, typed, rejects unknown keys. Derived values are properties."""

    # allow_inf_nan=False: `optim.lr=Infinity` parses as a JSON float; no config wants one.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              allow_inf_nan=False)

    @classmethod
    def build(cls, data: dict[str, Any] | None = None, where: str = "", **kw: Any) -> Self:
        """Validate `data`, turning pydantic's report into one ConfigError line."""
        try:
            return cls.model_validate({**(data or {}), **kw})
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where)) from None

    def replace(self, **changes: Any) -> Self:
        return type(self).build({**self.model_dump(), **changes})


def format_validation_error(e: ValidationError, where: str = "") -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        field = f"{where}.{loc}" if where and loc else (where or loc or "config")
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key {field!r}; remove it or check its spelling")
        elif err["type"] == "missing":
            parts.append(f"missing key {field!r}; set it")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            parts.append(f"{field}: {msg}")
    return "; ".join(parts)


def deep_merge(base: Mapping[str, Any], *overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with each override merged in, in order: a nested mapping merges key by key, any
    other value replaces; the inputs are left untouched (a config and its overrides; a study's
    recipe, arm and sweep point). Hand-written: a few lines, and no library we depend on has one
    for plain dicts."""
    out = dict(base)
    for over in overrides:
        for k, v in over.items():
            nested = isinstance(v, Mapping) and isinstance(out.get(k), Mapping)
            out[k] = deep_merge(out[k], v) if nested else v
    return out


MAX_DEPTH = 32
"""Deepest nesting a config may have (the deepest real one has 4 levels): deeper data would
exhaust the recursion of validation and hashing."""


def depth(data: Any, limit: int = MAX_DEPTH + 1) -> int:
    """Nesting depth of dicts and lists, counted up to `limit` (iterative: no recursion)."""
    deepest, stack = 0, [(data, 0)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d < limit and isinstance(node, dict | list):
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_config_file(path: Path) -> dict[str, Any]:
    """A JSON or TOML config file (by suffix) as a dict; one-line ConfigError otherwise."""
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read config file {path} ({e.strerror}); check the "
                          "path") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text; give a JSON or TOML "
                          "file") from None
    kind = "TOML" if path.suffix == ".toml" else "JSON"
    try:
        data = tomllib.loads(text) if kind == "TOML" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"config file {path} is not valid {kind} ({e})") from None
    except RecursionError:  # the parsers recurse per level: 100,000 nested [ exhaust the stack
        raise ConfigError(f"config file {path} nests too deeply to be a config; a config "
                          f"is at most {MAX_DEPTH} levels deep") from None
    if depth(data) > MAX_DEPTH:
        raise ConfigError(f"config file {path} nests more than {MAX_DEPTH} levels deep; a "
                          "config is a few levels of keys")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object of keys at the top level "
                          f"(e.g. {{\"task\": {{\"name\": \"lego\"}}, ...}}), not "
                          f"{type(data).__name__}")
    return data


# -- KEY=VALUE overrides of the command line (`reasonlab run STUDY steps=100`) ------------

def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`a.b=3 c=text` -> {"a": {"b": 3}, "c": "text"}; values are JSON when they parse as JSON."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key or "" in key.split("."):
            raise ConfigError(f"override {item!r} is not key=value; write e.g. steps=500")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        except RecursionError:
            value = None
        if depth(value) > MAX_DEPTH:
            raise ConfigError(f"override {key} nests more than {MAX_DEPTH} levels deep; give "
                              "a plain value")
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override of {p!r}")
        node[leaf] = value
    return out


def override_lines(overrides: Mapping[str, Any], prefix: str = "") -> list[str]:
    """{"model": {"d_model": 8}, "steps": 2} -> ["model.d_model=8", "steps=2"]: the
    inverse of parse_overrides (a report says the overrides it was trained with)."""
    out: list[str] = []
    for k, v in overrides.items():
        if isinstance(v, Mapping):
            out += override_lines(v, f"{prefix}{k}.")
        else:
            out.append(f"{prefix}{k}={json.dumps(v)}")
    return out
