"""`reasonlab site`: a static HTML site of every study report in a store, viewable offline.

  index.html                       every report, grouped by paper: study, scale, verdict
                                   badges, date, run count
  reports/<slug>/index.html        the report's Markdown rendered, with its figures
  reports/<slug>/runs.html         interactive accuracy curves of its runs (hover: run, step)
  explorer.html                    attention explorer of trained LEGO runs: layer, head,
                                   sentence -> pattern over the tokens, head scores beside it
  assets/                          site.css, site.js (ours) and plotly.min.js (from the
                                   `plotly` package): nothing is fetched at view time

Reports are found as `report.md` + `verdicts.json` under the store; `study.json` (written by
`run_study`) names the study, scale and runs, and older reports fall back to their path.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonlab.errors import ConfigError

STATIC = Path(__file__).parent / "static"
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MARKER = ".reasonlab-site.json"
"""Written into every site folder: the files the site wrote. A rebuild replaces and removes
only those; a folder without it (and not empty) is not a site and is refused."""
LEGACY = ("index.html", "explorer.html", "assets/site.js", "assets/site.css")
"""A site written before MARKER existed holds all of these (refused: previous_site)."""
EXPLORER_RUNS = 6
"""Most LEGO runs in the attention explorer (each adds its patterns to the page)."""
EXPLORER_SENTENCES = 4
EXPLORER_SCORES = ("association", "association_variable", "manipulation")
SCORE_EXAMPLES = 64  # sentences the head scores average over, as `reasonlab attention`


@dataclass
class ReportInfo:
    folder: Path
    study: str
    scale: str
    title: str
    verdicts: list[dict[str, Any]]
    written: float
    runs: list[dict[str, Any]] = field(default_factory=list)
    runs_root: Path | None = None
    slug: str = ""


def _need(module: str, extra: str = "site") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"`reasonlab site` needs {module.split('.')[0]}; install it with "
                          f"`pip install 'reasonlab[{extra}]'`") from None


def find_reports(store: Path) -> list[ReportInfo]:
    """Every folder under `store` holding report.md and verdicts.json (runs/ is not entered;
    a file that is a symlink out of the store is not read)."""
    found = [read_report(store, Path(folder), "study.json" in files)
             for folder, files in report_folders(store)]
    found.sort(key=lambda r: (r.study, r.scale, -r.written))
    return found


def report_folders(store: Path) -> Iterator[tuple[str, list[str]]]:
    """(folder, its file names) of every report folder under `store`, as find_reports reads
    them."""
    for folder, dirs, files in os.walk(store):  # os.walk does not enter symlinked folders
        dirs[:] = sorted(d for d in dirs if d not in ("runs", "ckpt", "site", "sweeps") and
                         not d.startswith("."))
        if "report.md" in files and "verdicts.json" in files:
            yield folder, files


def report_files(store: Path) -> list[str]:
    """Path, size and modification time of every file find_reports reads: what a cached
    `reasonlab claims` text depends on in the store (reasonlab.listing)."""
    out = []
    for folder, files in report_folders(store):
        for name in ("report.md", "verdicts.json", "study.json"):
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:  # absent (study.json is optional) or removed meanwhile
                continue
            out.append(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}")
    return out


def inside(path: Path, root: Path) -> bool:
    """`path`, symlinks resolved, lies in `root` (the store): the site never shows a file a
    link in the store points to elsewhere."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _malformed(f: Path, what: str) -> ConfigError:
    return ConfigError(f"report folder {f} has a malformed {what}; run its study again to "
                       "rewrite it (or move the folder out of the store)")


def read_report(store: Path, f: Path, has_meta: bool) -> ReportInfo:
    """One report folder, every field checked (a damaged file is one error line)."""
    from reasonlab.studies import STUDIES

    for name in ("report.md", "verdicts.json", "study.json"):
        if (f / name).exists() and not inside(f / name, store):
            raise ConfigError(f"{f / name} is a link out of the store {store}; replace it by "
                              "the file itself")
    try:
        verdicts = json.loads((f / "verdicts.json").read_text(encoding="utf-8"))
        meta = json.loads((f / "study.json").read_text(encoding="utf-8")) if has_meta else {}
        (f / "report.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as e:  # ValueError: bad JSON or not UTF-8
        raise ConfigError(f"report folder {f} has an unreadable report.md, verdicts.json or "
                          f"study.json ({e}); run its study again to rewrite it") from None
    if not isinstance(verdicts, list) or not all(
            isinstance(v, dict) and all(isinstance(v.get(k, ""), str)
                                        for k in ("text", "status", "evidence", "claim"))
            for v in verdicts):
        raise _malformed(f, "verdicts.json")
    if not isinstance(meta, dict):
        raise _malformed(f, "study.json")
    kinds = {"study": str, "scale": str, "title": str, "written": (int, float),
             "runs_root": str, "runs": list}
    if any(k in meta and meta[k] is not None and not isinstance(meta[k], t)
           for k, t in kinds.items()) or not all(
            isinstance(r, dict) and isinstance(r.get("id"), str) and RUN_ID.fullmatch(r["id"])
            for r in meta.get("runs") or []):
        raise _malformed(f, "study.json")
    study = meta.get("study") or (f.parent.name if f.parent.name in STUDIES else f.name)
    scale = meta.get("scale") or (f.name if f.parent.name in STUDIES else "?")
    title = meta.get("title") or (STUDIES[study].title if study in STUDIES else study)
    root = Path(meta["runs_root"]) if meta.get("runs_root") else None
    if root is None or not inside(f, root):  # its runs lie under the root the report is in
        root = None
    return ReportInfo(f, study, scale, title, verdicts,
                      meta.get("written") or (f / "report.md").stat().st_mtime,
                      meta.get("runs") or [], root)


def badge(status: str) -> str:
    return (f'<span class="badge {html.escape(status.replace(" ", "-"))}">'
            f"{html.escape(status)}</span>")


def page(title: str, body: str, depth: int, scripts: tuple[str, ...] = (),
         data: Any = None, onload: str | None = None) -> str:
    up = "../" * depth
    tags = "".join(f'<script src="{up}assets/{s}"></script>' for s in scripts)
    blob = ("" if data is None else '<script id="data" type="application/json">'
            + script_json(data) + "</script>")
    run = f"<script>{onload}</script>" if onload else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title>"
            f'<link rel="stylesheet" href="{up}assets/site.css">{tags}</head><body>'
            f'<header><a href="{up}index.html">reasonlab studies</a>'
            f'<a href="{up}explorer.html">attention explorer</a></header>'
            f"<main>{body}</main>{blob}{run}</body></html>")


def script_json(data: Any) -> str:
    """JSON that cannot end or confuse the <script> element holding it: every <, > and &
    escaped as \\u003c etc. (`</script>`, `<!--` and `<script` are then inert; JSON.parse reads
    them back), and U+2028/U+2029 escaped for old JavaScript parsers (HTML spec §4.12.1.3)."""
    text = json.dumps(data, ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def render_markdown(text: str) -> str:
    """CommonMark + tables via markdown-it-py; raw HTML in reports is escaped, not passed."""
    mdit = _need("markdown_it")
    return mdit.MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def index_page(reports: list[ReportInfo]) -> str:
    """Every report, grouped by the paper its study reproduces (as `reasonlab claims`)."""
    from reasonlab.studies import STUDIES
    from reasonlab.studies.kit.ledger import family_of, papers

    known = papers()
    groups: dict[str, list[str]] = {key: [] for key in known}
    for r in reports:
        key = family_of(STUDIES[r.study]) if r.study in STUDIES else "other"
        badges = " ".join(f'<span title="{html.escape(v.get("text", ""))}">'
                          f'{badge(v.get("status", "?"))}</span>' for v in r.verdicts)
        href = html.escape(f"reports/{r.slug}/index.html")
        groups.setdefault(key, []).append(
            f'<tr><td><a class="report" href="{href}">'
            f"{html.escape(r.study)}</a><div class=muted>{html.escape(r.title)}</div>"
            f"</td><td>{html.escape(r.scale)}</td><td>{badges}</td>"
            f"<td>{time.strftime('%Y-%m-%d %H:%M', time.localtime(r.written))}</td>"
            f"<td>{len(r.runs) if r.runs else '-'}</td></tr>")
    head = "<tr><th>study</th><th>scale</th><th>verdicts</th><th>date</th><th>runs</th></tr>"
    names = {k: f"{p.citation}: {p.title}" for k, p in known.items()}
    sections = [f"<h2>{html.escape(names.get(k, 'Other reports'))}</h2>"
                f"<table>{head}{''.join(rows)}</table>" for k, rows in groups.items() if rows]
    body = "<h1>Study reports</h1><div id=reports>" + "".join(sections) + "</div>"
    return page("reasonlab studies", body, 0)


def run_folder(root: Path | None, run_id: str) -> Path | None:
    """The run folder `root/runs/<id>` if it is one and lies in `root` (no link out of it)."""
    if root is None or not RUN_ID.fullmatch(run_id):
        return None
    d = root / "runs" / run_id
    return d if d.is_dir() and inside(d, root) else None


def _curve(root: Path | None, run_id: str) -> list[dict[str, Any]]:
    from reasonlab.store import CorruptRunError, read_metrics, read_result

    d = run_folder(root, run_id)
    if d is None:
        return []
    try:
        result = read_result(d)
        curve = result["curve"] if result else read_metrics(d)
    except CorruptRunError:
        return []
    return [m for m in curve if isinstance(m, dict) and isinstance(m.get("step"), int)
            and isinstance(m.get("acc"), int | float)]


SCALE_NOTES = {
    "smoke": "<p id=scale-note><strong>Scale smoke</strong>: a plumbing scale, seconds of "
             "training that check the study runs end to end. Its verdicts say nothing about "
             "the paper's claims; the cpu, long and paper scales judge them.</p>",
}
"""A note under a report's title, per scale (the site is shared: a path of the machine that
built it is never shown, only where a report lies in the store)."""


def report_pages(r: ReportInfo, folder: Path, store: Path) -> None:
    folder.mkdir(parents=True)
    for png in r.folder.glob("*.png"):
        if png.is_file() and inside(png, store):  # a link out of the store is not copied
            shutil.copyfile(png, folder / png.name)
    curves = []
    for run in r.runs:
        rows = _curve(r.runs_root, run["id"])
        curves.append({"id": run["id"], "label": f"{run.get('arm', '')} seed {run.get('seed')}",
                       "steps": [m["step"] for m in rows], "acc": [m["acc"] for m in rows]})
    run_links = ", ".join(f'<a href="runs.html#{html.escape(c["id"])}">'
                          f"{html.escape(c['label'])} <code>{html.escape(c['id'])}</code></a>"
                          for c in curves)
    verdicts = "".join(f"<li>{badge(v.get('status', '?'))} {html.escape(v.get('text', ''))}"
                       f"<div class=muted>{html.escape(v.get('evidence', ''))}</div></li>"
                       for v in r.verdicts)
    where = r.folder.relative_to(store) if r.folder.is_relative_to(store) else r.folder.name
    body = (f"<p class=muted>{html.escape(r.study)} · scale {html.escape(r.scale)} · "
            f"{html.escape(where.as_posix() if isinstance(where, Path) else where)} (in the "
            f"store)</p>{SCALE_NOTES.get(r.scale, '')}<ul id=verdicts>{verdicts}</ul>"
            + (f'<p>Runs (<a href="runs.html">accuracy curves</a>): {run_links}</p>'
               if curves else "")
            + '<article id="report">'
            + render_markdown((r.folder / "report.md").read_text(encoding="utf-8"))
            + "</article>")
    (folder / "index.html").write_text(page(f"{r.study} ({r.scale})", body, 2), encoding="utf-8")
    if curves:
        body = (f'<h1>{html.escape(r.study)} ({html.escape(r.scale)}): accuracy curves</h1>'
                f'<p><a href="index.html">back to the report</a></p><div id="curves"></div>')
        (folder / "runs.html").write_text(page(
            f"{r.study} runs", body, 2, ("plotly.min.js", "site.js"),
            {"title": f"{r.study} ({r.scale}): test accuracy", "runs": curves},
            "drawCurves();"), encoding="utf-8")


def explorer_runs(reports: list[ReportInfo], store: Path) -> list[tuple[str, Path]]:
    """(label, run folder) of up to EXPLORER_RUNS checkpointed LEGO runs: those of the reports
    first, then any other in the store."""
    from reasonlab.store import scan

    seen: dict[str, tuple[Path, str]] = {}  # run id -> (folder, label)
    for r in reports:
        for run in r.runs:
            d = run_folder(r.runs_root, run["id"])
            if run["id"] not in seen and d is not None:
                seen[run["id"]] = (d, f"{r.study}: {run.get('arm', '')} seed {run.get('seed')} "
                                      f"({run['id']})")
    for info in scan(store):
        if info.id not in seen and info.status == "finished" and inside(info.path, store):
            seen[info.id] = (info.path, f"{info.id} ({info.task})")
    out = []
    for d, label in seen.values():
        try:
            config = json.loads((d / "config.json").read_text())
            task = config["task"]["name"]
            kept = config.get("keep_checkpoints", "last") == "last"  # "none": no weights
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        weights = d / "ckpt" / "state.safetensors"
        if task == "lego" and kept and weights.is_file() and inside(weights, d):
            out.append((label, d))
        if len(out) == EXPLORER_RUNS:
            break
    return out


def explorer_data(label: str, run_dir: Path) -> dict[str, Any]:
    import numpy as np

    from reasonlab.analysis.attention import attention_patterns, head_scores, special_ids
    from reasonlab.runs import load_run_model
    from reasonlab.tasks.base import build_task

    config, model = load_run_model(run_dir)
    task = build_task(config.task)
    batch = task.sample(np.random.default_rng(0), SCORE_EXAMPLES)
    pattern = attention_patterns(model, batch.tokens, batch.pad_mask)  # [L, B, H, T, T]
    variables = [task.vocab.id(v) for v in task.var_names]  # as `reasonlab attention` does
    scores = head_scores(pattern, batch.tokens, batch.pad_mask, special_ids(task.vocab.tokens),
                         variables=variables)
    sentences = []
    for i in range(EXPLORER_SENTENCES):
        n = int(batch.pad_mask[i].sum()) if batch.pad_mask is not None else batch.tokens.shape[1]
        # attention in thousandths: integers keep the page about half the size of floats
        p = (pattern[:, i, :, :n, :n] * 1000).round().int()
        sentences.append({"tokens": task.vocab.decode(batch.tokens[i, :n]),
                          "text": task.render(batch, i),
                          "patterns": p.tolist()})  # [L][H][T][T], per mille
    return {"id": run_dir.name, "label": label, "n_layers": pattern.shape[0],
            "n_heads": pattern.shape[2], "sentences": sentences,
            "scores": {k: v.numpy().round(4).tolist() for k, v in scores.items()
                       if k in EXPLORER_SCORES}}


def explorer_page(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return page("attention explorer", "<h1>Attention explorer</h1><p>No trained LEGO run "
                    "with a checkpoint in this store; run e.g. `reasonlab run "
                    "lego-extrapolation` first.</p>", 0)
    body = ("<h1>Attention explorer</h1><p class=muted>Attention of one head on one sentence "
            "(rows: queries, columns: keys). Scores: attention mass on the pattern, averaged "
            f"over {SCORE_EXAMPLES} sentences (LEGO §4.2: association = same variable, "
            "association_variable = the same, variable queries only; manipulation = the "
            "neighbouring tokens).</p>"
            '<div class="controls"><label>run<select id="run"></select></label>'
            '<label>layer<select id="layer"></select></label>'
            '<label>head<select id="head"></select></label>'
            '<label>sentence<select id="sentence"></select></label></div>'
            '<p><code id="text"></code></p><div class="explorer"><div id="pattern"></div>'
            '<table id="scores"></table></div>')
    return page("attention explorer", body, 0, ("plotly.min.js", "site.js"), {"runs": runs},
                "explorer();")


def build_site(store: Path, out: Path) -> tuple[Path, int]:
    """Write the site into `out`; returns (index, reports). A folder that is not empty must be
    a site this command made (its MARKER): then only the files the last build wrote are
    replaced or removed, and anything else in it is left alone."""
    from reasonlab.store import make_dirs, remove_empty, write_json_atomic

    plotly_offline = _need("plotly.offline")
    _need("markdown_it")
    if not store.is_dir():
        raise ConfigError(f"no store at {store}; run a study first or pass --store DIR")
    reports = find_reports(store)
    if not reports:
        raise ConfigError(f"no study reports under {store}; run one with `reasonlab run "
                          "STUDY` or pass --store DIR")
    if out.is_symlink() and out.is_dir():
        out = out.resolve()  # a link to a folder: write into the folder, keep the link
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder; choose another --out")
    old = previous_site(out)
    explorer = [explorer_data(label, d) for label, d in explorer_runs(reports, store)]
    created = make_dirs(out, "--out")
    # build in a folder of its own inside `out` (unique: two builds never share one), then
    # move each file into place: a failure leaves the old site (or nothing) and no debris
    tmp = Path(tempfile.mkdtemp(dir=out, prefix=".build-"))
    try:
        (tmp / "assets").mkdir(parents=True)
        for f in STATIC.iterdir():
            shutil.copyfile(f, tmp / "assets" / f.name)
        (tmp / "assets" / "plotly.min.js").write_text(plotly_offline.get_plotlyjs())
        used: set[str] = set()
        for r in reports:  # one folder per report; the same study and scale twice get -2, -3
            base = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{r.study}-{r.scale}").strip("-.")[:80]
            base = base.strip("-.") or "report"  # [:80]: file names have a length limit
            r.slug, k = base, 2
            while r.slug in used:
                r.slug, k = f"{base}-{k}", k + 1
            used.add(r.slug)
        (tmp / "index.html").write_text(index_page(reports), encoding="utf-8")
        for r in reports:
            report_pages(r, tmp / "reports" / r.slug, store)
        (tmp / "explorer.html").write_text(explorer_page(explorer), encoding="utf-8")
        new = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        clash = [f for f in new if f not in old and (os.path.lexists(out / f)
                                                     or not inside(out / f, out))]
        if clash:
            raise ConfigError(f"--out {out} holds {clash[0]}, which this site did not write; "
                              "move it away or choose another --out")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        remove_empty(created)
        raise
    # the marker first lists both builds' files, so a kill mid-swap leaves none unaccounted
    write_json_atomic(out / MARKER, {"files": sorted(set(old) | set(new))})
    for f in new:
        (out / f).parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp / f, out / f)
    for f in set(old) - set(new):
        with contextlib.suppress(FileNotFoundError):
            (out / f).unlink()
        remove_empty([p for p in (out / f).parents if p != out and p.is_relative_to(out)])
    write_json_atomic(out / MARKER, {"files": new})
    shutil.rmtree(tmp, ignore_errors=True)
    return out / "index.html", len(reports)


def previous_site(out: Path) -> list[str]:
    """The files an earlier build wrote into `out` ([] for a new or empty folder); a folder
    holding anything else is refused."""
    if not out.exists() or not any(p for p in out.iterdir()
                                   if not p.name.startswith(".build-")):
        return []
    marker = out / MARKER
    if not marker.is_file() and all((out / f).is_file() for f in LEGACY):
        # what looks like a site from before the marker is refused too: which of its files
        # that build wrote is not known, and a user's files under assets/ or reports/ would go
        raise ConfigError(f"--out {out} looks like a site made before `reasonlab site` marked "
                          f"its sites ({MARKER}), so which files are its own is not known; "
                          "delete it (after keeping any file of yours in it) or choose an "
                          "empty or new folder")
    if not marker.is_file():
        raise ConfigError(f"--out {out} is a non-empty folder that is not a site made by "
                          "`reasonlab site`; choose an empty or new folder")
    try:
        files = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        files = None
    if not isinstance(files, list) or not all(
            isinstance(f, str) and f and not Path(f).is_absolute() and ".." not in Path(f).parts
            for f in files):
        raise ConfigError(f"--out {out} has a damaged {MARKER}; delete the folder (it is a "
                          "site: nothing in it is lost that `reasonlab site` cannot rewrite) "
                          "or choose another --out")
    return [f for f in files if inside(out / f, out)]
