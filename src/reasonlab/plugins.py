"""Extensions from outside the package: tasks, model variants (attention kinds, inits, norms,
feed-forward blocks, architectures), corpora and whole study families register from any
importable module, with the decorators reasonlab's own modules use (`@TASKS.register("name")`,
`@ATTENTION.register(...)`, `@STUDIES.register(...)`): lm-evaluation-harness takes outside
tasks with `--include_path`, zoology "in any file you want, as long as it's importable".
docs/adding-a-family.md is the recipe for a study family.

Where plugins come from:
  - entry points of the group `reasonlab.plugins` of the installed distributions (in their
    pyproject.toml: `[project.entry-points."reasonlab.plugins"] my_family = "my_family"`), each
    naming a module (`module:function` also calls the function once the module is imported);
  - REASONLAB_PLUGINS, paths separated by os.pathsep, each a folder of modules (its `*.py` files
    and packages), a package folder or one `.py` file. `reasonlab --include PATH` adds PATH to it,
    so the worker processes a command spawns (they inherit the environment) load them too.
A package is imported with each of its modules one level deep, as reasonlab imports its own
families (studies/__init__.py): a family's studies register without an __init__ importing them.

When: importing reasonlab.studies loads the plugins after the built-in families (so listings,
the claims ledger and the site show plugin studies), and a registry lookup of a name it does
not hold loads them before failing (registry.py), so a spawned worker building a plugin's task
finds it. Each plugin is imported once per process.

A plugin that cannot be found or imported is one PluginError line naming it and where it came
from, and what it registered before failing is withdrawn. A name it registers that reasonlab or
another plugin already uses is an error (registry.py), never a silent override.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from reasonlab.errors import PluginError, ReasonlabError

GROUP = "reasonlab.plugins"
"""The entry-point group an installed plugin declares its module in."""
ENV = "REASONLAB_PLUGINS"
"""Folders, package folders or .py files of plugins, separated by os.pathsep."""


@dataclass(frozen=True)
class Source:
    """One plugin: an entry point, or one path of REASONLAB_PLUGINS."""

    where: str
    """How the user named it: 'entry point NAME = VALUE (DISTRIBUTION)', or the path."""
    modules: tuple[str, ...]
    """The top-level modules to import."""
    folder: Path | None = None
    """Put on sys.path first (a path); None for an installed distribution."""
    call: str | None = None
    """An entry point's `:function`, called after its module is imported."""


_loaded: set[str] = set()
"""`where` of every plugin imported in this process."""
_loading: list[Source] = []
"""The plugin being imported (load() is not re-entered while it is)."""
_undo: list[Callable[[], None]] = []
"""Withdraws what the plugin being imported has registered so far (registry.py adds to it)."""


def env_paths() -> list[Path]:
    """The paths of REASONLAB_PLUGINS, in order, each once."""
    parts = os.environ.get(ENV, "").split(os.pathsep)
    return list(dict.fromkeys(Path(p).expanduser().resolve() for p in parts if p.strip()))


def path_source(path: Path) -> Source:
    """The plugin a path names: a .py file, a package folder, or a folder of modules."""
    if path.is_file() and path.suffix == ".py":
        return Source(str(path), (path.stem,), path.parent)
    if path.is_dir() and (path / "__init__.py").is_file():
        return Source(str(path), (path.name,), path.parent)
    if path.is_dir():
        names = tuple(sorted(m.name for m in pkgutil.iter_modules([str(path)])
                             if not m.name.startswith("_")))
        if not names:
            raise PluginError(f"plugin folder {path} holds no Python module or package; give "
                              "a folder of plugin modules, a package folder or a .py file")
        return Source(str(path), names, path)
    raise PluginError(f"plugin path {path} is not a folder or a .py file (from {ENV} or "
                      "--include); give a folder of plugin modules, a package folder or a .py "
                      "file")


def sources() -> list[Source]:
    """Every plugin this process should have: entry points first, then REASONLAB_PLUGINS."""
    out = []
    for ep in importlib.metadata.entry_points(group=GROUP):
        dist = f" ({ep.dist.name} {ep.dist.version})" if ep.dist is not None else ""
        out.append(Source(f"entry point {ep.name} = {ep.value}{dist}", (ep.module,),
                          call=ep.attr))
    return out + [path_source(p) for p in env_paths()]


def load() -> bool:
    """Import every plugin not imported yet in this process; True if one was. A plugin being
    imported that imports reasonlab.studies (which calls load) is not re-entered."""
    if _loading:
        return False
    new = False
    for src in sources():
        if src.where not in _loaded:
            _import(src)
            _loaded.add(src.where)
            new = True
    return new


def include(paths: Iterable[str | Path]) -> None:
    """`reasonlab --include PATH`: add the paths to REASONLAB_PLUGINS, for this process and
    the processes it starts, and import them. A path that holds no plugin is one error line."""
    given = [Path(p).expanduser().resolve() for p in paths]
    for p in given:
        if not p.exists():
            raise PluginError(f"--include {p}: no such file or folder; give a folder of plugin "
                              "modules, a package folder or a .py file")
        path_source(p)
    before = os.environ.get(ENV)
    os.environ[ENV] = os.pathsep.join(dict.fromkeys(str(p) for p in [*env_paths(), *given]))
    try:
        load()
    except BaseException:  # a plugin that does not load is not handed on to workers either
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before
        raise


def loading() -> bool:
    """Whether a plugin is being imported now."""
    return bool(_loading)


def on_failure(undo: Callable[[], None]) -> None:
    """Registry.add: how to withdraw an entry the plugin being imported registered, if it then
    fails to import."""
    if _loading:
        _undo.append(undo)


def _import(src: Source) -> None:
    added = src.folder is not None and str(src.folder) not in sys.path
    if added:
        sys.path.insert(0, str(src.folder))
    _loading.append(src)
    try:
        for name in src.modules:
            _check_free(name, src)
            module = importlib.import_module(name)
            for m in pkgutil.iter_modules(getattr(module, "__path__", []), f"{name}."):
                importlib.import_module(m.name)  # a family's studies, as studies/__init__.py
            if src.call is not None:
                getattr(module, src.call)()
    except Exception as e:
        for undo in reversed(_undo):
            undo()
        for m in [m for m in sys.modules
                  if any(m == n or m.startswith(f"{n}.") for n in src.modules)]:
            del sys.modules[m]
        if added:
            sys.path.remove(str(src.folder))
        raise PluginError(f"plugin {src.where}: {_why(e, src)}") from None
    finally:
        _loading.pop()
        _undo.clear()


def _check_free(name: str, src: Source) -> None:
    """A plugin module may not take the name of a module imported from elsewhere (a plugin
    `json.py` would otherwise be json)."""
    have = sys.modules.get(name)
    if have is None or src.folder is None:
        return
    file = getattr(have, "__file__", None)
    if file is None or not Path(file).resolve().is_relative_to(src.folder):
        raise PluginError(f"plugin {src.where}: its module {name!r} has the name of a module "
                          f"already imported from {file or 'Python itself'}; rename it")


def _why(e: Exception, src: Source) -> str:
    """One line: what failed and where in the plugin (no traceback: it is the plugin's bug or
    a clash, and the line names the file to fix)."""
    if isinstance(e, ReasonlabError):
        return str(e)
    frames = traceback.extract_tb(e.__traceback__)
    own = [f for f in frames if src.folder is not None
           and Path(f.filename).resolve().is_relative_to(src.folder)]
    at = (own or frames or [None])[-1]
    place = f" at {at.filename}:{at.lineno}" if at is not None else ""
    return (f"importing it failed with {type(e).__name__}: {e}{place}; fix it, or remove it "
            f"from {ENV} / --include (or uninstall its distribution)")
