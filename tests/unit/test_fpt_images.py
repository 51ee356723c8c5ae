"""Image tasks as patch sequences: the IDX and CIFAR-10 binary readers on small files written
here, patches against a loop over pixels, the datasets' own splits, and missing-asset errors."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

from reasonlab.errors import AssetError, ConfigError, ParseError
from reasonlab.tasks.base import build_task
from reasonlab.tasks.images import read_cifar_bin, read_idx

FASHION = Path("/usr/share/datasets/fashion-mnist")


def write_idx(path: Path, array: np.ndarray) -> None:
    """IDX as the MNIST page describes it: 0, 0, type 0x08 (ubyte), rank, big-endian sizes."""
    head = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I",
                                                                       *array.shape)
    data = head + array.astype(np.uint8).tobytes()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)


def mnist_folder(root: Path, rng, n_train=7, n_test=5, gz=True):
    sfx = ".gz" if gz else ""
    arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28)),
              "train-labels-idx1-ubyte": rng.integers(0, 10, n_train),
              "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28)),
              "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test)}
    for name, a in arrays.items():
        write_idx(root / f"{name}{sfx}", a)
    return arrays


def patches_by_loops(image: np.ndarray, p: int) -> np.ndarray:
    """[C, H, W] -> [(H/p)(W/p), p*p*C] walking pixels: patches in raster order, each row by row,
    the channel innermost (the paper's 4x4 patches, the authors' flattening)."""
    C, H, W = image.shape
    out = []
    for r in range(0, H, p):
        for c in range(0, W, p):
            out.append([image[ch, r + i, c + j] for i in range(p) for j in range(p)
                        for ch in range(C)])
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_round_trip(tmp_path, gz):
    a = np.random.default_rng(0).integers(0, 256, (3, 5, 4))
    path = tmp_path / ("x.idx.gz" if gz else "x.idx")
    write_idx(path, a)
    assert (read_idx(path) == a).all() and read_idx(path).shape == (3, 5, 4)
    path.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ConfigError, match="cannot read" if gz else "not an IDX"):
        read_idx(path)


def test_mnist_task_on_written_files_matches_the_papers_patches(tmp_path):
    # "Input: sequence of 4x4 patches over a ... black-and-white image of a handwritten digit.
    # Output: the classification of the input digit" (FPT, "Evaluation tasks - 4. MNIST"):
    # 28x28 images as the authors' code cuts them: 49 patches of 16 pixels.
    arrays = mnist_folder(tmp_path, np.random.default_rng(1))
    task = build_task({"name": "mnist", "path": str(tmp_path)})
    assert (task.seq_len, task.d_input, task.n_classes, task.outputs_per_token) == (49, 16, 10, 1)
    tr, te = task.splits(np.random.default_rng(2), 7, 5)
    for batch, images, labels in ((tr, arrays["train-images-idx3-ubyte"],
                                   arrays["train-labels-idx1-ubyte"]),
                                  (te, arrays["t10k-images-idx3-ubyte"],
                                   arrays["t10k-labels-idx1-ubyte"])):
        assert batch.features.shape == (len(images), 49, 16)
        assert (batch.label_pos == 48).all() and (batch.tokens == 1).all()
        # every drawn example is one image of that split, with its own label, exactly once
        matched = set()
        for i in range(len(batch)):
            k = next(k for k in range(len(images))
                     if np.allclose(batch.features[i].numpy(),
                                    patches_by_loops(images[k][None], 4) / 255))
            assert int(batch.labels[i, 0]) == labels[k]
            matched.add(k)
        assert matched == set(range(len(images)))
    with pytest.raises(ConfigError, match="from a train split of 7"):
        task.splits(np.random.default_rng(2), 8, 1)


def test_cifar10_binary_batches(tmp_path):
    # "Input: sequence of 4x4 patches over a 32x32 colored images of 10 different classes"
    # (FPT, "Evaluation tasks - 5. CIFAR-10"): 64 patches of 4 x 4 x 3 = 48 values.
    rng = np.random.default_rng(3)
    images, labels = {}, {}
    for name in [f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]:
        x, y = rng.integers(0, 256, (2, 3, 32, 32)), rng.integers(0, 10, 2)
        rec = np.concatenate([y[:, None], x.reshape(2, -1)], axis=1).astype(np.uint8)
        (tmp_path / name).write_bytes(rec.tobytes())  # record: label byte, R, G, B planes
        images[name], labels[name] = x, y
    task = build_task({"name": "cifar10", "path": str(tmp_path)})
    assert (task.seq_len, task.d_input) == (64, 48)
    tr, te = task.splits(np.random.default_rng(4), 10, 2)
    mean, std = np.array([0.4914, 0.4822, 0.4465]), np.array([0.2023, 0.1994, 0.2010])
    test_x = images["test_batch.bin"]
    for i in range(2):
        k = next(k for k in range(2) if labels["test_batch.bin"][k] == int(te.labels[i, 0])
                 and np.allclose(te.features[i].numpy(), patches_by_loops(
                     (test_x[k] / 255 - mean[:, None, None]) / std[:, None, None], 4), atol=1e-5))
        assert k in (0, 1)
    assert sorted(tr.labels.flatten().tolist()) == sorted(
        np.concatenate([labels[f"data_batch_{k}.bin"] for k in range(1, 6)]).tolist())
    (tmp_path / "bad.bin").write_bytes(b"\0" * 100)
    with pytest.raises(ConfigError, match="3073-byte"):
        read_cifar_bin(tmp_path / "bad.bin")


@pytest.mark.parametrize("name", ["mnist", "cifar10", "fashion_mnist"])
def test_absent_datasets_say_how_to_get_them(tmp_path, name):
    task = build_task({"name": name, "path": str(tmp_path / "nothing")})
    with pytest.raises(AssetError) as err:
        task.sample(np.random.default_rng(0), 1)
    msg = str(err.value)
    assert "\n" not in msg and "task.path" in msg
    assert {"mnist": "MNIST", "cifar10": "cifar-10-binary", "fashion_mnist": "apt-get"}[name] in msg


def test_digits_fixed_split_and_patches():
    from sklearn.datasets import load_digits

    task = build_task({"name": "digits"})
    assert (task.seq_len, task.d_input) == (16, 4)
    x_tr, y_tr, x_te, y_te = task.load()
    assert (len(y_tr), len(y_te)) == (1438, 359)
    # the split is a partition of sklearn's 1797 images, fixed by split_seed (not the run seed)
    ref = load_digits()
    rows = sorted(r.tobytes() for r in np.concatenate([x_tr, x_te]).reshape(1797, 64)
                  .astype(np.float64))
    assert rows == sorted(r.tobytes() for r in ref.data.astype(np.float64))
    tr, te = task.splits(np.random.default_rng(5), 1438, 359)
    assert sorted(te.labels.flatten().tolist()) == sorted(y_te.tolist())
    i = 0
    k = next(k for k in range(len(y_te)) if np.allclose(
        te.features[i].numpy(), patches_by_loops(x_te[k].astype(float), 2) / 16))
    assert y_te[k] == int(te.labels[i, 0])
    with pytest.raises(ParseError):
        task.solve(task.render(te, 0))
    with pytest.raises(ConfigError, match="does not tile"):
        build_task({"name": "digits", "patch": 3})


@pytest.mark.skipif(not FASHION.exists(), reason="dataset-fashion-mnist is not installed")
def test_fashion_mnist_package_files():
    labels = read_idx(FASHION / "t10k-labels-idx1-ubyte.gz")
    images = read_idx(FASHION / "t10k-images-idx3-ubyte.gz")
    assert images.shape == (10000, 28, 28) and labels.shape == (10000,)
    assert np.bincount(labels).tolist() == [1000] * 10  # Fashion-MNIST's balanced test set
    task = build_task({"name": "fashion_mnist"})
    assert (task.seq_len, task.d_input) == (49, 16) and task.classes[9] == "Ankle boot"
