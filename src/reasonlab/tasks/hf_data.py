"""The papers' own data sets from a local Hugging Face datasets folder, offline: CIFAR-10 and
MNIST (FPT, Lu et al. 2021), WikiText-103 (Boix-Adsera et al. 2024 §6), GLUE (Chiang & Lee's
seed table). Never downloaded at run time (docs/design.md §9 Offline assets).

A folder is either one the user names (`task.path`), holding the dataset's Parquet files
(`<config>/<split>-00000-of-00001.parquet`, as the Hub stores them) or Arrow files (as
`Dataset.save_to_disk` writes them: `<split>/data-00000-of-00001.arrow`), or the dataset's
snapshot in the Hub cache (`datasets--ORG--NAME/snapshots/<commit>`; model/hf.py finds it).
Pickles are never read. Parquet needs pyarrow (`pip install 'reasonlab[data]'`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.errors import AssetError


def dataset_folder(path: str | None, hub_ids: tuple[str, ...], what: str, how: str) -> Path:
    """`path` when given (it must exist), else the first of `hub_ids` in the Hub cache;
    AssetError naming where it looked and `how` to put the data there."""
    from reasonlab.model.hf import cached_snapshot, hub_cache

    if path is not None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise AssetError(f"{what}: no folder {folder}; {how}")
        return folder
    for repo in hub_ids:
        snap = cached_snapshot(repo, kind="datasets")
        if snap is not None:
            return snap
    looked = ", ".join(str(hub_cache() / f"datasets--{r.replace('/', '--')}") for r in hub_ids)
    raise AssetError(f"{what} is not in the local Hugging Face cache (looked in {looked}); "
                     f"nothing is downloaded at run time: {how}")


def split_files(folder: Path, split: str, config: str | None = None) -> list[Path]:
    """The Parquet or Arrow files of `split` under `folder` (within `config`'s subfolder when
    the dataset has several, GLUE's `cola/`, WikiText's `wikitext-103-raw-v1/`)."""
    root = folder / config if config is not None and (folder / config).is_dir() else folder
    patterns = (f"**/{split}-*.parquet", f"**/{split}.parquet", f"**/{split}/*.parquet",
                f"**/{split}/*.arrow", f"**/*-{split}.arrow", f"**/{split}-*.arrow")
    for pattern in patterns:
        found = sorted(root.glob(pattern))
        if found:
            return found
    return []


def read_split(folder: Path, split: str, columns: list[str], what: str,
               config: str | None = None) -> dict[str, list[Any]]:
    """Column -> values of one split (Parquet or Arrow IPC); AssetError when it is absent."""
    files = split_files(folder, split, config)
    if not files:
        raise AssetError(f"{what}: no {split} split (Parquet or Arrow) under "
                         f"{folder / config if config else folder}")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise AssetError(f"{what}: reading Parquet / Arrow needs pyarrow: pip install "
                         "'reasonlab[data]'") from None
    out: dict[str, list[Any]] = {c: [] for c in columns}
    for f in files:
        if f.suffix == ".parquet":
            t = pq.read_table(f)
        else:
            with pa.memory_map(str(f)) as src:
                try:
                    t = pa.ipc.open_stream(src).read_all()
                except pa.ArrowInvalid:
                    t = pa.ipc.open_file(src).read_all()
        for c in columns:  # "img|image": the first of these names the file has
            name = next((n for n in c.split("|") if n in t.column_names), None)
            if name is None:
                raise AssetError(f"{what}: {f} has no column {c!r} (it has "
                                 f"{', '.join(t.column_names)})")
            out[c] += t.column(name).to_pylist()
    return out


def decode_images(cells: list[Any], channels: int) -> np.ndarray:
    """Image cells ({"bytes": PNG/JPEG, "path": ...}, as datasets' Image feature stores them)
    -> uint8 [N, C, H, W]."""
    from PIL import Image

    mode = "L" if channels == 1 else "RGB"
    out = []
    for cell in cells:
        raw = cell["bytes"] if isinstance(cell, dict) else cell
        img = np.asarray(Image.open(io.BytesIO(raw)).convert(mode), dtype=np.uint8)
        out.append(img[None] if channels == 1 else img.transpose(2, 0, 1))
    return np.stack(out)


def has_hf_files(folder: Path) -> bool:
    """Whether `folder` holds Parquet or Arrow files (a Hugging Face datasets folder)."""
    return any(folder.glob("**/*.parquet")) or any(folder.glob("**/*.arrow"))
