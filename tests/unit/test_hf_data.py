"""The papers' own data from local files (tasks/hf_data.py, images.py, glue.py, corpora.py): tiny
files written here in each format -- a Hugging Face datasets folder (Parquet, Arrow), the Hub
cache layout, the datasets' raw files -- load as the studies' tasks, with the values written."""

from __future__ import annotations

import io

import numpy as np
import pytest

from reasonlab.errors import AssetError
from reasonlab.tasks.base import build_task

pa = pytest.importorskip("pyarrow", reason="pyarrow not installed ('reasonlab[data]')")
pq = pytest.importorskip("pyarrow.parquet")


def png(img: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def images(n: int, shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, *shape), dtype=np.uint8), rng.integers(0, 10, n)


def write_image_parquet(folder, column: str, shape, n=(30, 12)) -> dict:
    """The Hub's layout: plain_text/{train,test}-00000-of-00001.parquet, images as PNG bytes."""
    written = {}
    for split, k in zip(("train", "test"), n, strict=True):
        x, y = images(k, shape, seed=len(split))
        (folder / "plain_text").mkdir(parents=True, exist_ok=True)
        table = pa.table({column: [{"bytes": png(i), "path": None} for i in x],
                          "label": y.tolist()})
        pq.write_table(table, folder / "plain_text" / f"{split}-00000-of-00001.parquet")
        written[split] = (x, y)
    return written


def as_images(task, batch, shape) -> np.ndarray:
    """The batch's patches back to uint8 images (undoing the task's scaling)."""
    C, H, W = task.image_shape
    p = task.config.patch
    f = batch.features.numpy().reshape(len(batch.labels), H // p, W // p, p, p, C)
    return f.transpose(0, 5, 1, 3, 2, 4).reshape(-1, C, H, W)


def test_cifar10_from_a_hub_cache_parquet_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snap = tmp_path / "hub" / "datasets--uoft-cs--cifar10" / "snapshots" / "c0ffee"
    written = write_image_parquet(snap, "img", (32, 32, 3))
    task = build_task({"name": "cifar10", "path": str(tmp_path / "absent-default")})
    with pytest.raises(AssetError, match="no folder"):  # a path the user gave must exist
        task.load()
    task = build_task({"name": "cifar10"})  # the default folder is absent: the cache is read
    x_tr, y_tr, x_te, y_te = task.load()
    want_x, want_y = written["train"]
    assert x_tr.shape == (30, 3, 32, 32)
    np.testing.assert_array_equal(x_tr, want_x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(y_tr, want_y)
    assert len(y_te) == 12
    found, where = type(task).data_source(task.config)
    assert found and "c0ffee" in where


def test_mnist_from_a_parquet_folder_and_from_arrow(tmp_path):
    written = write_image_parquet(tmp_path / "pq", "image", (28, 28))
    task = build_task({"name": "mnist", "path": str(tmp_path / "pq")})
    batch = task.sample(np.random.default_rng(0), 5, "test")
    x, y = written["test"]
    got = np.rint(as_images(task, batch, (1, 28, 28)) * 255).astype(np.uint8)
    # each drawn image is one of the written ones, with its label
    for img, label in zip(got, batch.labels[:, 0].tolist(), strict=True):
        k = next(i for i in range(len(x)) if (x[i] == img[0]).all())
        assert y[k] == label
    # the same data as `Dataset.save_to_disk` writes it: <split>/data-00000-of-00001.arrow
    for split, (xs, ys) in written.items():
        (tmp_path / "arrow" / split).mkdir(parents=True)
        table = pa.table({"image": [{"bytes": png(i), "path": None} for i in xs],
                          "label": ys.tolist()})
        with pa.OSFile(str(tmp_path / "arrow" / split / "data-00000-of-00001.arrow"), "wb") as f:
            with pa.ipc.new_stream(f, table.schema) as w:
                w.write_table(table)
    arrow = build_task({"name": "mnist", "path": str(tmp_path / "arrow")}).load()
    np.testing.assert_array_equal(arrow[0][:, 0], written["train"][0])


def test_cifar10_binary_files_still_load(tmp_path):
    rng = np.random.default_rng(0)
    for f in [*(f"data_batch_{k}.bin" for k in range(1, 6)), "test_batch.bin"]:
        rec = np.concatenate([rng.integers(0, 10, (4, 1)), rng.integers(0, 256, (4, 3072))], 1)
        rec.astype(np.uint8).tofile(tmp_path / f)
    x_tr, y_tr, x_te, y_te = build_task({"name": "cifar10", "path": str(tmp_path)}).load()
    assert x_tr.shape == (20, 3, 32, 32) and x_te.shape == (4, 3, 32, 32)


def write_glue(folder, task: str, columns: dict[str, list]) -> None:
    (folder / task).mkdir(parents=True, exist_ok=True)
    for split in ("train", "validation_matched" if task == "mnli" else "validation"):
        pq.write_table(pa.table(columns), folder / task / f"{split}-00000-of-00001.parquet")


def test_glue_parquet_folder_loads_as_the_task(tmp_path):
    write_glue(tmp_path, "sst2", {"sentence": ["a good film", "a bad plan", "the dog runs",
                                               "hidden"],
                                  "label": [1, 0, 1, -1], "idx": [0, 1, 2, 3]})
    task = build_task({"name": "glue", "task": "sst2", "path": str(tmp_path), "words": 300,
                       "seq_len": 8})
    batch = task.sample(np.random.default_rng(0), 3)
    assert task.n_classes == 2 and batch.tokens.shape == (3, 8)
    by_row = {tuple(task.encode((t,)).tolist()): y for t, y in
              (("a good film", 1), ("a bad plan", 0), ("the dog runs", 1))}
    assert len(by_row) == 3  # the three sentences encode apart
    for i in range(3):  # each drawn row is a written sentence with its label (never -1's)
        assert by_row[tuple(batch.tokens[i].tolist())] == int(batch.labels[i, 0])
    assert int(batch.tokens[0, 0]) == 2 and int(batch.pad_mask[0].sum()) == 5  # [CLS] 3 [SEP]
    with pytest.raises(Exception, match="holds 3 examples"):
        task.sample(np.random.default_rng(0), 4)


def test_glue_pairs_and_stsb_grades(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snap = tmp_path / "hub" / "datasets--nyu-mll--glue" / "snapshots" / "1"
    write_glue(snap, "stsb", {"sentence1": ["a cat", "a dog sat"], "sentence2": ["a cat", "x"],
                              "label": [4.6, 1.25], "idx": [0, 1]})
    task = build_task({"name": "glue", "task": "stsb", "words": 300, "seq_len": 10})
    found, _ = type(task).data_source(task.config)
    assert found
    batch = task.sample(np.random.default_rng(0), 2)
    rows = {tuple(batch.tokens[i].tolist()): i for i in range(2)}
    cat = rows[tuple(task.encode(("a cat", "a cat")).tolist())]
    assert int(batch.labels[cat, 0]) == 4 and int(batch.meta["score"][cat, 0]) == 460
    dog = rows[tuple(task.encode(("a dog sat", "x")).tolist())]
    assert int(batch.labels[dog, 0]) == 1 and int(batch.meta["score"][dog, 0]) == 125
    assert (batch.tokens[cat] == 3).sum() == 2  # two [SEP]s


def test_wikitext_raw_files_and_parquet(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "wiki.train.raw").write_text(" = Valkyria = \n Senjō no Valkyria 3 \n" * 5)
    (raw / "wiki.valid.raw").write_text(" = Robert = \n Boulter is an English actor \n" * 3)
    task = build_task({"name": "corpus_lm", "source": "wikitext103", "path": str(raw),
                       "seq_len": 12})
    assert task.n_classes == 257  # bytes + padding: fixed before the text is read
    batch = task.sample(np.random.default_rng(0), 4, "test")
    text = bytes((batch.tokens[0].numpy() - 1).astype(np.uint8)).decode("utf-8")
    assert text in (" = Robert = \n Boulter is an English actor \n" * 3)
    train = task._ids["train"]
    assert bytes((train - 1).astype(np.uint8)).decode("utf-8").startswith(" = Valkyria")
    hf = tmp_path / "hf" / "wikitext-103-raw-v1"
    hf.mkdir(parents=True)
    for split, text in (("train", " = Valkyria = \n" * 9), ("validation", " = R = \n" * 9)):
        lines = text.splitlines(keepends=True)
        pq.write_table(pa.table({"text": lines}), hf / f"{split}-00000-of-00001.parquet")
    task = build_task({"name": "corpus_lm", "source": "wikitext103",
                       "path": str(tmp_path / "hf"), "seq_len": 12})
    assert bytes((task._ids["test"] - 1).astype(np.uint8)).decode() == " = R = \n" * 9
