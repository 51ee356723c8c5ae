"""`reasonlab runs`: list, show, diff and garbage-collect the run store (see store.py)."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

from reasonlab.console import ask_stderr, confirm
from reasonlab.errors import ConfigError
from reasonlab.store import (
    CorruptRunError,
    RunInfo,
    check_checkpoint,
    flatten,
    inspect_run,
    read_metrics,
    read_result,
    remove_run,
    scan,
)

# Filled in from the task by TrainConfig: never a choice, so never worth listing.
DERIVED = ("model.vocab_size", "model.n_classes", "model.max_seq_len")


def store_runs(root: Path) -> list[RunInfo]:
    infos = scan(root)
    if not infos:
        raise ConfigError(f"no runs under {root / 'runs'}; train one with `reasonlab train` "
                          "or `reasonlab run`, or point --out at another store")
    return infos


def status_text(r: RunInfo) -> str:
    if r.status in ("partial", "running"):
        return f"{r.status} at step {r.step}"
    if r.status in ("corrupt", "failed"):
        return f"{r.status}: {r.problem}" if r.problem else r.status
    return r.status


def parse_filters(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ConfigError(f"--filter {item!r} is not key=value; write e.g. "
                              "--filter task.group=z2 or --filter status=finished")
        out.append((key, value))
    return out


def _matches(value: Any, raw: str) -> bool:
    try:
        want = json.loads(raw)
    except ValueError:
        want = raw
    return value == want or str(value) == raw


def filter_runs(infos: list[RunInfo], filters: list[tuple[str, str]]) -> list[RunInfo]:
    """Keep runs where every key=value holds. Keys: status, task, id, or any dotted key of
    the resolved config (config.json read by today's TrainConfig: defaults included, old names
    under the new ones)."""
    if not filters:
        return infos
    out = []
    for r in infos:
        fields: dict[str, Any] = {"status": r.status, "task": r.task, "id": r.id}
        if any(k not in fields for k, _ in filters):
            try:
                fields |= flatten(_resolved(r.path))
            except CorruptRunError:
                pass
        if all(k in fields and _matches(fields[k], v) for k, v in filters):
            out.append(r)
    return out


def _ago(t: float | None) -> str:
    if t is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _wall(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.0f} s" if s < 600 else f"{s / 60:.0f} min"


def _changed(r: RunInfo) -> str:
    # an empty {} (the default task, recorded as "nothing changed under task") says nothing
    items = [f"{k}={json.dumps(v)}" for k, v in r.changed.items()
             if k not in DERIVED and v != {}]
    return " ".join(items) or "-"


def list_table(infos: list[RunInfo]) -> str:
    """One line per run: id, task, status, final accuracy, wall time, created, changed keys."""
    rows = [("id", "task", "status", "acc", "wall", "created", "config (non-default)")]
    for r in infos:
        acc = "-" if r.acc is None else f"{r.acc:.3f}"
        rows.append((r.id, r.task or "?", status_text(r), acc, _wall(r.wall_s), _ago(r.created),
                     _changed(r)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False))
                     + "  " + row[-1] for row in rows)


def record(r: RunInfo) -> dict[str, Any]:
    """One run of the index as data: what `list_table` shows, unabbreviated (`created` in ISO
    8601, UTC; `changed`: the config values that differ from the defaults, dotted keys)."""
    import datetime

    created = (None if r.created is None else datetime.datetime.fromtimestamp(
        r.created, datetime.timezone.utc).isoformat(timespec="seconds"))
    return {"id": r.id, "task": r.task, "status": r.status, "step": r.step, "acc": r.acc,
            "wall_s": r.wall_s, "created": created, "path": str(r.path), "problem": r.problem,
            "changed": {k: v for k, v in r.changed.items() if k not in DERIVED and v != {}}}


def full_record(r: RunInfo) -> dict[str, Any]:
    """`record` with every final metric of a finished run (`final`: its last evaluation, as
    result.json holds it) and the whole resolved config (`config`: dotted keys, defaults
    filled in by today's TrainConfig), for `--format json/csv`."""
    final: dict[str, Any] = {}
    config: dict[str, Any] = {}
    try:
        if r.status == "finished":
            final = {k: v for k, v in _final(r.path).items() if k != "step"}
        config = flatten(_resolved(r.path))
    except CorruptRunError:  # listed as such by its status; its numbers are not shown
        pass
    return {**record(r), "final": final, "config": config}


def as_json(infos: list[RunInfo]) -> str:
    return json.dumps([full_record(r) for r in infos], indent=1) + "\n"


def as_csv(infos: list[RunInfo]) -> str:
    """One row per run: the fixed columns, one per final metric (`final.acc`,
    `final.val.acc`, ...; empty for a run that has not finished), then one per config key of
    the resolved configs (defaults filled in). Lists and objects as JSON."""
    import csv
    import io

    rows = [full_record(r) for r in infos]
    for row in rows:
        row["final"] = flatten(row["final"], "final.")
    metrics = sorted({k for row in rows for k in row["final"]})
    keys = sorted({k for row in rows for k in row["config"]})
    fixed = [k for k in rows[0] if k not in ("changed", "final", "config")] if rows else []
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(fixed + metrics + keys)
    for row in rows:
        cells = ([row[k] for k in fixed] + [row["final"].get(k) for k in metrics]
                 + [row["config"].get(k) for k in keys])
        writer.writerow(["" if v is None else json.dumps(v) if isinstance(v, list | dict)
                         else v for v in cells])
    return buf.getvalue()


EXPORTS = {"json": as_json, "csv": as_csv}
"""`reasonlab runs --format F`: the index as F."""


def find_run(root: Path, run_id: str) -> Path:
    """The folder of a run id or a unique prefix of one."""
    runs = root / "runs"
    if re.fullmatch(r"[0-9a-f]{1,64}", run_id) is None:
        raise ConfigError(f"{run_id!r} is not a run id (12 hex digits, or a prefix); "
                          "`reasonlab runs` lists them")
    hits = sorted(p for p in runs.glob(f"{run_id}*") if p.is_dir()) if runs.is_dir() else []
    if not hits:
        raise ConfigError(f"no run {run_id} under {runs}; `reasonlab runs --out "
                          f"{root}` lists them")
    if len(hits) > 1:
        raise ConfigError(f"run id prefix {run_id} matches {len(hits)} runs "
                          f"({', '.join(p.name for p in hits[:4])}...); give more digits")
    return hits[0]


def _config(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / "config.json").read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise CorruptRunError(run_dir, "config.json", f"is unreadable ({e})") from None
    if not isinstance(data, dict):
        raise CorruptRunError(run_dir, "config.json", "is not a JSON object")
    return data


def _resolved(run_dir: Path) -> dict[str, Any]:
    """config.json with every default filled in by today's TrainConfig, so that a run written
    before a field existed compares equal on it (its default keeps the old behaviour); the raw
    file when it no longer validates."""
    from reasonlab.errors import ReasonlabError
    from reasonlab.train.config import TrainConfig

    data = _config(run_dir)
    try:
        return TrainConfig.build(data).model_dump(mode="json")
    except (ReasonlabError, ValueError):
        return data


def curve(run_dir: Path) -> list[dict[str, Any]]:
    result = read_result(run_dir)
    return result["curve"] if result is not None else read_metrics(run_dir)


def show(root: Path, run_id: str) -> str:
    """Config, provenance, learning curve and checkpoint of one run, as text."""
    run_dir = find_run(root, run_id)
    info = inspect_run(run_dir)
    lines = [f"run {info.id}  ({run_dir})", f"status: {status_text(info)}"]
    rec_path = run_dir / "run.json"
    if rec_path.exists():
        try:
            rec = json.loads(rec_path.read_text())
            lines.append("recorded: " + ", ".join(
                f"{k} {rec[k]}" for k in ("host", "torch", "python", "git_commit")
                if rec.get(k) is not None) + f", wall {_wall(rec.get('wall_s'))}, created "
                f"{_ago(rec.get('created'))}")
        except (OSError, ValueError):
            lines.append("run.json: unreadable (provenance lost; results are unaffected)")
    lines += ["", "config:", json.dumps(_config(run_dir), indent=1)]
    if info.status != "corrupt":
        rows = curve(run_dir)
        if rows:
            keys = [k for k in ("step", "lr", "train_loss", "loss", "acc", "acc_supervised",
                                "train_acc") if k in rows[0]]
            lines += ["", "curve:", "  ".join(f"{k:>12}" for k in keys)]
            lines += ["  ".join(_num(row.get(k)).rjust(12) for k in keys) for row in rows]
        step = check_checkpoint(run_dir)
        ckpt = run_dir / "ckpt" / "state.safetensors"
        lines += ["", f"checkpoint: {ckpt} (step {step}, {ckpt.stat().st_size / 1e6:.2f} MB)"
                  if step is not None else "checkpoint: none"]
    return "\n".join(lines)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def diff(root: Path, id1: str, id2: str) -> str:
    """Config keys whose values differ, then final metrics side by side (with the change)."""
    a, b = find_run(root, id1), find_run(root, id2)
    ca, cb = flatten(_resolved(a)), flatten(_resolved(b))
    lines = [f"config: {a.name} vs {b.name}"]
    keys = sorted(k for k in ca.keys() | cb.keys() if ca.get(k) != cb.get(k))
    lines += [f"  {k}: {json.dumps(ca.get(k))} -> {json.dumps(cb.get(k))}" for k in keys]
    if not keys:
        lines.append("  (identical)")
    fa, fb = _final(a), _final(b)
    lines.append("final metrics:")
    for k in [k for k in fa if k in fb] + [k for k in fb if k not in fa]:
        va, vb = fa.get(k), fb.get(k)
        delta = (f"  ({vb - va:+.4g})" if isinstance(va, int | float)
                 and isinstance(vb, int | float) and math.isfinite(vb - va) else "")
        lines.append(f"  {k}: {_fmt(va)} -> {_fmt(vb)}{delta}")
    if not fa and not fb:
        lines.append("  (neither run has evaluated yet)")
    return "\n".join(lines)


def _final(run_dir: Path) -> dict[str, Any]:
    rows = curve(run_dir)
    return rows[-1] if rows else {}


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_num(x) for x in v) + "]"
    return _num(v)


_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd]?)$")


def parse_age(text: str) -> float:
    """'90s', '30m', '12h', '7d' or a number of seconds -> seconds."""
    m = _AGE.match(text.strip())
    if m is None:
        raise ConfigError(f"--older-than {text!r} is not an age; write e.g. 30m, 12h or 7d")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def verify(root: Path) -> tuple[list[str], int]:
    """Every run folder read and verified whole (store.inspect_run: result.json's checksums,
    the checkpoint's tensors, the metrics lines up to it, config.json): one line per damaged
    run naming the file, and how many runs were checked. Runs training now are skipped."""
    if not (root / "runs").is_dir():
        raise ConfigError(f"no runs under {root / 'runs'}; nothing to verify")
    infos = scan(root, thorough=True)
    return [f"{r.id}: {r.problem}" for r in infos if r.status == "corrupt"], len(infos)


def gc_candidates(root: Path, older_than: float, now: float | None = None) -> list[RunInfo]:
    """Damaged runs, and unfinished runs (partial, failed) untouched for `older_than` seconds.
    Finished runs and runs whose process still runs are never candidates."""
    now = time.time() if now is None else now
    out = []
    for r in scan(root, thorough=True):
        if r.status in ("finished", "running"):
            continue
        # a damaged folder can never resume, whatever its age
        if r.status == "corrupt" or now - _last_touched(r.path) >= older_than:
            out.append(r)
    return out


def _last_touched(run_dir: Path) -> float:
    """Newest modification time in the folder (a run writing checkpoints is fresh)."""
    times = [run_dir.stat().st_mtime]
    for p in run_dir.rglob("*"):
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return max(times)


def clear_stale_locks(root: Path) -> int:
    """Remove the lock files no live process holds (locking.clear_stale): left beside a run
    by a process killed after it finished the run, or beside a folder removed since. A lock
    beside an unfinished run is broken by the next command that trains it anyway; removing
    it here is as safe (the breakers' protocol). Returns how many went."""
    from reasonlab.locking import clear_stale

    return sum(clear_stale(p) for p in (root / "runs").glob(".*.lock"))


def gc(root: Path, older_than: float, yes: bool, ask: Any = ask_stderr) -> str:
    """Remove the gc candidates after showing them and asking (unless `yes`); lock files left
    by killed processes go without asking (they hold no data)."""
    if not (root / "runs").is_dir():
        raise ConfigError(f"no runs under {root / 'runs'}; nothing to collect")
    locks = clear_stale_locks(root)
    also = f"; removed {locks} stale lock file{'s' * (locks != 1)}" if locks else ""
    doomed = gc_candidates(root, older_than)
    if not doomed:
        return "nothing to remove: no partial, failed or damaged run is that old" + also
    if yes:
        print(list_table(doomed))
    elif not confirm(f"remove these {len(doomed)} run folders?",
                     f"{len(doomed)} runs would be removed; pass --yes to remove them without "
                     "asking", ask, details=list_table(doomed)):  # the list: part of the question
        return "nothing removed" + (f" but {locks} stale lock file{'s' * (locks != 1)}"
                                    if locks else "")
    busy = [r.id for r in doomed if not remove_run(r.path)]  # started training meanwhile
    return (f"removed {len(doomed) - len(busy)} run folders; running their commands again "
            "retrains them" + (f" (kept {', '.join(busy)}: training now)" if busy else "")
            + also)
