"""The run store on disk: output folders, run-folder checks, provenance, and a fast scan.

A run folder `<root>/runs/<id>` holds what `runs.execute` writes:
  config.json     the resolved config (its values that differ from defaults give the id)
  metrics.jsonl   one evaluation per line, each with its `step`
  ckpt/           state.safetensors + state.json (see train/checkpoint.py)
  result.json     written last, atomically: {"id", "final", "curve"}; its presence = finished
  run.json        provenance and a summary for listing (host, torch, git commit, wall time,
                  status, final accuracy, the changed config values). It never enters a run's
                  id or its results, so runs with and without it are interchangeable.

Damaged files are reported as one `CorruptRunError` line naming the file and the fix, before
anything in the folder is touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.locking import LeaseLost, LockHeld, RunLock, held, lock_path

RUN_JSON = "run.json"
CKPT_DIR = "ckpt"  # = train.checkpoint.CKPT_DIR, not imported: that would import torch (1-3 s)
FIX = "delete the folder or run `reasonlab runs gc` to retrain it"


class CorruptRunError(CheckpointError):
    """A file of a run folder is unreadable or lacks what the code needs."""

    def __init__(self, run_dir: Path, name: str, problem: str):
        self.name, self.problem = name, problem
        super().__init__(f"run folder {run_dir} is damaged: {name} {problem}; {FIX}")

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries (pool, Ray) intact
        return (_corrupt, (str(self), self.name, self.problem))


def _corrupt(message: str, name: str, problem: str) -> CorruptRunError:
    e = CorruptRunError.__new__(CorruptRunError)
    Exception.__init__(e, message)
    e.name, e.problem = name, problem
    return e


# ----------------------------------------------------------------------------- output folders


@contextlib.contextmanager
def output_dir(path: Path, what: str = "--out") -> Iterator[Path]:
    """Create `path` (and missing parents) for a command's output; if the command then fails
    with a user error, remove every folder this created that is still empty, so a failed command
    leaves nothing behind. A folder that exists already is never removed."""
    created = make_dirs(path, what)
    try:
        yield path
    except BaseException as e:
        from reasonlab.errors import ReasonlabError

        if isinstance(e, ReasonlabError):
            remove_empty(created)
        raise


def make_dirs(path: Path, what: str = "--out") -> list[Path]:
    """mkdir -p `path`; returns the folders it created, deepest first. One-line errors."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    if p.exists() and not p.is_dir():
        what_p = "is" if p == path else f"lies under {p}, which is"
        raise ConfigError(f"{what} {path} {what_p} a file, not a folder; choose another {what}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        remove_empty(missing)
        raise ConfigError(f"cannot create {what} folder {path} ({e.strerror}); choose a "
                          "writable place") from None
    if not os.access(path, os.W_OK):
        raise ConfigError(f"{what} folder {path} is not writable; choose a writable place")
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Remove these folders (deepest first) where they are empty; leave anything with files."""
    for p in folders:
        with contextlib.suppress(OSError):
            p.rmdir()


# ----------------------------------------------------------------------------- checks


def _json_file(run_dir: Path, name: str) -> Any:
    path = run_dir / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # ValueError: bad JSON or not UTF-8
        raise CorruptRunError(run_dir, name, f"is unreadable ({e})") from None


def read_result(run_dir: Path, verify: bool = False) -> dict[str, Any] | None:
    """result.json of a finished run, checked; None when the run has not finished. What the
    studies read must be there: a non-empty curve of evaluations with integer steps, and a
    final evaluation at the curve's last step holding every metric the curve logs (LEGO's
    acc_by_depth, ...); and the run's final checkpoint must exist (analyses load it). With
    `verify` (a run about to be reused), the checkpoint is checked whole: state.json, header
    and checksum."""
    result = _json_file(run_dir, "result.json")
    if result is None:
        return None
    if not isinstance(result, dict):
        raise CorruptRunError(run_dir, "result.json", "is not a JSON object")
    for key, kind in (("final", dict), ("curve", list)):
        if not isinstance(result.get(key), kind):
            raise CorruptRunError(run_dir, "result.json", f"lacks {key!r}")
    final, curve = result["final"], result["curve"]
    if "step" not in final:
        raise CorruptRunError(run_dir, "result.json", "lacks the final step")
    if not curve or not all(isinstance(m, dict) and isinstance(m.get("step"), int)
                            for m in curve):
        raise CorruptRunError(run_dir, "result.json", "has an empty or malformed 'curve'")
    missing = [k for k in ("acc", *curve[-1]) if k not in final]
    if missing or final["step"] != curve[-1]["step"]:
        raise CorruptRunError(run_dir, "result.json", f"lacks final.{missing[0]}" if missing
                              else "has a final step that is not the curve's last")
    if not isinstance(final["acc"], int | float) or isinstance(final["acc"], bool):
        raise CorruptRunError(run_dir, "result.json", "has a final.acc that is not a number")
    for name in ("state.safetensors", "state.json"):
        if not (run_dir / CKPT_DIR / name).is_file() and not (
                run_dir / f".{CKPT_DIR}.old" / name).is_file():
            raise CorruptRunError(run_dir, f"{CKPT_DIR}/{name}",
                                  "is missing (a finished run keeps its final checkpoint)")
    check_result_checksums(run_dir, result)
    if verify:
        check_checkpoint(run_dir)
    return result


RESULT_CHECKSUMS = "sha256"
"""The key in result.json holding the SHA-256 of the files a finished run's results rest on
(`result_checksums`); absent in runs finished before it existed, which are read as before."""
CHECKED_FILES = ("config.json", "metrics.jsonl", f"{CKPT_DIR}/state.json")
"""Checksummed in result.json (state.json holds the checksum of state.safetensors in turn)."""


def result_body_sha256(result: dict[str, Any]) -> str:
    """SHA-256 of what result.json says (its id, final and curve, canonical JSON): an edited
    value in result.json itself is caught as one in metrics.jsonl is."""
    import hashlib

    body = {k: result.get(k) for k in ("id", "final", "curve")}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def result_checksums(run_dir: Path, result: dict[str, Any]) -> dict[str, str]:
    """What a finished run records in result.json (RESULT_CHECKSUMS), when it is written: the
    SHA-256 of config.json, metrics.jsonl and the final checkpoint's state.json (which holds
    that of state.safetensors), and of result.json's own content."""
    sums = {name: file_sha256(run_dir / name) for name in CHECKED_FILES}
    return {**sums, "result.json": result_body_sha256(result)}


def check_result_checksums(run_dir: Path, result: dict[str, Any]) -> None:
    """Every file result.json's checksums name hashes as recorded, or one CorruptRunError line
    naming it. Hashing these three small files is cheap; state.safetensors is verified against
    state.json (itself verified here) by check_checkpoint."""
    sums = result.get(RESULT_CHECKSUMS)
    if sums is None:  # finished before result.json carried checksums: read as before
        return
    if not isinstance(sums, dict):
        raise CorruptRunError(run_dir, "result.json", f"has a malformed {RESULT_CHECKSUMS!r}")
    if sums.get("result.json") != result_body_sha256(result):
        raise CorruptRunError(run_dir, "result.json", "does not match its own checksum (a "
                              "value in it changed after the run finished)")
    for name in CHECKED_FILES:
        if name not in sums:
            continue
        path = run_dir / name
        if name.startswith(f"{CKPT_DIR}/"):  # killed between a checkpoint's renames
            path = checkpoint_dir(run_dir) / path.name
        try:
            same = file_sha256(path) == sums[name]
        except OSError:
            raise CorruptRunError(run_dir, name, "is missing") from None
        if not same:
            raise CorruptRunError(run_dir, name, "does not match the checksum in result.json "
                                  "(its bytes changed after the run finished)")


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """The lines of metrics.jsonl, checked: every complete line is an object with an integer
    step. A last line without its newline was cut by a kill mid-write and is left out (the
    resumed run writes it again)."""
    path = run_dir / "metrics.jsonl"
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise CorruptRunError(run_dir, "metrics.jsonl", f"is unreadable ({e})") from None
    lines = text.split("\n")[:-1]  # the part after the last newline is cut or empty
    out = []
    for i, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except ValueError:
            raise CorruptRunError(run_dir, "metrics.jsonl", f"line {i} is not JSON") from None
        if not isinstance(row, dict) or not isinstance(row.get("step"), int):
            raise CorruptRunError(run_dir, "metrics.jsonl", f"line {i} lacks an integer 'step'")
        out.append(row)
    return out


def checkpoint_dir(run_dir: Path) -> Path:
    """The run's checkpoint folder: ckpt/, or the previous one when a writer was killed
    between its two renames (train/checkpoint.py)."""
    ckpt = run_dir / CKPT_DIR
    if not (ckpt / "state.json").exists() and (run_dir / f".{CKPT_DIR}.old").exists():
        return run_dir / f".{CKPT_DIR}.old"
    return ckpt


def checkpoint_meta(run_dir: Path) -> dict[str, Any] | None:
    """The checkpoint's state.json (None if the run has none), checked to hold what resuming
    needs, and its safetensors header checked readable and of the file's size (cheap: the
    tensors stay on disk)."""
    rel = checkpoint_dir(run_dir).name
    meta = _json_file(run_dir, f"{rel}/state.json")
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise CorruptRunError(run_dir, f"{rel}/state.json", "is not a JSON object")
    # param_groups is null in a run's last checkpoint: it holds no optimizer state
    for key, kind in (("step", int), ("config_hash", str), ("param_groups", (list, type(None))),
                      ("optim_scalars", dict)):
        if key not in meta or not isinstance(meta[key], kind):
            what = kind[0].__name__ if isinstance(kind, tuple) else kind.__name__
            raise CorruptRunError(run_dir, f"{rel}/state.json", f"lacks {key!r} (a {what})")
    if META_CHECKSUM in meta and meta[META_CHECKSUM] != meta_sha256(meta):
        raise CorruptRunError(run_dir, f"{rel}/state.json", "does not match its own checksum "
                              "(a value in it changed after it was written)")
    check_safetensors(run_dir, f"{rel}/state.safetensors")
    return meta


META_CHECKSUM = "state_sha256"
"""The key in state.json holding the SHA-256 of its other values (`meta_sha256`): an edited
step, optimizer scalar or checksum is caught. Absent in older checkpoints."""


def meta_sha256(meta: dict[str, Any]) -> str:
    """SHA-256 of state.json's values but META_CHECKSUM, as canonical JSON."""
    import hashlib

    body = {k: v for k, v in meta.items() if k != META_CHECKSUM}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def check_checkpoint(run_dir: Path, verify: bool = True) -> int | None:
    """The step of the run's checkpoint (None if it has none), after checking that its
    state.json holds what resuming needs and its safetensors header is readable; with
    `verify`, also that the tensors match the checksum state.json records (checkpoints written
    before checksums existed have none and are read as before)."""
    meta = checkpoint_meta(run_dir)
    if meta is None:
        return None
    if verify and meta.get(CHECKSUM) is not None:
        rel = checkpoint_dir(run_dir).name
        check_safetensors(run_dir, f"{rel}/state.safetensors", meta[CHECKSUM])
    return meta["step"]


CHECKSUM = "sha256"
"""The key in state.json holding the SHA-256 of state.safetensors (train/checkpoint.py)."""
MODEL_CHECKSUM = "model_sha256"
"""The key in state.json holding the SHA-256 of the model weights alone
(train/checkpoint.tensors_sha256): what loading a run for analysis verifies, without reading
the optimizer state that the whole file's checksum covers."""


_HASHED: dict[tuple[str, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file; remembered per (path, inode, size, mtime) in this process, since a
    study checks each run it reuses several times."""
    import hashlib

    st = os.stat(path)
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _HASHED:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        _HASHED[key] = h.hexdigest()
    return _HASHED[key]


def check_safetensors(run_dir: Path, name: str, sha256: str | None = None) -> None:
    """Open the file's header and check its size against it (cheap: the tensors stay on
    disk); with `sha256`, also hash the file (a flipped byte anywhere is detected)."""
    from safetensors import SafetensorError, safe_open

    path = run_dir / name
    try:
        with safe_open(str(path), framework="numpy") as f:  # numpy: no torch import
            f.keys()
        same = sha256 is None or file_sha256(path) == sha256
    except (OSError, SafetensorError) as e:
        problem = "is missing" if not path.exists() else f"is unreadable ({e})"
        raise CorruptRunError(run_dir, name, problem) from None
    if not same:
        raise CorruptRunError(run_dir, name, "does not match the checksum in state.json (its "
                              "bytes changed after it was written)")


def check_partial(run_dir: Path) -> int:
    """Check what resuming an unfinished run reads; return the step it resumes from. The
    metrics line of the checkpoint's step must be there: it is written before the checkpoint,
    and a resume that starts at the last step returns it as the run's final evaluation."""
    if not run_dir.exists():
        return 0
    step = check_checkpoint(run_dir) or 0
    rows = read_metrics(run_dir)
    if step and not any(r["step"] == step for r in rows):
        raise CorruptRunError(run_dir, "metrics.jsonl", f"lacks the line of step {step}, "
                              "which the checkpoint holds")
    if step:
        check_checkpointed_files(run_dir, checkpoint_meta(run_dir) or {})
    return step


METRICS_CHECKSUM = "metrics_sha256"
"""The key in state.json holding [bytes, SHA-256] of metrics.jsonl as the checkpoint was
written: the lines up to its step, which a resume keeps and builds the run's result from (lines
appended after it are dropped and replayed). Absent in older checkpoints."""
CONFIG_CHECKSUM = "config_sha256"
"""The key in state.json holding the SHA-256 of config.json when the checkpoint was written."""


def checkpointed_files(run_dir: Path) -> dict[str, Any]:
    """What save_checkpoint records of the run's other files (METRICS_CHECKSUM,
    CONFIG_CHECKSUM), for those that exist."""
    import hashlib

    out: dict[str, Any] = {}
    metrics = run_dir / "metrics.jsonl"
    if metrics.is_file():
        data = metrics.read_bytes()
        out[METRICS_CHECKSUM] = [len(data), hashlib.sha256(data).hexdigest()]
    if (run_dir / "config.json").is_file():
        out[CONFIG_CHECKSUM] = file_sha256(run_dir / "config.json")
    return out


def check_checkpointed_files(run_dir: Path, meta: dict[str, Any],
                             config: bool = True) -> None:
    """metrics.jsonl up to the checkpoint's step (and config.json, with `config`) hash as the
    checkpoint's state.json recorded them; one CorruptRunError line naming the file if not."""
    import hashlib

    rel = checkpoint_dir(run_dir).name
    recorded = meta.get(METRICS_CHECKSUM)
    if recorded is not None:
        try:
            size, sha = recorded
            with open(run_dir / "metrics.jsonl", "rb") as f:
                head = f.read(int(size))
        except (OSError, TypeError, ValueError):
            raise CorruptRunError(run_dir, "metrics.jsonl", "is missing or shorter than at "
                                  f"the checkpoint (see {rel}/state.json)") from None
        if len(head) != size or hashlib.sha256(head).hexdigest() != sha:
            raise CorruptRunError(run_dir, "metrics.jsonl", "does not match the checksum in "
                                  f"{rel}/state.json (its lines up to the checkpoint changed)")
        # a resume keeps every line up to the checkpoint's step: one after the verified
        # lines would be kept unverified
        later = [r["step"] for r in read_metrics(run_dir)[head.count(b"\n"):]]
        if any(s <= meta.get("step", 0) for s in later):
            raise CorruptRunError(run_dir, "metrics.jsonl", "has a line of step "
                                  f"{min(later)} after the lines {rel}/state.json verifies")
    if config and meta.get(CONFIG_CHECKSUM) is not None:
        try:
            same = file_sha256(run_dir / "config.json") == meta[CONFIG_CHECKSUM]
        except OSError:
            raise CorruptRunError(run_dir, "config.json", "is missing") from None
        if not same:
            raise CorruptRunError(run_dir, "config.json", "does not match the checksum in "
                                  f"{rel}/state.json (it changed after the checkpoint)")


# ----------------------------------------------------------------------------- provenance


@lru_cache(maxsize=1)
def provenance() -> dict[str, Any]:
    """Where this process runs: host, torch and Python versions, and the git commit of the
    reasonlab checkout when it is one (None for an installed package)."""
    import platform
    import subprocess

    import torch

    commit = None
    src = Path(__file__).resolve().parent
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True,
                           text=True, timeout=5)
        if p.returncode == 0:
            commit = p.stdout.strip()
    return {"host": platform.node(), "torch": torch.__version__,
            "python": platform.python_version(), "git_commit": commit}


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out |= flatten(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


@contextlib.contextmanager
def publish_folder(out: Path) -> Iterator[Path]:
    """A temporary folder beside `out` to fill; when the block ends normally it becomes `out`
    in one rename (an empty `out`, which the caller checked, is replaced), and when it raises
    it is removed: a reader never sees half a folder, and a failed export leaves nothing."""
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the folder from a shared disk's users
        with contextlib.suppress(FileNotFoundError):
            out.rmdir()  # empty: replaced by the finished folder
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json_atomic(path: Path, data: Any, indent: int | None = 1,
                      fence: Callable[[], None] | None = None) -> None:
    write_text_atomic(path, json.dumps(data, indent=indent), fence)


def write_text_atomic(path: Path, text: str, fence: Callable[[], None] | None = None) -> None:
    """Write `path` through a temporary file of its own (unique: two writers never share
    one) renamed into place, so a reader sees the old file or the new one, never half.
    `fence` (locking.RunLock.check) is called just before the rename: a writer that lost its
    run leaves the file as it was."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide the file from a shared store's users
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if fence is not None:
            fence()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class RunRecord:
    """run.json of a run: written when it starts (or resumes), updated when it ends. wall_s
    sums the sessions that ended; one killed outright adds nothing."""

    def __init__(self, run_dir: Path, run_id: str, task: str, changed: dict[str, Any],
                 step: int = 0, where: dict[str, str] | None = None,
                 fence: Callable[[], None] | None = None):
        """`where`: the resolved device and precision (train/device.py where_it_runs), kept
        at the top and in each start (a resume is refused elsewhere: runs.py); `fence`: see
        write_text_atomic."""
        self.path, self.fence = run_dir / RUN_JSON, fence
        old = _read_json_quietly(self.path)
        now = time.time()
        starts = old.get("starts") if isinstance(old.get("starts"), list) else []
        self.data: dict[str, Any] = {
            "id": run_id, "task": task, "changed": changed,
            "created": old.get("created", now),
            "wall_s": float(old.get("wall_s", 0.0)), **provenance(), **(where or {}),
            "status": "running", "pid": os.getpid(),
            # every start of the run: a resume after a kill shows as a second entry
            "starts": [*starts, {"time": now, "host": provenance()["host"],
                                 "pid": os.getpid(), "step": step, **(where or {})}]}
        self.start = time.perf_counter()
        write_json_atomic(self.path, self.data, fence=fence)

    def end(self, status: str, **more: Any) -> None:
        self.data.update(status=status, wall_s=self.data["wall_s"] + time.perf_counter()
                         - self.start, ended=time.time(), **more)
        self.data.pop("pid", None)
        if status == "finished":  # what `runs` compares to trust this summary without reading
            self.data["files"] = fingerprints(self.path.parent)
        write_json_atomic(self.path, self.data, fence=self.fence)


def mark_failed(run_dir: Path, error: str) -> bool:
    """Record in run.json that the run's process died (a pool worker killed by a signal: its
    own `RunRecord.end` never ran), under the run's lock, which the dead process's pid makes
    stale at once; False (nothing written) when another process holds the run now, or it
    finished or never started. The run resumes from its last checkpoint when run again."""
    if not run_dir.is_dir():  # died before it made the folder: nothing to record
        return False
    lock = RunLock(lock_path(run_dir))
    try:
        lock.acquire(wait=False)
    except LockHeld:
        return False
    try:
        path = run_dir / RUN_JSON
        data = _read_json_quietly(path)
        if data.get("status") != "running" or (run_dir / "result.json").exists():
            return False
        data.update(status="failed", error=error, ended=time.time())
        data.pop("pid", None)
        write_json_atomic(path, data, fence=lock.check)
        return True
    finally:
        lock.release()


FINGERPRINTED = ("result.json", f"{CKPT_DIR}/state.json", f"{CKPT_DIR}/state.safetensors",
                 "config.json", "metrics.jsonl")


def fingerprints(run_dir: str | Path, names: Any = FINGERPRINTED
                 ) -> dict[str, list[int]] | None:
    """[size, mtime_ns] of the files a finished run is trusted by (None if one is missing);
    `names`: those a run.json recorded (older ones lack config.json and metrics.jsonl). A
    listing compares them instead of reading every result.json and checkpoint; `runs show`,
    `runs verify` and `runs gc` read and verify the files themselves."""
    out = {}
    for name in names:
        try:
            st = os.stat(f"{run_dir}/{name}")
        except OSError:
            return None
        out[name] = [st.st_size, st.st_mtime_ns]
    return out


def last_start(run_dir: Path) -> dict[str, Any]:
    """The last start recorded in the run's run.json ({} when none is readable)."""
    starts = _read_json_quietly(run_dir / RUN_JSON).get("starts")
    return starts[-1] if isinstance(starts, list) and starts and isinstance(
        starts[-1], dict) else {}


def _read_json_quietly(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ----------------------------------------------------------------------------- scanning


@dataclass
class RunInfo:
    """One run folder as `reasonlab runs` lists it."""

    id: str
    path: Path
    status: str  # finished | partial | running | failed | corrupt
    step: int | None = None
    task: str | None = None
    changed: dict[str, Any] = field(default_factory=dict)
    acc: float | None = None
    wall_s: float | None = None
    created: float | None = None
    mtime: float = 0.0
    problem: str | None = None



def scan(root: Path, thorough: bool = False) -> list[RunInfo]:
    """Every run folder under `root/runs`, newest first. Reads run.json (a few hundred bytes)
    per folder (and stats the files it fingerprints), and inspects the folder itself for runs
    made before run.json had fingerprints, unfinished, changed or damaged runs (all of them
    with `thorough`); 10,000 finished folders take about 1 s (benchmarks/bench_runs.py)."""
    runs = root / "runs"
    try:
        entries = [e for e in os.scandir(runs) if e.is_dir() and not e.name.startswith(".")]
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ConfigError(f"cannot list {runs} ({e.strerror})") from None
    infos = []
    for e in entries:
        info = None if thorough else _finished_fast(e.path, e.name)
        infos.append(info or inspect_run(Path(e.path), e.stat().st_mtime))
    infos.sort(key=lambda r: -(r.created or r.mtime))
    return infos


def _finished_fast(path: str, name: str) -> RunInfo | None:
    """A finished run from its run.json summary alone (plus a stat of the files it records,
    unchanged since), with plain strings and open(): pathlib costs as much as the read at
    10,000 runs."""
    try:
        with open(path + "/" + RUN_JSON, "rb") as f:
            rec = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if (not isinstance(rec, dict) or rec.get("status") != "finished" or "acc" not in rec
            or not isinstance(rec.get("files"), dict) or not rec["files"]
            or rec["files"] != fingerprints(path, list(rec["files"]))):
        return None  # changed since it finished, or recorded before fingerprints: read it
    return RunInfo(name, Path(path), "finished", rec.get("step"), rec.get("task"),
                   rec.get("changed") or {}, rec["acc"], rec.get("wall_s"), rec.get("created"))


def inspect_run(run_dir: Path, mtime: float | None = None) -> RunInfo:
    """What a run folder holds, every file checked (result.json's keys, the checkpoint's
    state.json, header and checksum): the status `runs show` and `runs gc` rely on, and the
    one `runs` lists whenever a run's files changed since its run.json summary."""
    info = RunInfo(run_dir.name, run_dir, "partial",
                   mtime=mtime if mtime is not None else run_dir.stat().st_mtime)
    rec = _read_json_quietly(run_dir / RUN_JSON)
    info.task, info.changed = rec.get("task"), rec.get("changed") or {}
    info.wall_s, info.created = rec.get("wall_s"), rec.get("created")
    try:
        result = read_result(run_dir)
        if result is not None:
            check_checkpoint(run_dir)  # a finished run's weights: readable, checksum verified
            info.status, info.step = "finished", result["final"]["step"]
            info.acc = result["final"].get("acc")
        else:
            if held(run_dir) is not None:  # its lock: trained right now, here or elsewhere
                info.status = "running"  # (its files change under us: not judged)
                with contextlib.suppress(CorruptRunError):
                    info.step = check_checkpoint(run_dir, verify=False) or 0
                return info
            info.step = check_partial(run_dir)  # what resuming it would read
            if rec.get("status") == "failed":
                info.status, info.problem = "failed", rec.get("error")
        if info.task is None:
            cfg = _json_file(run_dir, "config.json")
            if isinstance(cfg, dict):
                info.task = (cfg.get("task") or {}).get("name")
    except CorruptRunError as e:
        info.status, info.problem = "corrupt", f"{e.name} {e.problem}"
    return info


def remove_run(run_dir: Path) -> bool:
    """Remove a run folder unless a process holds its lock (it trains); True if removed. A
    run folder that is a link out of the store loses the link only, never its target."""
    if run_dir.is_symlink():
        run_dir.unlink()
        return True
    lock = RunLock(lock_path(run_dir))
    try:
        lock.acquire(wait=False)
    except LockHeld:
        return False
    try:
        lock.check()  # the fence: never remove a run another process has taken over
        shutil.rmtree(run_dir)
    except LeaseLost:
        return False
    finally:
        lock.release()
    return True
