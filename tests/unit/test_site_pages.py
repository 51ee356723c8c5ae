"""A report page of `reasonlab site` names where the report lies in the store, never a path of
the machine that built the site (a shared site), and says on a smoke report that smoke is a
plumbing scale."""

from __future__ import annotations

import json

import pytest

from reasonlab.cli import main

pytest.importorskip("markdown_it", reason="markdown-it-py is not installed ('reasonlab[site]')")


def report(store, study: str, scale: str) -> None:
    f = store / study / scale
    f.mkdir(parents=True)
    (f / "report.md").write_text(f"# {study}\n\nA table.\n")
    (f / "verdicts.json").write_text(json.dumps([{"claim": "c", "text": "a claim",
                                                  "status": "reproduced", "evidence": "e"}]))
    (f / "study.json").write_text(json.dumps({"study": study, "scale": scale, "runs": []}))


def test_report_pages_show_store_relative_paths_and_the_smoke_note(tmp_path):
    store = tmp_path / "store"
    report(store, "lego-extrapolation", "smoke")
    report(store, "lego-extrapolation", "cpu")
    assert main(["site", "--store", str(store), "--out", str(tmp_path / "site")]) == 0
    pages = {p: p.read_text() for p in (tmp_path / "site").rglob("*.html")}
    assert pages and not [p for p, text in pages.items() if str(tmp_path) in text]
    smoke = [t for t in pages.values() if "lego-extrapolation/smoke (in the store)" in t]
    cpu = [t for t in pages.values() if "lego-extrapolation/cpu (in the store)" in t]
    assert len(smoke) == 1 and len(cpu) == 1
    assert "a plumbing scale" in smoke[0] and "plumbing" not in cpu[0]
