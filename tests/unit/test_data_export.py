"""`reasonlab data export`: a run's splits as Parquet (data_export.py), read back without
reasonlab by `datasets` and pyarrow and compared with the examples the training loop draws
(train/loop.make_splits) and with each task's reference solver."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

from reasonlab import data_export  # noqa: E402
from reasonlab.cli import main  # noqa: E402
from reasonlab.errors import AssetError, ConfigError  # noqa: E402
from reasonlab.tasks.base import TASKS, build_task  # noqa: E402
from reasonlab.train.config import TrainConfig  # noqa: E402
from reasonlab.train.loop import make_splits  # noqa: E402
from reasonlab.train.seeds import DATA, seeds  # noqa: E402


def config(task: dict, n_train: int = 60, n_test: int = 20, n_val: int = 10,
           seed: int = 3) -> data_export.DataConfig:
    return data_export.DataConfig.build({"task": task, "n_train": n_train, "n_test": n_test,
                                         "n_val": n_val, "seed": seed})


def run_splits(c: data_export.DataConfig):
    """The splits a run with this data config trains and tests on (the training loop's own
    make_splits, given a whole TrainConfig)."""
    run = TrainConfig.build({**c.model_dump(), "model": {}})
    return make_splits(run, build_task(run.task))


def drawn(c: data_export.DataConfig, task):
    """A run's draw written out: the task's splits from the run's data stream, the last n_val
    of the training draw held out."""
    train, test = task.splits(np.random.default_rng(seeds(c.seed, DATA)), c.n_train, c.n_test)
    cut = c.n_train - c.n_val
    return train[:cut], train[cut:], test


def load(folder):
    from datasets import load_dataset

    # a cache of the test's own: nothing left in the user's ~/.cache, nothing stale read back
    return load_dataset("parquet", data_dir=str(folder), cache_dir=str(folder.parent / "hf"))


def assert_same_examples(rows, batch, task) -> None:
    """Every row is the batch's example: its input row, and its labelled slots (label_pos >= 0)
    with their labels, loss mask and metadata, in order."""
    assert len(rows) == len(batch)
    for i, row in enumerate(rows):
        assert row["input_ids"] == batch.tokens[i].tolist()
        assert row["tokens"] == task.vocab.decode(batch.tokens[i])
        assert row["readable"] == task.render(batch, i)
        # `text` is the input written out: the words of the ids, padding left out (characters
        # joined as they are, the character corpus's spaces and newlines among them)
        real = task.vocab.decode([t for t in batch.tokens[i].tolist() if t != 0])
        chars = all(len(t) == 1 for t in real)
        assert row["text"] == ("" if chars else " ").join(real)
        keep = batch.label_pos[i] >= 0
        assert row["label_pos"] == batch.label_pos[i][keep].tolist()
        assert row["labels"] == batch.labels[i][keep].tolist()
        assert row["loss_mask"] == batch.loss_mask[i][keep].tolist()
        for k, v in batch.meta.items():
            if v.shape == batch.label_pos.shape:
                assert row[k] == v[i][keep].tolist()
        if batch.pad_mask is not None:
            assert row["attention_mask"] == batch.pad_mask[i].tolist()
        if batch.features is not None:
            assert np.array_equal(np.asarray(row["features"], dtype=np.float32),
                                  batch.features[i].numpy())


def assert_tokenizer_round_trips(folder, ds) -> None:
    """The folder's own tokenizer, loaded as any Hugging Face one, turns every row's `text`
    into its `input_ids` (padding aside) and back."""
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    for split in ds.values():
        for row in split:
            real = [i for i in row["input_ids"] if i != 0]
            assert tok(row["text"])["input_ids"] == real
            assert tok.decode(real) == row["text"]
        assert tok.pad_token_id == 0


@pytest.mark.parametrize("task", [
    {"name": "lego", "n_clauses": 5, "n_train_vars": 3},
    # mixed lengths: padded rows and unused slots (label_pos -1), which the lists leave out
    {"name": "lego", "n_clauses": 6, "min_clauses": 3, "n_train_vars": 3},
])
def test_lego_export_loads_back_with_datasets_as_the_runs_own_examples(tmp_path, task):
    c = config(task)
    data_export.export(c, tmp_path / "ds", quiet=True)
    ds = load(tmp_path / "ds")
    lego = build_task(c.task)
    train, val, test = run_splits(c)
    assert set(ds) == {"train", "validation", "test"}
    for name, batch in (("train", train), ("validation", val), ("test", test)):
        assert_same_examples(ds[name], batch, lego)
    assert_tokenizer_round_trips(tmp_path / "ds", ds)
    # the labels' class names are the task's: the reference solver, reading the text alone,
    # gives every labelled variable the class name the row's label names
    names = ds["train"].features["labels"].feature.names
    assert names == list(lego.class_names())
    for row in ds["test"]:
        answer = lego.solve(row["readable"])
        got = {row["tokens"][p]: names[y] for p, y in zip(row["label_pos"], row["labels"])}
        assert got == answer
    # columnar readers: no nulls anywhere, labels a list column (the JSON-lines form made a
    # struct of one field per variable letter, mostly null)
    table = pq.read_table(next((tmp_path / "ds" / "data").glob("train-*.parquet")))
    for col in ("labels", "depth", "label_pos"):
        column = table.column(col).combine_chunks()
        assert str(column.type).startswith("list<")
        assert column.null_count == 0 and column.flatten().null_count == 0


def test_anchors_export_gets_the_tasks_examples_and_answers(tmp_path):
    c = config({"name": "anchors"}, n_train=200, n_test=50, n_val=0)
    data_export.export(c, tmp_path / "ds", quiet=True)
    ds = load(tmp_path / "ds")
    anchors = build_task(c.task)
    train, _, test = run_splits(c)
    assert set(ds) == {"train", "test"}  # no validation split without n_val
    assert_same_examples(ds["train"], train, anchors)
    assert_same_examples(ds["test"], test, anchors)
    names = ds["test"].features["labels"].feature.names
    for row in ds["test"]:  # the answer the reference solver computes from the text
        assert anchors.solve(row["readable"])["answer"] == names[row["labels"][0]]
    table = pq.read_table(next((tmp_path / "ds" / "data").glob("test-*.parquet")))
    assert all(table.column(c).null_count == 0 for c in table.column_names)


FAMILIES = [
    {"name": "templates", "preset": "same_different"},
    {"name": "templates", "preset": "copy", "symbolic": True, "n_train_symbols": 20,
     "n_val_symbols": 5, "n_test_symbols": 5},
    {"name": "bit_memory", "n_patterns": 2},
    {"name": "bit_xor"},
    {"name": "listops", "min_length": 20, "max_length": 200},
    {"name": "digits"},
    {"name": "fashion_mnist"},
    # MNIST reads the same four-IDX-file layout as Fashion-MNIST: that folder stands in for it
    {"name": "mnist", "path": "/usr/share/datasets/fashion-mnist"},
    {"name": "cifar10"},  # path: a folder of small binary batches the test writes
    {"name": "corpus_lm", "seq_len": 32},
    {"name": "mlm", "corpus": "nesting", "corpus_tokens": 5000, "seq_len": 24},
    {"name": "mlm", "corpus": "english", "seq_len": 24},
    {"name": "gloss_class"},
    {"name": "gloss_pair"},
    {"name": "programs"},
    {"name": "glue", "task": "mrpc"},  # path: a GLUE Parquet folder the test writes
]


def cifar_folder(folder):
    """CIFAR-10's binary version in miniature: 8 records (label byte, R, G, B planes) a file."""
    folder.mkdir()
    rng = np.random.default_rng(5)
    for name in [f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]:
        x, y = rng.integers(0, 256, (8, 3 * 32 * 32)), rng.integers(0, 10, 8)
        (folder / name).write_bytes(np.concatenate([y[:, None], x], 1).astype(np.uint8).tobytes())
    return folder


def glue_folder(folder):
    """nyu-mll/glue's layout in miniature: mrpc/{train,validation}-*.parquet."""
    rng = np.random.default_rng(6)
    words = ["the", "dog", "runs", "a", "cat", "sleeps", "good", "plan", "film", "bad"]
    (folder / "mrpc").mkdir(parents=True)
    for split, n in (("train", 40), ("validation", 12)):
        text = lambda: " ".join(rng.choice(words, 5))  # noqa: E731
        pq.write_table(pa.table({"sentence1": [text() for _ in range(n)],
                                 "sentence2": [text() for _ in range(n)],
                                 "label": rng.integers(0, 2, n).tolist()}),
                       folder / "mrpc" / f"{split}-00000-of-00001.parquet")
    return folder


@pytest.mark.parametrize("task", FAMILIES, ids=lambda t: "-".join(
    str(v) for k, v in t.items() if k in ("name", "preset", "corpus")))
def test_every_task_family_exports_the_runs_splits(tmp_path, task):
    if task["name"] == "cifar10":
        task = {**task, "path": str(cifar_folder(tmp_path / "cifar"))}
    if task["name"] == "glue":
        task = {**task, "path": str(glue_folder(tmp_path / "glue"))}
    try:
        c = config(task, n_train=24, n_test=8, n_val=4)
        data_export.export(c, tmp_path / "ds", quiet=True)
    except AssetError as e:
        pytest.skip(str(e))
    t = build_task(c.task)
    train, val, test = drawn(c, t)
    ds = load(tmp_path / "ds")
    for name, batch in (("train", train), ("validation", val), ("test", test)):
        assert_same_examples(ds[name], batch, t)
    assert ds["train"].features["labels"].feature.names == list(t.class_names())
    assert len(t.class_names()) == t.n_classes
    assert_tokenizer_round_trips(tmp_path / "ds", ds)
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "dataset_info:" in card and "results_version: " in card
    if "corpus" in task:  # masked-LM windows name the corpus they cut
        assert f"# reasonlab `mlm ({task['corpus']})`" in card
    cited = data_export.source(t)  # what it reproduces: a paper, in whole sentences
    assert cited in card and cited.endswith((".", ")")) and re.search(r"\b(19|20)\d\d\b", cited)


def test_every_registered_task_is_exported_above():
    assert {t["name"] for t in FAMILIES} | {"lego", "anchors"} == set(TASKS)


def test_a_large_split_is_written_in_shards_of_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(data_export, "CHUNK_ROWS", 7)
    monkeypatch.setattr(data_export, "SHARD_BYTES", 4000)  # a few dozen LEGO rows a shard
    c = config({"name": "lego", "n_clauses": 5, "n_train_vars": 3}, n_train=150, n_test=30,
               n_val=0)
    data_export.export(c, tmp_path / "ds", quiet=True)
    shards = sorted((tmp_path / "ds" / "data").glob("train-*.parquet"))
    n = len(shards)
    assert n > 1 and [p.name for p in shards] == [
        f"train-{k:05d}-of-{n:05d}.parquet" for k in range(n)]
    assert pq.ParquetFile(shards[0]).metadata.num_row_groups > 1  # written a chunk at a time
    train = run_splits(c)[0]
    ds = load(tmp_path / "ds")
    assert_same_examples(ds["train"], train, build_task(c.task))


def test_cli_export_and_its_one_line_errors(tmp_path, capsys):
    out = tmp_path / "lego"
    assert main(["data", "export", "lego", "n_clauses=4", "n_train_vars=2", "--n-train", "30",
                 "--n-test", "10", "--seed", "2", "--out", str(out), "--quiet"]) == 0
    assert "train 30, test 10 examples of lego (seed 2)" in capsys.readouterr().out
    meta = (out / "README.md").read_text()
    assert "seed: 2" in meta and "n_clauses: 4" in meta
    # a run folder's (or config file's) data: the same rows
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(
        {"task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2}, "model": {}, "seed": 2,
         "n_train": 30, "n_test": 10}))
    assert main(["data", "export", "--config", str(run), "--out", str(tmp_path / "again"),
                 "--quiet"]) == 0
    for split in ("train", "test"):
        a = pq.read_table(next((out / "data").glob(f"{split}-*")))
        b = pq.read_table(next((tmp_path / "again" / "data").glob(f"{split}-*")))
        assert a.equals(b)
    capsys.readouterr()
    before = sorted(p.name for p in out.rglob("*"))
    for argv, words in [
        (["data", "export", "lego", "--out", str(out)], "not empty"),  # never written into
        (["data", "export", "lego"], "needs --out"),
        (["data", "export", "--out", str(tmp_path / "x")], "name the task"),
        (["data", "export", "nosuch", "--out", str(tmp_path / "x")], "nosuch"),
        (["data", "export", "lego", "--n", "3", "--out", str(tmp_path / "x")], "--n-train"),
        (["data", "lego", "--out", str(tmp_path / "x")], "data export"),
        (["data", "export", "corpus", "nesting", "--out", str(tmp_path / "x")], "mlm corpus="),
        (["data", "export", "lego", "n_clauses=2", "n_train_vars=2", "--n-train", "999999", "--out",
          str(tmp_path / "x")], "distinct"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert sorted(p.name for p in out.rglob("*")) == before
    assert not (tmp_path / "x").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failed_export_leaves_nothing(tmp_path, monkeypatch):
    calls = []

    def broken(*a, **kw):
        calls.append(1)
        if len(calls) > 1:
            raise ConfigError("disk full, say")
        return real(*a, **kw)

    real = data_export.chunk_table
    monkeypatch.setattr(data_export, "chunk_table", broken)
    out = tmp_path / "ds"
    out.mkdir()  # an empty folder the user made stays as it was
    with pytest.raises(ConfigError):
        data_export.export(config({"name": "lego", "n_clauses": 4, "n_train_vars": 2}), out,
                           quiet=True)
    assert out.is_dir() and not any(out.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
