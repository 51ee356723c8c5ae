"""A task's data as a Parquet dataset that needs no reasonlab to read (`reasonlab data export`).

The splits are a run's own: `train/loop.make_splits` draws them from the run's seed, sizes and
de-duplication (the validation split is the last n_val of the training draw, as a run holds it
out), so an exported LEGO set with seed 0 is, example for example, what lego-extrapolation's
seed-0 run trained and was tested on. The folder has the layout of a Hugging Face dataset
repository, as reasoning-gym's exports and HELM's synthetic-reasoning scenario ship theirs:

    data/train-00000-of-00001.parquet     (validation-, test-; one or more shards each)
    README.md                             the dataset card: YAML `dataset_info` (features,
                                          splits) and `configs`, then the task, its config,
                                          the paper and section, how the splits were drawn
    tokenizer.json, tokenizer_config.json the task's tokenizer (tokenizer.py): `text`, the
                                          input written out, to `input_ids` and back

Every example is one row; the labelled slots are parallel lists (`label_pos`, `labels`,
`loss_mask` and each metadata column such as LEGO's `depth`), so columnar tools (pyarrow,
pandas, polars, DuckDB) read them without nulls, whatever the number of variables a task names.
The JSON-lines form of `reasonlab data --format jsonl` keys answers by name instead, which
columnar readers widen into one mostly-null column per name ever used. Padded slots
(label_pos -1: LEGO's mixed lengths, the masked-LM's unused slots) are left out of the lists.
Features are typed with `datasets.Features` (labels are a ClassLabel with the task's class
names), whose schema metadata `datasets.load_dataset("parquet", data_dir=...)` reads back.

Splits are written a chunk of rows at a time (CHUNK_ROWS) into shards of about SHARD_BYTES of
input, so the Arrow copy of a large split (3M masked-LM windows) never exists whole; the sizes
themselves are bounded as a run's are (TrainConfig). The folder is written beside `out` and
renamed into place at the end: a failed export leaves nothing, and an existing non-empty
folder is never written into.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pydantic import Field, SerializeAsAny, field_validator, model_validator

from reasonlab import tokenizer
from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.store import publish_folder
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, build_task
from reasonlab.train.config import RESULTS_VERSION, TrainConfig

CHUNK_ROWS = 4096
"""Rows converted to Arrow and written at a time (memory only: the files do not depend on it,
except for their row groups)."""
SHARD_BYTES = 256 * 2**20
"""Input bytes (token ids, slots, features) per Parquet shard, about: Hugging Face's viewer and
loaders handle files of a few hundred MB best."""
SPLIT_NAMES = {"train": "train", "validation": "validation", "test": "test"}


class DataConfig(StrictModel):
    """What a run's data depend on: its task, seed and split sizes (TrainConfig's fields of the
    same names, with the same bounds and defaults; the model plays no part)."""

    task: SerializeAsAny[TaskConfig]
    seed: int = Field(0, ge=0)
    n_train: int = Field(20_000, gt=0)
    n_test: int = Field(2_000, gt=0)
    n_val: int = Field(0, ge=0)

    @field_validator("task", mode="before")
    @classmethod
    def _task(cls, task: Any) -> Any:
        if isinstance(task, dict):
            return TASKS[str(task.get("name"))].Config.build(task, where="task")
        return task

    @model_validator(mode="after")
    def _check(self) -> DataConfig:
        if self.n_val >= self.n_train:
            raise ValueError(f"n_val={self.n_val} must be below n_train={self.n_train}: the "
                             "validation examples are held out of the training draw")
        return self

    @classmethod
    def of_run(cls, config: TrainConfig) -> DataConfig:
        return cls(task=config.task, seed=config.seed, n_train=config.n_train,
                   n_test=config.n_test, n_val=config.n_val)


def _need_datasets() -> None:
    try:
        import datasets  # noqa: F401
        import pyarrow  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        raise ConfigError("`reasonlab data export` writes with Hugging Face datasets, "
                          "tokenizers and pyarrow; install them with `pip install "
                          "'reasonlab[data]'`") from None


@dataclass(frozen=True)
class Columns:
    """What the rows of a task's splits hold (decided from every split, so all shards of all
    splits share one schema)."""

    meta: tuple[str, ...]
    """Metadata columns, one value per labelled slot (LEGO: depth)."""
    padded: bool
    """An `attention_mask` column: some split pads its token rows."""
    features: int | None
    """d_input of the continuous inputs (FPT's bit and image patches), or None."""
    label_sub: bool
    """A `label_sub` column (bit memory: which output of the token a slot reads)."""


def columns_of(batches: list[Batch]) -> Columns:
    first = batches[0]
    P = first.label_pos.shape[1]
    meta = tuple(k for k, v in first.meta.items() if v.ndim == 2 and v.shape[1] == P)
    return Columns(meta, any(b.pad_mask is not None for b in batches),
                   None if first.features is None else int(first.features.shape[-1]),
                   first.label_sub is not None)


def features_of(task: Task, cols: Columns) -> Any:
    """The `datasets.Features` of the rows: typed, never nullable in practice."""
    _need_datasets()
    from datasets import ClassLabel, Features, List, Value

    f: dict[str, Any] = {
        "text": Value("string"),
        "readable": Value("string"),
        "input_ids": List(Value("int32")),
        "tokens": List(Value("string")),
    }
    if cols.padded:
        f["attention_mask"] = List(Value("bool"))
    if cols.features is not None:
        f["features"] = List(List(Value("float32"), length=cols.features))
    f["label_pos"] = List(Value("int32"))
    f["labels"] = List(ClassLabel(names=list(task.class_names())))
    f["loss_mask"] = List(Value("bool"))
    if cols.label_sub:
        f["label_sub"] = List(Value("int32"))
    for k in cols.meta:
        f[k] = List(Value("int64"))
    return Features(f)


def _lists(pa: Any, values: np.ndarray, counts: np.ndarray, type_: Any) -> Any:
    """A ListArray of len(counts) rows whose row i holds the next counts[i] of `values`."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=type_))


def chunk_table(task: Task, batch: Batch, cols: Columns, schema: Any) -> Any:
    """The rows of `batch` (a chunk of a split) as an Arrow table of `schema`."""
    import pyarrow as pa

    B, T = batch.tokens.shape
    ids = batch.tokens.numpy()
    full = np.full(B, T, dtype=np.int64)
    tokens = np.asarray(task.vocab.tokens, dtype=object)[ids.ravel()]
    vocab = task.vocab.tokens
    arrays: dict[str, Any] = {
        "text": pa.array([tokenizer.input_text(vocab, row) for row in ids], type=pa.string()),
        "readable": pa.array([task.render(batch, i) for i in range(B)], type=pa.string()),
        "input_ids": _lists(pa, ids.ravel().astype(np.int32), full, pa.int32()),
        "tokens": _lists(pa, tokens, full, pa.string()),
    }
    if cols.padded:
        mask = (batch.pad_mask.numpy() if batch.pad_mask is not None
                else np.ones((B, T), dtype=bool))
        arrays["attention_mask"] = _lists(pa, mask.ravel(), full, pa.bool_())
    if cols.features is not None:
        d = cols.features
        flat = batch.features.numpy().astype(np.float32, copy=False).ravel()
        per_token = pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), d)
        offsets = np.arange(B + 1, dtype=np.int32) * T
        arrays["features"] = pa.ListArray.from_arrays(pa.array(offsets), per_token)
    keep = batch.label_pos.numpy() >= 0  # padded slots (label_pos -1) are left out
    counts = keep.sum(1)

    def slots(x: Any, type_: Any) -> Any:
        return _lists(pa, x.numpy()[keep], counts, type_)

    arrays["label_pos"] = slots(batch.label_pos, pa.int32())
    arrays["labels"] = slots(batch.labels, pa.int64())
    arrays["loss_mask"] = slots(batch.loss_mask, pa.bool_())
    if cols.label_sub:
        arrays["label_sub"] = slots(batch.label_sub, pa.int32())
    for k in cols.meta:
        arrays[k] = slots(batch.meta[k], pa.int64())
    return pa.Table.from_arrays([arrays[f.name].cast(f.type) for f in schema], schema=schema)


def _row_bytes(batch: Batch) -> int:
    """Input bytes per example, roughly: what a shard's size is planned from."""
    n = max(1, len(batch))
    total = sum(t.numel() * t.element_size() for t in
                (batch.tokens, batch.label_pos, batch.labels, *batch.meta.values(),
                 *([batch.features] if batch.features is not None else [])))
    return max(1, total // n)


def write_split(task: Task, name: str, batch: Batch, cols: Columns, schema: Any, folder: Path,
                quiet: bool) -> list[Path]:
    """Split `name` as data/<name>-KKKKK-of-NNNNN.parquet shards; returns their paths."""
    import pyarrow.parquet as pq

    n = len(batch)
    shards = max(1, min(n, math.ceil(n * _row_bytes(batch) / SHARD_BYTES)))
    per_shard = math.ceil(n / shards) if n else 0
    paths = []
    with tqdm(total=n, desc=f"export {name}", unit="rows", disable=quiet) as bar:
        for k in range(shards):
            path = folder / f"{name}-{k:05d}-of-{shards:05d}.parquet"
            lo, hi = k * per_shard, min(n, (k + 1) * per_shard)
            with pq.ParquetWriter(path, schema) as writer:
                for a in range(lo, hi, CHUNK_ROWS):
                    part = batch[slice(a, min(hi, a + CHUNK_ROWS))]
                    writer.write_table(chunk_table(task, part, cols, schema))
                    bar.update(len(part))
            paths.append(path)
    return paths


def export(config: DataConfig, out: Path, quiet: bool = False) -> dict[str, int]:
    """Write the train / validation / test splits of `config` (a run's: DataConfig.of_run)
    under `out` with its dataset card; returns the examples per split. `out` must not exist or
    be empty."""
    _need_datasets()
    from reasonlab.train.loop import draw_splits

    check_out(out)
    task = build_task(config.task)
    check_memory(task, config)
    try:
        train, val, test = draw_splits(task, config.seed, config.n_train, config.n_test,
                                       config.n_val)
    except MemoryError as e:  # numpy's _ArrayMemoryError: a size the estimate let through
        raise ConfigError(f"not enough memory to draw {config.n_train:,} + {config.n_test:,} "
                          f"examples ({str(e).splitlines()[0][:120]}); lower --n-train / "
                          "--n-test") from None
    splits = {"train": train, **({"validation": val} if val is not None else {}), "test": test}
    cols = columns_of(list(splits.values()))
    features = features_of(task, cols)
    schema = features.arrow_schema
    with publish_folder(out) as tmp:  # `out` was checked empty (check_out)
        (tmp / "data").mkdir()
        files = {name: write_split(task, name, b, cols, schema, tmp / "data", quiet)
                 for name, b in splits.items()}
        sizes = {name: len(b) for name, b in splits.items()}
        nbytes = {name: sum(p.stat().st_size for p in ps) for name, ps in files.items()}
        first = files["train"][0].relative_to(tmp).as_posix()
        (tmp / "README.md").write_text(card(task, config, features, sizes, nbytes, cols, first),
                                       encoding="utf-8")
        tokenizer.save(task.vocab.tokens, tmp, task.seq_len)  # `text` -> `input_ids`
    return sizes


def check_memory(task: Task, config: DataConfig) -> None:
    """Refuse, before anything is drawn, sizes whose token rows alone (int64, twice: drawn,
    then de-duplicated) exceed this machine's memory."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not on this platform: numpy will tell
        return
    need = 2 * 8 * (config.n_train + config.n_test) * task.seq_len
    if need > ram:
        raise ConfigError(f"{config.n_train:,} + {config.n_test:,} examples of {task.seq_len} "
                          f"tokens need about {need / 2**30:,.0f} GiB to draw, more than this "
                          f"machine's {ram / 2**30:,.0f} GiB; lower --n-train / --n-test")


def check_out(out: Path) -> None:
    if out.is_file() or out.is_symlink():
        raise ConfigError(f"--out {out} is a file; give a new or empty folder")
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"--out {out} is not empty; give a new or empty folder (an export "
                          "never writes into a folder holding files)")
    parent = out.resolve().parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        raise ConfigError(f"cannot write under {probe}; choose a writable --out")


# ----------------------------------------------------------------------------- the card

COLUMNS = {
    "text": "the model's input written out, padding left out: the folder's tokenizer maps it "
            "to `input_ids` exactly (`AutoTokenizer.from_pretrained(<this folder>)`)",
    "readable": "the example as `reasonlab data` prints it (the task's readable form)",
    "input_ids": "token ids, the model's input row (padding included; id 0 is the padding)",
    "tokens": "the token of each id",
    "attention_mask": "true at real tokens, false at padding",
    "features": "continuous input of each token (patches of bits or pixels), [tokens, d_input]",
    "label_pos": "position in the row of each labelled slot",
    "labels": "class of each slot (ClassLabel: the task's class names)",
    "loss_mask": "slots that enter the training loss (the others are evaluated only)",
    "label_sub": "which of the token's outputs the slot reads (bit memory)",
}
META = {
    "depth": "chain depth of each slot's variable (0 = defined from the root value)",
    "pair": "anchor pair id of the sequence",
    "key_pos": "position of the key item",
    "masked": "1 where the query bit is masked",
    "replaced": "0 = [MASK], 1 = random word, 2 = unchanged (BERT's corruption)",
    "distance": "WordNet path distance of the two synsets",
    "length": "statements of the program",
    "nesting": "loop nesting depth of the program",
    "template": "index of the template the example instantiates",
}


def source(task: Task) -> str:
    """What the generator reproduces: the first paragraph of its module's docstring, which
    cites the paper and section (tasks/lego.py: "LEGO: ... (Zhang et al. 2022, ... §2)")."""
    doc = inspect.getmodule(type(task)).__doc__ or ""  # type: ignore[union-attr]
    text = " ".join(doc.strip().split("\n\n")[0].split())
    if text.endswith(":"):  # the paragraph leads into a quotation: its whole sentences alone
        ends = [i for i in range(len(text)) if text.startswith(". ", i)
                and text[:i].count('"') % 2 == 0]
        text = text[:ends[-1] + 1] if ends else text
    return text


def versions() -> dict[str, Any]:
    import reasonlab
    from reasonlab.store import provenance

    from importlib.metadata import PackageNotFoundError, version

    try:
        lab = version("reasonlab")
    except PackageNotFoundError:  # a checkout on PYTHONPATH, not installed
        lab = getattr(reasonlab, "__version__", None)
    return {"version": lab, "git_commit": provenance()["git_commit"],
            "results_version": RESULTS_VERSION}


def disjoint_text(task: Task) -> str:
    """What the card says of the held-out splits against train (tasks/disjoint.py)."""
    from reasonlab.tasks.disjoint import overlap

    why = overlap(task)
    if why is not None:
        return (f"**held-out rows may equal training rows**: {why}. Use these splits to "
                "reproduce that protocol, not to measure generalisation to unseen inputs.")
    return ("no `test` or `validation` row equals a `train` row (same token ids, features and "
            "read-out positions): held-out draws equal to a training example are left out, so "
            "a held-out split may hold a few rows fewer than asked.")


def card(task: Task, config: DataConfig, features: Any, sizes: dict[str, int],
         nbytes: dict[str, int], cols: Columns, first: str) -> str:
    """README.md: YAML front matter (configs, dataset_info, the generator's provenance) and a
    body saying what the data is, where it comes from and how to load it."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    info = DatasetInfo(features=features)
    info.splits = SplitDict()
    for name, n in sizes.items():
        info.splits.add(SplitInfo(name=name, num_bytes=nbytes[name], num_examples=n))
    info.download_size = info.dataset_size = sum(nbytes.values())
    name, lab = config.task.name, versions()
    corpus = getattr(config.task, "corpus", None)  # masked-LM windows: which corpus they cut
    title = f"{name} ({corpus})" if corpus else name
    data = DatasetCardData(
        pretty_name=f"reasonlab {title}",
        tags=["synthetic", "reasoning", "reasonlab", name, *([corpus] if corpus else [])],
        configs=[{"config_name": "default", "data_files": [
            {"split": s, "path": f"data/{s}-*"} for s in sizes]}],
        reasonlab={"task": config.task.model_dump(mode="json"), "seed": config.seed,
                   "n_train": config.n_train, "n_test": config.n_test, "n_val": config.n_val,
                   **lab})
    DatasetInfosDict({"default": info}).to_dataset_card_data(data)
    named = [*COLUMNS, *cols.meta]
    present = [c for c in features if c in named]
    column_rows = "\n".join(f"| `{c}` | {COLUMNS.get(c) or META.get(c, 'per-slot metadata')} |"
                            for c in present)
    classes = task.class_names()
    shown = ", ".join(f"`{c}`" for c in classes[:20]) + (
        f", ... ({len(classes)} in all)" if len(classes) > 20 else "")
    split_lines = "\n".join(f"| {s} | {n:,} |" for s, n in sizes.items())
    drawn = f"the de-duplicated training draw of {config.n_train:,} examples"
    splits_text = (f"`train` is the first {config.n_train - config.n_val:,} of {drawn} and "
                   f"`validation` its last {config.n_val:,}, held out of training as a run "
                   "holds them out" if config.n_val else f"`train` is {drawn}")
    return f"""---
{data.to_yaml()}
---

# reasonlab `{title}`

{source(task)}

Drawn by reasonlab's `{type(task).__module__}` generator exactly as a run with seed
{config.seed} draws its data (`train/loop.make_splits`): {splits_text}; {disjoint_text(task)}
The same config, seed and sizes give the same rows, bit for bit.

| split | examples |
|---|---|
{split_lines}

## Task config

```json
{json.dumps(config.task.model_dump(mode="json"), indent=1)}
```

Generator: reasonlab {lab['version']} (git commit {lab['git_commit']}),
RESULTS_VERSION {RESULTS_VERSION} (the version of reasonlab's results that run ids hash: data
drawn under one version are drawn alike by every release with the same number).

## Columns

Every labelled slot is one entry of the parallel lists `label_pos`, `labels`, `loss_mask`{
''.join(f", `{m}`" for m in cols.meta)}; slots a row does not use are left out (no nulls).

| column | what |
|---|---|
{column_rows}

Class names ({len(classes)}): {shown}.

## Loading

```python
from datasets import load_dataset
ds = load_dataset("parquet", data_dir="<this folder>")  # a DatasetDict of the splits
from transformers import AutoTokenizer  # the task's tokenizer (tokenizer.json)
tokenizer = AutoTokenizer.from_pretrained("<this folder>")  # text -> input_ids, exactly
import pandas as pd  # or pyarrow, polars, DuckDB: plain Parquet files
train = pd.read_parquet("<this folder>/{first}")  # the train split's first shard
```
"""
