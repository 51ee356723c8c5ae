"""What `reasonlab studies`, `reasonlab claims` and `reasonlab studies --scale S` print,
remembered between commands.

Listing needs every study class, and importing them imports torch, scipy, scikit-learn and
matplotlib: about 4 CPU-seconds before the first line (`studies --scale` builds every run
config of the scale too: 15 CPU-seconds at cpu), for text that changes only when the source
does. (`studies --scale` keeps the assets its runs read as data and looks each up again:
whether this machine has them is not the source's.) So the text is kept in a cache file named
by a fingerprint of everything it is computed from -- reasonlab's own files (their paths, sizes
and modification times: study classes, claims.toml, measured.json), the Python and reasonlab
versions, the command line and, for `claims`, the report files of the store it reads (for
`studies --scale`, torch's version) -- and a command whose fingerprint matches prints it
without importing a study. Any edit changes the fingerprint, so a stale text
is never shown.

Only a process that has not imported the studies yet uses the cache (a fresh `reasonlab`
command): one that has (a test registering a study of its own, a notebook) may hold studies no
file shows, so it computes the text and leaves the cache alone. Plugins (--include,
REASONLAB_PLUGINS, entry points) live outside the package's files, so with any the text is
computed every time. The cache is `$REASONLAB_CACHE`, else `$XDG_CACHE_HOME/reasonlab`, else
`~/.cache/reasonlab`; one that cannot be written costs the speed, never the command.

The texts of the commands a fresh install types first (`studies`, `claims` with no reports in
the store, `studies --scale S` for the torch the project pins) also ship with the package, in
listings.json, under a hash of the CONTENTS of the package's source files (*.py, *.toml, *.json:
what a listing is computed from; modification times differ between checkouts): a command whose
package hashes the same prints the shipped text, so even the first command on a new machine
answers without importing a study. `reasonlab readme` rewrites the file (it is generated, like
the README blocks) and a test fails while it is stale; a stale one is never read.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import reasonlab

ENV = "REASONLAB_CACHE"
SHIPPED_ENV = "REASONLAB_LISTINGS"
"""The shipped texts' file, if not the package's listings.json (a benchmark points it at none
to measure the commands computing their text)."""
PACKAGE = Path(reasonlab.__file__).resolve().parent
SKIP_DIRS = ("__pycache__",)
SOURCE_SUFFIXES = (".py", ".toml", ".json")
"""The package's files a listing is computed from (those a wheel installs)."""
KEEP = 64
"""Texts kept; older ones (of edits since undone, of other stores) are removed."""


def cache_dir() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "reasonlab"


def _stats(root: Path, skip: Iterable[str] = SKIP_DIRS) -> list[str]:
    """One line per file under `root`: its path, size and modification time (ns)."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(files):
            p = os.path.join(folder, name)
            try:
                st = os.stat(p)
            except OSError:  # removed while walked: its absence is part of the fingerprint
                continue
            out.append(f"{p}\0{st.st_size}\0{st.st_mtime_ns}")
    return out


def fingerprint(command: list[str], extra: Iterable[str] = ()) -> str:
    """The key of a listing's text: the command, reasonlab's files, the interpreter and
    `extra` (e.g. the store's report files)."""
    h = hashlib.sha256()
    for part in [reasonlab.__version__, sys.version, sys.executable, *command, "\1",
                 *_stats(PACKAGE), "\1", *extra]:
        h.update(part.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def shipped_path() -> Path:
    """The package's file of shipped texts (written by `reasonlab readme`)."""
    return PACKAGE / "listings.json"


def _shipped_data(path: Path) -> dict | None:
    """The shipped texts' file as written for this source, or None (absent, unreadable, or
    written from other source)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("source") == source_hash() else None


@functools.cache
def source_hash() -> str:
    """sha256 of the package's source files (their paths in the package and contents), the
    shipped texts' file excepted: equal on every checkout and install of the same source."""
    h = hashlib.sha256()
    own = shipped_path().resolve()
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            p = Path(folder) / name
            if p.suffix not in SOURCE_SUFFIXES or p.resolve() == own:
                continue
            h.update(p.relative_to(PACKAGE).as_posix().encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def shipped(key: list[str]) -> str | None:
    """The text shipped for the command `key`, if the file was written from this source."""
    data = _shipped_data(Path(os.environ.get(SHIPPED_ENV) or shipped_path()))
    return None if data is None else data.get("texts", {}).get("\0".join(key))


def stale() -> bool:
    """Whether the package's listings.json was written from other source than this."""
    source_hash.cache_clear()
    return _shipped_data(shipped_path()) is None


def ship(texts: dict[tuple[str, ...], Callable[[], str]]) -> bool:
    """Write listings.json from `texts` (a command's key: how to compute its text) for this
    source; whether the file changed."""
    from reasonlab.store import write_text_atomic

    source_hash.cache_clear()  # the texts' inputs (measured.json) may have been rewritten
    data = {"source": source_hash(),
            "texts": {"\0".join(key): compute() for key, compute in texts.items()}}
    new = json.dumps(data, indent=1, sort_keys=True) + "\n"
    try:
        if shipped_path().read_text(encoding="utf-8") == new:
            return False
    except OSError:
        pass
    write_text_atomic(shipped_path(), new)
    return True


def usable() -> bool:
    """Whether this process may read and write the cache: the studies are not imported yet
    (so nothing registered outside the files) and no plugin is configured."""
    if "reasonlab.studies" in sys.modules:
        return False
    from reasonlab import plugins

    return not plugins.sources()


def remembered(key: str, compute: Callable[[], str]) -> str:
    """The text cached under `key`, or `compute()`'s, cached for the next command."""
    path = cache_dir() / "listing" / f"{key}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass
    text = compute()
    try:  # through a temporary file, so a reader never sees half a text
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError:  # a read-only home: the command still answers, only not faster
        pass
    return text


def _prune(folder: Path) -> None:
    kept = sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in kept[KEEP:]:
        old.unlink(missing_ok=True)


def listing(command: list[str], compute: Callable[[], str], extra: Iterable[str] = (),
            shipped_as: list[str] | None = None) -> str:
    """`compute()`'s text: shipped with the package (under `shipped_as`, the command's key
    there, where it has one), else from the cache where this process may use it."""
    if not usable():
        return compute()
    if shipped_as is not None and (text := shipped(shipped_as)) is not None:
        return text
    return remembered(fingerprint(command, extra), compute)
