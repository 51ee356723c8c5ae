"""`reasonlab sweep CONFIG key=v1,v2 other=a,b --seeds 3`: a grid over a train config.

Every cell x seed is an ordinary run in the content-addressed store, so a sweep run again
trains only what is missing, and cells shared with other sweeps or studies are reused. The
table (mean ± std over seeds of each final metric, one row per cell) is printed and written
as sweep.md next to sweep.json (every run's final metrics) and, when a swept key is numeric,
sweep.png (final accuracy against it, one line per combination of the other keys).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasonlab.errors import ConfigError

MAX_RUNS = 64
"""A grid of more runs than this needs --yes (a typo such as lr=1,2,...,100 trains for days)."""
MAX_GRID = 100_000
"""No grid is larger, --yes or not (its configs alone would fill memory)."""
METRICS = ("acc", "acc_supervised", "loss", "train_loss", "train_acc")
"""Final scalar metrics tabulated, where the runs log them."""


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple[Any, ...]


def split_values(raw: str) -> list[str]:
    """'1,2,[1,2]' -> ['1', '2', '[1,2]']: commas inside brackets or quotes do not split."""
    out, depth, quote, cur = [], 0, False, []
    for ch in raw:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "[{":
            depth += 1
        elif not quote and ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def parse_axes(items: list[str]) -> list[Axis]:
    axes: list[Axis] = []
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key or "" in key.split("."):
            raise ConfigError(f"sweep axis {item!r} is not key=v1,v2; write e.g. "
                              "optim.lr=1e-3,3e-3")
        parts = split_values(raw)
        if any(not p for p in parts):
            raise ConfigError(f"sweep axis {item!r} has an empty value; write key=v1,v2")
        values = []
        for p in parts:
            try:
                values.append(json.loads(p))
            except ValueError:
                values.append(p)
        if len(set(map(json.dumps, values))) != len(values):
            raise ConfigError(f"sweep axis {key!r} repeats a value; give each value once")
        if any(a.key == key for a in axes):
            raise ConfigError(f"sweep key {key!r} is given twice; list all its values in one "
                              "key=v1,v2")
        axes.append(Axis(key, tuple(values)))
    return axes


def nest(key: str, value: Any) -> dict[str, Any]:
    *parents, leaf = key.split(".")
    node: dict[str, Any] = {leaf: value}
    for p in reversed(parents):
        node = {p: node}
    return node


@dataclass
class Cell:
    values: tuple[Any, ...]  # one per axis
    configs: list[Any]  # TrainConfig per seed
    results: list[dict[str, Any]] | None = None


def build_grid(base: dict[str, Any], axes: list[Axis], seeds: int) -> list[Cell]:
    """Every combination of axis values x seeds 0..seeds-1, each validated (errors name the
    cell) before anything runs."""
    from reasonlab.config import deep_merge
    from reasonlab.train.config import TrainConfig

    if any(a.key == "seed" for a in axes):
        raise ConfigError("sweep the seed with --seeds N, not seed=...")
    cells = []
    for combo in itertools.product(*(a.values for a in axes)):
        data = base
        for a, v in zip(axes, combo, strict=True):
            data = deep_merge(data, nest(a.key, v))
        where = ", ".join(f"{a.key}={json.dumps(v)}" for a, v in zip(axes, combo, strict=True))
        configs = []
        for seed in range(seeds):
            try:
                configs.append(TrainConfig.build({**data, "seed": seed}))
            except ConfigError as e:
                raise ConfigError(f"cell {where}: {e}") from None
        cells.append(Cell(tuple(combo), configs))
    return cells


def sweep_name(config_path: Path, axes: list[Axis], seeds: int) -> str:
    spec = json.dumps([[a.key, a.values] for a in axes] + [seeds], sort_keys=True)
    return f"{config_path.stem}-{hashlib.sha256(spec.encode()).hexdigest()[:8]}"


def mean_std(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, s


def table(axes: list[Axis], cells: list[Cell]) -> tuple[str, list[dict[str, Any]]]:
    """The Markdown table and its rows (cell values, per-metric mean and std)."""
    from reasonlab.report import pm
    from reasonlab.report import table as md_table

    present = [m for m in METRICS if all(m in r["final"] for c in cells for r in c.results or [])]
    rows, body = [], []
    for c in cells:
        finals = [r["final"] for r in c.results or []]
        stats = {m: mean_std([float(f[m]) for f in finals]) for m in present}
        rows.append({"values": dict(zip([a.key for a in axes], c.values, strict=True)),
                     "seeds": len(finals), "runs": [r["id"] for r in c.results or []],
                     **{m: {"mean": s[0], "std": s[1]} for m, s in stats.items()}})
        body.append([json.dumps(v) if not isinstance(v, str) else v for v in c.values]
                    + [str(len(finals))] + [pm([float(f[m]) for f in finals], 4)
                                            for m in present])
    header = [a.key for a in axes] + ["seeds"] + [f"final {m}" for m in present]
    return md_table(header, body), rows


def numeric_axis(axes: list[Axis]) -> int | None:
    for i, a in enumerate(axes):
        if len(a.values) > 1 and all(isinstance(v, int | float) and not isinstance(v, bool)
                                     for v in a.values):
            return i
    return None


def plot(axes: list[Axis], rows: list[dict[str, Any]], i: int, path: Path, title: str) -> None:
    """Final accuracy (mean ± std over seeds) against the numeric axis i, one line per
    combination of the other axes (legend right of the plot); ticks at the swept values."""
    import textwrap

    from reasonlab.report import legend_outside, plt, save

    key = axes[i].key
    groups: dict[str, list[tuple[float, float, float]]] = {}
    for r in rows:
        others = ", ".join(f"{k}={json.dumps(v)}" for k, v in r["values"].items() if k != key)
        groups.setdefault(others, []).append((r["values"][key], r["acc"]["mean"],
                                              r["acc"]["std"]))
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for label, pts in groups.items():
        pts.sort()
        ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                    yerr=[p[2] for p in pts] if rows[0]["seeds"] > 1 else None,
                    marker="o", capsize=3, label=label or None)
    xs = sorted(axes[i].values)
    if min(xs) > 0 and max(xs) / min(xs) >= 10:  # e.g. learning rates
        ax.set_xscale("log")
        ax.minorticks_off()  # the swept values are the ticks: no crowded minor labels
    ax.set_xticks(xs, [f"{v:g}" for v in xs], rotation=30 if len(xs) > 5 else 0)
    ax.set(xlabel=key, ylabel="final test accuracy")
    ax.grid()
    ax.set_title("\n".join(textwrap.wrap(title, 60)))
    if len(groups) > 1:
        legend_outside(ax)
    save(fig, path)


def run_sweep(config_path: Path, axis_items: list[str], seeds: int = 1,
              out: Path | None = None, workers: int | None = None, quiet: bool = False,
              yes: bool = False, executor: str = "local",
              address: str | None = None, ask: Any = None) -> tuple[str, Path]:
    """Run the grid (reusing finished runs), write sweep.md / sweep.json / sweep.png into the
    report folder (default reasonlab-out/sweeps/<config>-<hash>); returns (table, folder)."""
    from reasonlab.config import read_config_file
    from reasonlab.console import ask_stderr, check_seeds, check_workers, confirm
    from reasonlab.execution import execute_all
    from reasonlab.config import deep_merge
    from reasonlab.report import seeds_text
    from reasonlab.store import output_dir, write_json_atomic, write_text_atomic
    from reasonlab.runs import check_runs

    check_seeds(seeds)
    check_workers(workers)
    axes = parse_axes(axis_items)
    if not axes:
        raise ConfigError("give at least one axis key=v1,v2 to sweep")
    base = read_config_file(config_path)
    # a key given one value overrides the config; only keys with several values are axes
    fixed = [a for a in axes if len(a.values) == 1]
    for a in fixed:
        base = deep_merge(base, nest(a.key, a.values[0]))
    name = sweep_name(config_path, axes, seeds)
    axes = [a for a in axes if len(a.values) > 1]
    n_cells = math.prod(len(a.values) for a in axes)  # before any config is built
    n = n_cells * seeds
    if n > MAX_GRID:
        raise ConfigError(f"the grid has {n:,} runs ({n_cells:,} cells x {seeds} seeds), more "
                          f"than {MAX_GRID:,}; sweep fewer values or seeds")
    if n > MAX_RUNS and not yes and not confirm(
            f"the grid has {n} runs ({n_cells} cells x {seeds} seeds); train them all?",
            f"the grid has {n} runs ({n_cells} cells x {seeds} seeds), more than "
            f"{MAX_RUNS}; pass --yes to run them all", ask or ask_stderr):
        raise ConfigError("sweep cancelled; nothing was trained")
    cells = build_grid(base, axes, seeds)
    root = out or Path("reasonlab-out")
    # its own folder under the root whatever --out says: two sweeps never share one
    folder = root / "sweeps" / name
    configs = [c for cell in cells for c in cell.configs]
    with output_dir(folder):
        check_runs(configs, root, executor)
        descs = [", ".join(f"{a.key}={json.dumps(v)}" for a, v in zip(axes, cell.values,
                                                                       strict=True))
                 + f" seed {s}" for cell in cells for s in range(seeds)]
        results = execute_all(configs, root, descs, workers, quiet,
                              executor,  # type: ignore[arg-type]
                              address, desc="sweep")
        for k, cell in enumerate(cells):
            cell.results = results[k * seeds:(k + 1) * seeds]
        md, rows = table(axes, cells)
        title = f"sweep of {config_path.name}: " + (" x ".join(a.key for a in axes)
                                                     or "one cell")
        spread = "mean ± std over seeds" if seeds > 1 else "one seed"
        text = [f"# {title}", "", f"{len(cells)} cell{'s' if len(cells) > 1 else ''} x "
                f"{seeds_text(seeds)}; final metrics, {spread}."
                + (" Fixed: " + ", ".join(f"`{a.key}={json.dumps(a.values[0])}`"
                                          for a in fixed) + "." if fixed else ""), "", md, ""]
        i = numeric_axis(axes)
        if i is not None and "acc" in rows[0]:
            plot(axes, rows, i, folder / "sweep.png", title)
            text += [f"![final accuracy against {axes[i].key}](sweep.png)", ""]
        write_text_atomic(folder / "sweep.md", "\n".join(text))
        write_json_atomic(folder / "sweep.json", {
            "config": str(config_path), "base": base, "seeds": seeds,
            "axes": {a.key: list(a.values) for a in axes},
            "fixed": {a.key: a.values[0] for a in fixed}, "cells": rows})
    return md, folder
