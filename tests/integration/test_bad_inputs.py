"""Bad inputs a new user would try, one table: each ends in one line `error: ...`, exit status 2,
no traceback, and the file system exactly as it was (nothing created, changed or removed).

A case is (id, argv, needle, setup): argv may hold `{tmp}` (an empty folder of the case),
`{cfg}` (a tiny valid train config), `{file}` (a plain file), `{store}` (a run store holding
one finished tiny run) and `{run}` (that run's folder); `setup(tmp, run)` damages the store
before the command runs. `needle` must appear in the error line.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from reasonlab.cli import main
from reasonlab.runs import execute
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}
STUDY = "lego-extrapolation"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A store with one finished tiny run (trained once for the whole table)."""
    root = tmp_path_factory.mktemp("store")
    execute(TrainConfig.build(TINY), root, quiet=True)
    return root


def _partial(run: Path) -> None:
    """Turn the finished run into an interrupted one (checkpoint, no result)."""
    (run / "result.json").unlink()


def _edit_json(rel: str, fn: Callable[[dict], object], partial: bool = False):
    def setup(tmp: Path, run: Path) -> None:
        if partial:
            _partial(run)
        path = run / rel
        path.write_text(json.dumps(fn(json.loads(path.read_text()))))
    return setup


def _write(rel: str, text: str | bytes, partial: bool = False):
    def setup(tmp: Path, run: Path) -> None:
        if partial:
            _partial(run)
        path = run / rel
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def _metrics_line(line: str):
    def setup(tmp: Path, run: Path) -> None:
        _partial(run)
        path = run / "metrics.jsonl"
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0], line, *lines[1:]]) + "\n")
    return setup


def _study_results_garbage(tmp: Path, run: Path) -> None:
    from reasonlab.runs import run_dir_for
    from reasonlab.studies import STUDIES

    for spec in STUDIES[STUDY]().runs("smoke", 1):
        d = run_dir_for(spec.config, tmp / "study")
        d.mkdir(parents=True)
        (d / "result.json").write_text("{not json")


def _report(verdicts: str = "[]", study: str | None = None, md: bytes = b"# a report\n"):
    """A study report folder (report.md + verdicts.json) in the store, for `site`."""
    def setup(tmp: Path, run: Path) -> None:
        folder = run.parent.parent / "lego-extrapolation" / "smoke"
        folder.mkdir(parents=True)
        (folder / "report.md").write_bytes(md)
        (folder / "verdicts.json").write_text(verdicts)
        if study is not None:
            (folder / "study.json").write_text(study)
    return setup


def _old_site(tmp: Path, run: Path) -> None:
    """A report to publish, and --out holding what a site built before the marker file held,
    with a user's files under assets/ and reports/."""
    _report()(tmp, run)
    for f in ("index.html", "explorer.html", "assets/site.js", "assets/site.css",
              "assets/my-logo.svg", "reports/notes.md"):
        (tmp / "site" / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "site" / f).write_text(f"{f}\n")


def _config_file(content: str, name: str = "c.json"):
    def setup(tmp: Path, run: Path) -> None:
        (tmp / name).write_text(content)
    return setup


def _bytes_file(tmp: Path, run: Path) -> None:
    (tmp / "c.json").write_bytes(b"\xff\xfe\x00garbage")


def _damaged_ckpt(tmp: Path, run: Path) -> None:
    (run / "ckpt" / "state.safetensors").write_bytes(b"\x00" * 5)


NO_CUDA = not torch.cuda.is_available()
T = ["train", "{cfg}", "--quiet", "--out", "{store}"]  # train the tiny config into {store}
R = ["run", STUDY, "--scale", "smoke", "--quiet"]
S = ["sweep", "{cfg}", "--quiet", "--out", "{tmp}/sw"]

CASES: list[tuple[str, list[str], str, Callable | None]] = [
    # ---- argument parsing
    ("no-command", [], "required", None),
    ("unknown-command", ["nope"], "invalid choice", None),
    ("run-no-study", ["run"], "required", None),
    ("run-unknown-study", ["run", "no-such-study"], "unknown study", None),
    ("run-bad-scale", ["run", STUDY, "--scale", "huge"], "invalid choice", None),
    ("run-seeds-0", [*R, "--seeds", "0"], "--seeds", None),
    ("run-seeds-text", [*R, "--seeds", "x"], "invalid int", None),
    ("run-workers-neg", [*R, "--workers", "-1", "--out", "{tmp}/o"], "--workers", None),
    ("run-workers-0", [*R, "--workers", "0", "--out", "{tmp}/o"], "--workers", None),
    ("run-out-file", [*R, "--out", "{file}"], "not a folder", None),
    ("run-out-under-file", [*R, "--out", "{file}/sub"], "not a folder", None),
    ("run-out-uncreatable", [*R, "--out", "/proc/reasonlab-x"], "cannot create", None),
    ("run-corrupt-study-result", [*R, "--workers", "1", "--out", "{tmp}/study"], "result.json",
     _study_results_garbage),
    # ---- train: the config file
    ("train-no-config", ["train"], "required", None),
    ("train-missing-file", ["train", "/no/such/file.json"], "cannot read config file", None),
    ("train-config-dir", ["train", "{tmp}"], "cannot read config file", None),
    ("train-config-list", ["train", "{tmp}/c.json"], "top level", _config_file("[1, 2]")),
    ("train-config-string", ["train", "{tmp}/c.json"], "top level", _config_file('"lego"')),
    ("train-config-null", ["train", "{tmp}/c.json"], "top level", _config_file("null")),
    ("train-config-bad-json", ["train", "{tmp}/c.json"], "not valid", _config_file("{task")),
    ("train-config-bad-toml", ["train", "{tmp}/c.toml"], "not valid",
     _config_file("task = [", "c.toml")),
    ("train-config-binary", ["train", "{tmp}/c.json"], "UTF-8", _bytes_file),
    ("train-config-empty", ["train", "{tmp}/c.json"], "not valid", _config_file("")),
    ("train-config-no-task", ["train", "{tmp}/c.json"], "missing key 'task'",
     _config_file('{"model": {}}')),
    # ---- train: overrides and values
    ("override-no-eq", [*T, "steps"], "key=value", None),
    ("override-no-key", [*T, "=3"], "key=value", None),
    ("override-empty-part", [*T, "optim..lr=1"], "key=value", None),
    ("override-unknown", [*T, "colour=red"], "unknown key", None),
    ("steps-0", [*T, "steps=0"], "steps", None),
    ("steps-text", [*T, "steps=abc"], "steps", None),
    ("lr-infinity", [*T, "optim.lr=Infinity"], "finite", None),
    ("lr-nan", [*T, "optim.lr=NaN"], "finite", None),
    ("lr-negative", [*T, "optim.lr=-1"], "optim.lr", None),
    ("seed-negative", [*T, "seed=-1"], "seed", None),
    ("device-tpu", [*T, "device=tpu"], "device", None),
    ("task-unknown", [*T, "task.name=nope"], "unknown task", None),
    ("group-huge", [*T, "task.group=z100000000"], "group", None),
    ("group-unknown", [*T, "task.group=q8"], "unknown group", None),
    ("eval-every-not-divisor", [*T, "eval_every=3"], "multiple", None),
    ("heads-not-divisor", [*T, "model.n_heads=7"], "n_heads", None),
    ("vocab-disagrees", [*T, "model.vocab_size=3"], "vocab_size", None),
    ("warmup-too-long", [*T, "optim.warmup_steps=100"], "warmup", None),
    ("threads-0", [*T, "threads=0"], "threads", None),
    ("init-from-unknown", [*T, "init_from=nope"], "nope", None),
    ("trainable-matches-nothing", [*T, "trainable={\"prefixes\":[\"nope\"]}"],
     "match no parameter", None),
    ("betas-out-of-range", [*T, "optim.betas=[2,3]"], "optim.betas", None),
    ("betas-one", [*T, "optim.betas=[0.9]"], "optim.betas", None),
    ("dropout-above-1", [*T, "model.dropout=1.5"], "model.dropout", None),
    ("layers-0", [*T, "model.n_layers=0"], "model.n_layers", None),
    ("depth-range-reversed", [*T, "model.depth_range=[3,1]"], "depth_range", None),
    # 16 TB of weights: the store's disk check stops it before any allocation is tried
    ("model-huge", [*T, "model.d_model=1000000", "model.n_heads=1"], "GB of disk", None),
    ("n-train-beyond-distinct", [*T, "n_train=1e12"], "distinct", None),
    ("task-a-string", [*T, "task=lego"], "task", None),
    ("model-a-number", [*T, "model=3"], "model", None),
    ("dtype-fp16", [*T, "dtype=fp16"], "dtype", None),
    ("trainable-prefixes-a-string", [*T, "trainable={\"prefixes\":\"head.\"}"],
     "trainable", None),
    ("trainable-unknown-preset", [*T, "trainable=head."], "unknown freeze preset", None),
    ("mimic-unknown-key", [*T, "mimic.x=1"], "unknown key", None),
    ("studies-extra-arg", ["studies", "extra"], "unrecognized", None),
    ("train-out-file", ["train", "{cfg}", "--out", "{file}"], "not a folder", None),
    ("train-out-under-file", ["train", "{cfg}", "--out", "{file}/sub"], "not a folder", None),
    ("train-out-uncreatable", ["train", "{cfg}", "--out", "/proc/reasonlab-x"], "cannot create",
     None),
    # ---- train into a store holding a damaged run folder
    ("result-garbage", T, "result.json", _write("result.json", "{garbage")),
    ("result-no-final", T, "result.json", _edit_json("result.json", lambda r: {"id": r["id"]})),
    ("result-list", T, "result.json", _edit_json("result.json", lambda r: [r])),
    ("state-no-step", T, "state.json",
     _edit_json("ckpt/state.json", lambda s: {k: v for k, v in s.items() if k != "step"}, True)),
    ("state-garbage", T, "state.json", _write("ckpt/state.json", "]]", True)),
    ("state-step-text", T, "state.json",
     _edit_json("ckpt/state.json", lambda s: {**s, "step": "four"}, True)),
    ("safetensors-corrupt", T, "state.safetensors",
     _write("ckpt/state.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage", True)),
    ("metrics-no-step", T, "metrics.jsonl", _metrics_line('{"acc": 0.5}')),
    ("metrics-garbage-line", T, "metrics.jsonl", _metrics_line("garbage")),
    ("metrics-not-object", T, "metrics.jsonl", _metrics_line("[1, 2]")),
    # ---- data
    ("data-no-task", ["data"], "required", None),
    ("data-unknown-task", ["data", "nope"], "unknown task", None),
    ("data-seed-negative", ["data", "lego", "--seed", "-1"], "--seed", None),
    ("data-group-huge", ["data", "lego", "group=z100000000"], "group", None),
    ("data-dihedral-huge", ["data", "lego", "group=d100000000"], "group", None),
    ("data-symmetric-7", ["data", "lego", "group=s9"], "symmetric", None),
    ("data-n-0", ["data", "lego", "--n", "0"], "--n", None),
    ("data-n-huge", ["data", "lego", "--n", "10000000000"], "--n", None),
    ("data-clauses-0", ["data", "lego", "n_clauses=0"], "n_clauses", None),
    ("data-unknown-key", ["data", "lego", "colour=red"], "unknown key", None),
    ("data-train-vars", ["data", "lego", "n_clauses=3", "n_train_vars=5"], "n_train_vars", None),
    ("data-held-out-outside", ["data", "anchors", "held_out=[[9,9]]"], "outside", None),
    ("data-bad-format", ["data", "lego", "--format", "xml"], "invalid choice", None),
    ("data-custom-half", ["data", "lego", "group=custom"], "custom", None),
    # ---- attention
    ("attention-nothing", ["attention"], "run directory", None),
    ("attention-two-dirs", ["attention", "{run}", "{run}"], "run directory", None),
    ("attention-not-a-run", ["attention", "{tmp}"], "not a finished or checkpointed run", None),
    ("attention-n-0", ["attention", "{run}", "--n", "0", "--out", "{tmp}/a"], "--n", None),
    ("attention-example-999", ["attention", "{run}", "--example", "999", "--out", "{tmp}/a"],
     "--example", None),
    ("attention-example-neg", ["attention", "{run}", "--example", "-1", "--out", "{tmp}/a"],
     "--example", None),
    ("attention-window-neg", ["attention", "{run}", "--window", "-1", "--out", "{tmp}/a"],
     "--window", None),
    ("attention-corrupt-safetensors", ["attention", "{run}", "--out", "{tmp}/a"],
     "state.safetensors", _damaged_ckpt),
    ("attention-config-garbage", ["attention", "{run}", "--out", "{tmp}/a"], "config.json",
     _write("config.json", "{oops")),
    ("attention-out-file", ["attention", "{run}", "--out", "{file}"], "not a folder", None),
    # ---- sweep
    ("sweep-no-config", ["sweep"], "required", None),
    ("sweep-no-axis", S, "at least one axis", None),
    ("sweep-unknown-key", [*S, "optim.colour=1,2"], "unknown key", None),
    ("sweep-bad-value", [*S, "steps=4,abc"], "cell steps=\"abc\"", None),
    ("sweep-axis-no-eq", [*S, "steps"], "key=v1,v2", None),
    ("sweep-axis-empty-value", [*S, "steps=4,,8"], "empty value", None),
    ("sweep-axis-repeated-value", [*S, "steps=4,4"], "repeats", None),
    ("sweep-key-twice", [*S, "steps=4,6", "steps=8"], "twice", None),
    ("sweep-seed-axis", [*S, "seed=0,1"], "--seeds", None),
    ("sweep-seeds-0", [*S, "steps=4,6", "--seeds", "0"], "--seeds", None),
    ("sweep-workers-0", [*S, "steps=4,6", "--workers", "0"], "--workers", None),
    ("sweep-too-big", [*S, "steps=4,6,8,10,12,14,16,18", "optim.lr=0.1,0.2,0.3,0.4",
                       "--seeds", "3"], "--yes", None),
    ("sweep-address-local", [*S, "steps=4,6", "--address", "localhost:1"], "--executor ray",
     None),
    ("sweep-lr-infinity", [*S, "optim.lr=0.1,Infinity"], "finite", None),
    ("sweep-config-list", ["sweep", "{tmp}/c.json", "steps=4,6"], "top level",
     _config_file("[1]")),
    ("sweep-out-file", ["sweep", "{cfg}", "steps=4,6", "--out", "{file}"], "not a folder",
     None),
    ("sweep-corrupt-run", [*S[:-1], "{store}", "steps=4,6"], "state.json",
     _edit_json("ckpt/state.json", lambda s: {k: v for k, v in s.items() if k != "step"},
                True)),
    ("sweep-address-malformed", [*S, "steps=4,6", "--executor", "ray", "--address", "nowhere"],
     "not host:port", None),
    ("run-address-unreachable", [*R, "--executor", "ray", "--address", "127.0.0.1:1"],
     "cannot connect to Ray", None),
    ("run-executor-unknown", [*R, "--executor", "dask"], "invalid choice", None),
    ("run-address-local", [*R, "--address", "localhost:1"], "--executor ray", None),
    # ---- site
    ("site-no-store", ["site", "--store", "{tmp}/none"], "no store", None),
    ("site-no-reports", ["site", "--store", "{store}"], "no study reports", None),
    ("site-out-file", ["site", "--store", "{store}", "--out", "{file}"], "not a folder",
     _report()),
    ("site-out-foreign", ["site", "--store", "{store}", "--out", "{tmp}"], "not a site",
     _report()),
    ("site-bad-verdicts", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "verdicts.json", _report("{oops")),
    ("site-verdicts-not-list", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "malformed", _report('{"a": 1}')),
    ("site-verdicts-not-objects", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "verdicts.json", _report("[1, 2]")),
    ("site-study-json-runs-malformed", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "study.json", _report(study='{"runs": [1], "scale": 3}')),
    ("site-old-layout-no-marker", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "looks like a site made before", _old_site),
    ("site-report-latin1", ["site", "--store", "{store}", "--out", "{tmp}/site"],
     "report.md", _report(md="# caf\u00e9 r\u00e9sum\u00e9\n".encode("latin-1"))),
    # ---- nesting, types and sizes no config takes
    ("train-config-deep-json", ["train", "{tmp}/c.json"], "nests",
     _config_file("[" * 100_000 + "]" * 100_000)),
    ("train-config-deep-toml", ["train", "{tmp}/c.toml"], "nests",
     _config_file("a = " + "[" * 100_000 + "]" * 100_000, "c.toml")),
    ("train-layers-text-pretrained", [*T, "init_from=all-minilm-l6-v2", "model.n_layers=abc"],
     "init_from", None),
    ("train-layers-null-pretrained", [*T, "init_from=all-minilm-l6-v2", "model.n_layers=null"],
     "init_from", None),
    ("train-groups-int", [*T, "trainable=5"], "trainable", None),
    ("train-steps-huge", [*T, "steps=100000000000"], "steps", None),
    ("run-seeds-huge", [*R, "--seeds", "1000000000"], "--seeds", None),
    ("sweep-seeds-huge", [*S, "steps=4,6", "--seeds", "1000000000"], "--seeds", None),
    ("sweep-grid-huge", [*S, "steps=" + ",".join(map(str, range(2, 2002, 2))),
                         "optim.lr=" + ",".join(f"0.{i:03d}" for i in range(1, 201))],
     "more than", None),
    ("sweep-large-no-terminal", [*S, "steps=4,6,8,10,12,14,16,18,20",
                                 "optim.lr=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8"], "--yes", None),
    # ---- runs
    ("runs-empty-store", ["runs", "--out", "{tmp}/empty"], "no runs", None),
    ("runs-out-file", ["runs", "--out", "{file}"], "cannot list", None),
    ("runs-filter-no-eq", ["runs", "--out", "{store}", "--filter", "seed"], "key=value", None),
    ("runs-filter-no-match", ["runs", "--out", "{store}", "--filter", "seed=99"], "matches",
     None),
    ("runs-show-unknown", ["runs", "show", "abcdef", "--out", "{store}"], "no run abcdef",
     None),
    ("runs-show-not-hex", ["runs", "show", "../x", "--out", "{store}"], "not a run id", None),
    ("runs-show-no-id", ["runs", "show", "--out", "{store}"], "required", None),
    ("runs-show-corrupt-config", ["runs", "show", "{id}", "--out", "{store}"], "config.json",
     _write("config.json", "{oops")),
    ("runs-diff-one-id", ["runs", "diff", "{id}", "--out", "{store}"], "required", None),
    ("runs-diff-unknown", ["runs", "diff", "{id}", "0000", "--out", "{store}"], "no run 0000",
     None),
    ("runs-gc-bad-age", ["runs", "gc", "--older-than", "soon", "--out", "{store}"],
     "not an age", None),
    ("runs-gc-no-yes", ["runs", "gc", "--older-than", "0", "--out", "{store}"], "--yes",
     _write("result.json", "{oops")),
    ("runs-gc-empty", ["runs", "gc", "--out", "{tmp}/empty"], "no runs", None),
    ("attention-pretrained-unknown", ["attention", "--pretrained", "nope", "--out", "{tmp}/a"],
     "nope", None),
]
if NO_CUDA:
    CASES += [
        ("device-cuda", [*T, "device=cuda"], "CUDA", None),
        ("run-device-cuda-dir", [*T, "device=cuda", "--out", "{tmp}/o"], "CUDA", None),
    ]
# every legacy key (config_compat.py: LEGACY_INIT, LEGACY_TRAINABLE, MOVED_OPTIONS,
# RENAMED_FIELDS, kv_groups) given a value it cannot take, and given beside its new name
CASES += [
    ("legacy-train-int", [*T, "train=5"], "trainable", None),
    ("legacy-train-bool", [*T, "train=true"], "trainable", None),
    ("legacy-train-unknown", [*T, "train=[\"nope\"]"], "trainable", None),
    ("legacy-train-and-new", [*T, "train=fpt", "trainable=full"], "give trainable only", None),
    ("legacy-train-only-int", [*T, "train_only=5"], "trainable", None),
    ("legacy-train-only-and-new", [*T, "train_only=[\"head.\"]", "trainable=full"],
     "give trainable only", None),
    ("legacy-train-and-train-only", [*T, "train=fpt", "train_only=[\"head.\"]"],
     "give trainable only", None),
    ("legacy-pretrained-int", [*T, "pretrained=5"], "init_from", None),
    ("legacy-pretrained-unknown", [*T, "pretrained=nope"], "nope", None),
    ("legacy-pretrain-int", [*T, "pretrain=5"], "init_from", None),
    ("legacy-pretrain-and-new", [*T, "pretrain={}", "init_from=all-minilm-l6-v2"],
     "give init_from only", None),
    ("legacy-identity-terms", [*T, "model.identity_terms=5"], "attention.terms", None),
    ("legacy-identity-zero-diag", [*T, "model.identity_zero_diag=5"], "attention.zero_diag",
     None),
    ("legacy-mlp-equality", [*T, "model.mlp_equality=5"], "arch.equality", None),
    ("legacy-init-gamma", [*T, "model.init_gamma=x"], "init.gamma", None),
    ("legacy-norm-and-new", [*T, "model.norm=pre", "model.norm_position=post"],
     "give norm_position only", None),
    ("legacy-norm-unknown", [*T, "model.norm=sideways"], "norm_position", None),
    ("legacy-normalization-int", [*T, "model.normalization=5"], "norm_layer", None),
    ("legacy-kv-groups-text", [*T, "model.kv_groups=x"], "kv_groups", None),
    ("legacy-kv-groups-list", [*T, "model.kv_groups=[2]"], "kv_groups", None),
    ("legacy-kv-groups-not-dividing", [*T, "model.kv_groups=3"], "kv_groups", None),
    ("legacy-arch-mlp-bad-option", [*T, "model.arch=mlp", "model.mlp_equality=x"],
     "arch.equality", None),
]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path with its size and modification time (files) -- a folder's own time changes
    when something is made in it and removed again, which leaves nothing behind."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
            if p.is_file() else (0, -1) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_error(case, finished, tmp_path, capsys, monkeypatch):
    name, argv, needle, setup = case
    monkeypatch.chdir(tmp_path)  # a default output folder would appear here
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next((store / "runs").iterdir())
    (tmp_path / "cfg.json").write_text(json.dumps(TINY))
    (tmp_path / "file.txt").write_text("a plain file\n")
    if setup is not None:
        setup(tmp_path, run)
    subs = {"{tmp}": str(tmp_path), "{cfg}": str(tmp_path / "cfg.json"),
            "{file}": str(tmp_path / "file.txt"), "{store}": str(store), "{run}": str(run),
            "{id}": run.name}
    args = []
    for a in argv:
        for k, v in subs.items():
            a = a.replace(k, v)
        args.append(a)
    before = snapshot(tmp_path)
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: prompts read EOF
    rc = main(args)  # an uncaught exception (a traceback) fails the test here
    out, err = capsys.readouterr()
    assert rc == 2, (rc, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert out == "", out  # nothing on stdout: no prompt, no half a result
    assert needle in err, err
    assert snapshot(tmp_path) == before, "the failed command changed the file system"
