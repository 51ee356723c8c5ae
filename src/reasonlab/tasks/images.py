"""Image classification as sequences of patches, the FPT paper's vision tasks (Lu et al. 2021;
docs/papers.md §4, §5.4). Section "Evaluation tasks - 4. MNIST":

    "Input: sequence of 4x4 patches over a 32x32 black-and-white image of a handwritten digit.
    Output: the classification of the input digit"

and "5. CIFAR-10": "Input: sequence of 4x4 patches over a 32x32 colored images of 10 different
classes". MNIST images are 28x28, and the authors' code cuts them as they are: 49 patches of 16
pixels (CIFAR-10: 64 patches of 4 x 4 x 3 = 48 values). A patch is flattened row by row with the
channel innermost (their `b c (h p1) (w p2) -> b (h w) (p1 p2 c)`), patches in raster order.
Scaling as theirs: grey pixels / 255 (MNIST, Fashion-MNIST; digits / 16), CIFAR-10 standardised
per channel with their constants; their CIFAR training augmentation (crops, flips, rotations) is
not applied. The label sits on the last patch (their model reads the last token).

Datasets, each a registered task with its datasets' own train / test split:
- `digits`: scikit-learn's 8x8 digits (1797 images, values 0-16). It is the test half of the
  UCI optdigits set and has no split of its own: a fixed shuffle (split_seed) holds out
  test_fraction. Default patch 2: 16 patches of 4 pixels.
- `fashion_mnist`: 60k / 10k 28x28 images from the Debian package dataset-fashion-mnist (IDX
  files; scripts/setup.sh installs it).
- `mnist`: the four MNIST IDX files, from a folder the user fills (no offline package exists).
- `cifar10`: the binary version, `cifar-10-batches-bin` (data_batch_1..5.bin, test_batch.bin:
  records of 1 label byte + 3072 pixel bytes); the python version is pickles, which the project
  never loads.

The examples of a split are drawn without replacement from the dataset's split; the labels are
the dataset's, so there is no text solver: `render` draws the image in characters and `solve`
refuses.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from reasonlab.errors import AssetError, ConfigError, ParseError
from reasonlab.tasks.base import TASKS, Batch, Split, Task, TaskConfig
from reasonlab.tasks.patches import PATCH_VOCAB, feature_batch

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # train x, y, test x, y
SHADES = " .:-=+*#%@"
MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
               "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
CIFAR_TRAIN = tuple(f"data_batch_{k}.bin" for k in range(1, 6))
CIFAR_TEST = "test_batch.bin"
# The authors' CIFAR-10 normalisation (datasets/cifar10.py), per channel R, G, B.
CIFAR_MEAN = np.array([0.4914, 0.4822, 0.4465], dtype=np.float32)
CIFAR_STD = np.array([0.2023, 0.1994, 0.2010], dtype=np.float32)


# ---------------------------------------------------------------------- file formats

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (MNIST's format; gzip-compressed when named .gz) as an array.

    Hand-written because the format is a 4-byte magic (0, 0, dtype code, rank), rank big-endian
    int32 sizes, then the data; the one library that reads it (torchvision) is not a dependency.
    """
    try:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        raise ConfigError(f"{path}: cannot read ({e})") from None
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in _IDX_DTYPES:
        raise ConfigError(f"{path}: not an IDX file (bad magic number)")
    rank = raw[3]
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">i4", count=rank, offset=4))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    start = 4 + 4 * rank
    if len(raw) - start != dtype.itemsize * int(np.prod(shape)):
        raise ConfigError(f"{path}: IDX size mismatch: header says {shape}, file has "
                          f"{len(raw) - start} data bytes")
    data = np.frombuffer(raw, dtype=dtype, offset=start).reshape(shape)
    return data.astype(dtype.newbyteorder("="))  # native byte order


def read_cifar_bin(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A CIFAR-10 binary batch: images [N, 3, 32, 32] uint8 and labels [N]."""
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size % 3073:
        raise ConfigError(f"{path}: {raw.size} bytes is not a whole number of 3073-byte "
                          "CIFAR-10 records")
    rec = raw.reshape(-1, 3073)
    return rec[:, 1:].reshape(-1, 3, 32, 32), rec[:, 0].astype(np.int64)


def _find(folder: Path, stem: str) -> Path | None:
    """`stem` or `stem.gz` in folder."""
    for p in (folder / stem, folder / f"{stem}.gz"):
        if p.exists():
            return p
    return None


@functools.lru_cache(maxsize=4)
def load_idx_folder(folder: str, how_to_get: str) -> Arrays:
    """MNIST-layout folder (train-images-idx3-ubyte[.gz], ...) -> images [N,1,28,28], labels."""
    out = []
    for split in ("train", "test"):
        for stem in MNIST_FILES[split]:
            path = _find(Path(folder).expanduser(), stem)
            if path is None:
                raise AssetError(f"{Path(folder) / stem}[.gz] not found; {how_to_get}")
            out.append(read_idx(path))
    x_tr, y_tr, x_te, y_te = out
    return x_tr[:, None], y_tr.astype(np.int64), x_te[:, None], y_te.astype(np.int64)


HUB: dict[str, tuple[str, ...]] = {"mnist": ("ylecun/mnist", "mnist"),
                                   "cifar10": ("uoft-cs/cifar10", "cifar10")}
"""The datasets' names on the Hugging Face Hub (and their older ones), looked up in the local
cache when the task's default folder is absent (tasks/hf_data.py)."""


@functools.lru_cache(maxsize=4)
def load_hf_images(folder: str, channels: int, what: str) -> Arrays:
    """A Hugging Face datasets folder (Parquet or Arrow: the image column `img` or `image`,
    `label`) -> train images [N, C, H, W] uint8, labels, test images, labels."""
    from reasonlab.tasks.hf_data import decode_images, read_split

    out = []
    for split in ("train", "test"):
        cols = read_split(Path(folder), split, ["img|image", "label"], what)
        out += [decode_images(cols["img|image"], channels),
                np.asarray(cols["label"], dtype=np.int64)]
    return out[0], out[1], out[2], out[3]


def locate_images(config: ImageConfig, default: str, how: str) -> tuple[str, Path]:
    """Where an image task's files are: ("hf", a datasets folder or cache snapshot) or ("raw",
    the dataset's own files). The configured folder when it exists; at the default path, the
    Hub cache next; AssetError naming both and `how` to get the files otherwise."""
    from reasonlab.tasks.hf_data import dataset_folder, has_hf_files

    folder = Path(config.path).expanduser()  # type: ignore[attr-defined]
    if folder.is_dir():
        return ("hf" if has_hf_files(folder) else "raw"), folder
    if config.path != default:  # type: ignore[attr-defined]
        raise AssetError(f"{config.name}: no folder {folder}; {how}")
    try:
        return "hf", dataset_folder(None, HUB[config.name], config.name, how)
    except AssetError as e:
        raise AssetError(f"{config.name}: neither {folder} nor a Hugging Face cache entry: "
                         f"{e}") from None


def image_source(config: ImageConfig, default: str, how: str) -> tuple[bool, str]:
    """(found, where) for the studies' pre-flight (kit/assets.py)."""
    try:
        kind, folder = locate_images(config, default, how)
    except AssetError as e:
        return False, str(e)
    return True, f"{folder} ({'Hugging Face datasets folder' if kind == 'hf' else 'raw files'})"


@functools.lru_cache(maxsize=2)
def load_cifar_folder(folder: str) -> Arrays:
    root = Path(folder).expanduser()
    missing = [f for f in (*CIFAR_TRAIN, CIFAR_TEST) if not (root / f).exists()]
    if missing:
        raise AssetError(f"{root / missing[0]} not found; download cifar-10-binary.tar.gz "
                         "(https://www.cs.toronto.edu/~kriz/cifar.html), extract it and set "
                         "task.path to its cifar-10-batches-bin folder")
    train = [read_cifar_bin(root / f) for f in CIFAR_TRAIN]
    x_te, y_te = read_cifar_bin(root / CIFAR_TEST)
    return (np.concatenate([x for x, _ in train]), np.concatenate([y for _, y in train]),
            x_te, y_te)


def to_patches(images: np.ndarray, patch: int) -> np.ndarray:
    """[N, C, H, W] -> [N, (H/p)(W/p), p*p*C]: raster order of patches, each row by row with
    the channel innermost (the authors' `b c (h p1) (w p2) -> b (h w) (p1 p2 c)`)."""
    N, C, H, W = images.shape
    x = images.reshape(N, C, H // patch, patch, W // patch, patch)  # n c h p1 w p2
    return x.transpose(0, 2, 4, 3, 5, 1).reshape(N, (H // patch) * (W // patch), -1)


# ---------------------------------------------------------------------- tasks


class ImageConfig(TaskConfig):
    """Common fields of the image tasks."""

    patch: int = Field(4, gt=0)
    """Side of the square patches, in pixels (the paper: 4)."""


class ImageTask(Task):
    """Classify an image given as a sequence of patches. Subclasses name the dataset: `load`
    returns its own train / test split, `classes` its class names."""

    Config: ClassVar[type[ImageConfig]]
    classes: ClassVar[tuple[str, ...]]
    image_shape: ClassVar[tuple[int, int, int]]  # (C, H, W)
    vocab = PATCH_VOCAB
    outputs_per_token = 1

    def __init__(self, config: ImageConfig):
        self.config = config
        C, H, W = self.image_shape
        if H % config.patch or W % config.patch:
            raise ConfigError(f"task.patch={config.patch} does not tile {H}x{W} images; "
                              "pick a divisor")
        self.d_input = config.patch**2 * C

    def load(self) -> Arrays:
        """Train images [N, C, H, W] (any dtype), labels [N], test images, labels."""
        raise NotImplementedError

    def scale(self, images: np.ndarray) -> np.ndarray:
        """Pixel values as the model sees them, float32 (grey: / 255)."""
        return images.astype(np.float32) / 255.0

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def class_names(self) -> tuple[str, ...]:
        return tuple(self.classes)

    @property
    def seq_len(self) -> int:
        _, H, W = self.image_shape
        return (H // self.config.patch) * (W // self.config.patch)

    def _batch(self, images: np.ndarray, labels: np.ndarray) -> Batch:
        n = len(labels)
        return feature_batch(to_patches(self.scale(images), self.config.patch),
                             label_pos=np.full((n, 1), self.seq_len - 1), labels=labels[:, None])

    def _draw(self, rng: np.random.Generator, x: np.ndarray, y: np.ndarray, n: int,
              split: str) -> Batch:
        if n > len(y):
            raise ConfigError(f"{self.config.name}: {n} examples asked from a {split} split of "
                              f"{len(y)}; lower it")
        idx = rng.choice(len(y), size=n, replace=False)
        return self._batch(x[idx], y[idx])

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        """n distinct images of the dataset's `split`."""
        x_tr, y_tr, x_te, y_te = self.load()
        x, y = (x_tr, y_tr) if split == "train" else (x_te, y_te)
        return self._draw(rng, x, y, n, split)

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """n_train images of the dataset's training split and n_test of its test split."""
        x_tr, y_tr, x_te, y_te = self.load()
        return (self._draw(rng, x_tr, y_tr, n_train, "train"),
                self._draw(rng, x_te, y_te, n_test, "test"))

    def render(self, batch: Batch, i: int) -> str:
        """A header line, then the image in characters (channel mean, darkest ' ' to brightest
        '@')."""
        assert batch.features is not None
        C, H, W = self.image_shape
        p = self.config.patch
        x = batch.features[i].numpy().reshape(H // p, W // p, p, p, C)
        grey = x.transpose(0, 2, 1, 3, 4).reshape(H, W, C).mean(-1)
        lo, hi = grey.min(), grey.max()
        level = np.zeros_like(grey, dtype=int) if hi == lo else (
            (grey - lo) / (hi - lo) * (len(SHADES) - 1)).round().astype(int)
        head = f"[{H}x{W}x{C} image, {self.seq_len} patches of {p}x{p}x{C}]"
        return "\n".join([head, *("".join(SHADES[v] for v in row) for row in level)])

    def solve(self, text: str) -> dict[str, str]:
        raise ParseError(f"{self.config.name}: the label comes from the dataset; an image task "
                         "has no text solver")

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        return {"text": self.render(batch, i),
                "labels": {"class": self.classes[int(batch.labels[i, 0])]}}


class DigitsConfig(ImageConfig):
    """scikit-learn's 8x8 digits; a fixed held-out part is the test split."""

    name: Literal["digits"] = "digits"
    patch: int = Field(2, gt=0)
    """Side of the square patches (8x8 images: 2 -> 16 patches of 4 pixels)."""
    test_fraction: float = Field(0.2, gt=0, lt=1)
    """Fraction of the 1797 images held out as the test split."""
    split_seed: int = 0
    """Seed of the fixed shuffle that makes the split (a property of the task, not the run)."""


@TASKS.register("digits")
class DigitsTask(ImageTask):
    Config = DigitsConfig
    config: DigitsConfig
    classes = tuple(str(d) for d in range(10))
    image_shape = (1, 8, 8)

    def load(self) -> Arrays:
        return _digits(self.config.test_fraction, self.config.split_seed)

    def scale(self, images: np.ndarray) -> np.ndarray:
        return images.astype(np.float32) / 16.0  # digits' pixel values are 0..16


@functools.lru_cache(maxsize=2)
def _digits(test_fraction: float, split_seed: int) -> Arrays:
    from sklearn.datasets import load_digits  # shipped inside scikit-learn, no download

    d = load_digits()
    x, y = d.images.astype(np.uint8)[:, None], d.target.astype(np.int64)
    order = np.random.default_rng(split_seed).permutation(len(y))
    n_test = round(test_fraction * len(y))
    te, tr = order[:n_test], order[n_test:]
    return x[tr], y[tr], x[te], y[te]


class FashionMnistConfig(ImageConfig):
    """Fashion-MNIST 28x28 (Debian dataset-fashion-mnist), 4x4 patches."""

    name: Literal["fashion_mnist"] = "fashion_mnist"
    path: str = "/usr/share/datasets/fashion-mnist"
    """Folder of the four IDX files (train-images-idx3-ubyte.gz, ...)."""


class IdxImageTask(ImageTask):
    """28x28 grey images from a folder of the four MNIST-layout IDX files (`config.path`), or
    (MNIST) a Hugging Face datasets folder or cache entry."""

    image_shape = (1, 28, 28)
    how_to_get: ClassVar[str]
    """The end of the missing-file error: how to obtain the files."""

    def load(self) -> Arrays:
        if self.config.name in HUB:
            kind, folder = locate_images(self.config, self.Config().path, self.how_to_get)
            if kind == "hf":
                return load_hf_images(str(folder), 1, self.config.name)
        return load_idx_folder(self.config.path, self.how_to_get)  # type: ignore[attr-defined]

    @classmethod
    def data_source(cls, config: ImageConfig) -> tuple[bool, str]:
        """(found, where) of the task's files (kit/assets.py)."""
        if config.name not in HUB:
            found = Path(config.path).expanduser().is_dir()  # type: ignore[attr-defined]
            where = str(config.path) if found else cls.how_to_get  # type: ignore[attr-defined]
            return found, where
        return image_source(config, cls.Config().path, cls.how_to_get)


@TASKS.register("fashion_mnist")
class FashionMnistTask(IdxImageTask):
    Config = FashionMnistConfig
    classes = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")
    how_to_get = ("install the Debian package dataset-fashion-mnist (`apt-get install "
                  "dataset-fashion-mnist`, which scripts/setup.sh does) or set task.path to a "
                  "folder holding its four IDX files")


class MnistConfig(ImageConfig):
    """MNIST 28x28 from its IDX files, 4x4 patches (the paper's 49 patches)."""

    name: Literal["mnist"] = "mnist"
    path: str = "~/.cache/reasonlab/mnist"
    """Folder of the four MNIST IDX files (plain or .gz)."""


@TASKS.register("mnist")
class MnistTask(IdxImageTask):
    Config = MnistConfig
    classes = tuple(str(d) for d in range(10))
    how_to_get = ("put the four MNIST IDX files (train-images-idx3-ubyte.gz, "
                  "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, "
                  "t10k-labels-idx1-ubyte.gz; https://yann.lecun.com/exdb/mnist/) there, or "
                  "the Hugging Face dataset ylecun/mnist in the local cache, or set task.path "
                  "to either folder")


class Cifar10Config(ImageConfig):
    """CIFAR-10 32x32x3 from the binary batches, 4x4 patches (64 patches of 48 values)."""

    name: Literal["cifar10"] = "cifar10"
    path: str = "~/.cache/reasonlab/cifar-10-batches-bin"
    """The extracted cifar-10-batches-bin folder (binary version, not the python pickles)."""


@TASKS.register("cifar10")
class Cifar10Task(ImageTask):
    Config = Cifar10Config
    config: Cifar10Config
    classes = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck")
    image_shape = (3, 32, 32)

    how_to_get = ("download cifar-10-binary.tar.gz (https://www.cs.toronto.edu/~kriz/"
                  "cifar.html) and extract it there (the binary version: the python one is "
                  "pickles, never read), or put the Hugging Face dataset uoft-cs/cifar10 in the "
                  "local cache, or set task.path to either folder")

    def load(self) -> Arrays:
        kind, folder = locate_images(self.config, self.Config().path, self.how_to_get)
        if kind == "hf":
            return load_hf_images(str(folder), 3, "cifar10")
        return load_cifar_folder(str(folder))

    @classmethod
    def data_source(cls, config: ImageConfig) -> tuple[bool, str]:
        return image_source(config, cls.Config().path, cls.how_to_get)

    def scale(self, images: np.ndarray) -> np.ndarray:
        x = images.astype(np.float32) / 255.0
        return (x - CIFAR_MEAN[:, None, None]) / CIFAR_STD[:, None, None]
