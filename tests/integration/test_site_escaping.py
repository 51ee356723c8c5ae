"""Everything `reasonlab site` writes is escaped for its context: HTML text, attributes, and
JSON inside <script>. Hostile strings in every field a store feeds the site (folder names,
study.json, verdicts.json, report.md, run labels) go through a real HTML parser
(html.parser): no element, attribute or script appears that the site did not write itself,
and every string comes back intact."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("plotly", reason="plotly is not installed (pip install 'reasonlab[site]')")
pytest.importorskip("markdown_it", reason="markdown-it-py is not installed")

from reasonlab.site import build_site  # noqa: E402

PAYLOADS = [
    "</script><script>alert(1)</script>",
    "<!--<script>",
    '"><img src=x onerror=alert(2)>',
    "' onmouseover='alert(3)",
    "</title><svg onload=alert(4)>",
    "a & b &amp; \u2028 \u2029 </SCRIPT >",
]
P = " ".join(PAYLOADS)
OUR_SCRIPTS = {"drawCurves();", "explorer();"}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self.scripts[-1] = (self.scripts[-1][0], self.scripts[-1][1] + data)
        else:
            self.text.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


@pytest.fixture
def hostile_store(tmp_path) -> Path:
    store = tmp_path / "store"
    folder = store / 'lego-x"><img src=x onerror=alert(5)>' / "<b>smoke"
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(f"# report {P}\n\n<script>alert(6)</script>\n\n"
                                      "[link](javascript:alert(7))\n", encoding="utf-8")
    verdicts = [{"claim": f"c{i}", "text": f"claim {p}", "status": p, "evidence": f"ev {p}"}
                for i, p in enumerate(PAYLOADS)]
    (folder / "verdicts.json").write_text(json.dumps(verdicts))
    run = store / "runs" / "abc123"
    run.mkdir(parents=True)
    curve = [{"step": 10, "acc": 0.5}, {"step": 20, "acc": 0.75}]
    (run / "result.json").write_text(json.dumps({"id": "abc123", "final": curve[-1],
                                                 "curve": curve}))
    (folder / "study.json").write_text(json.dumps({
        "study": f"study {P}", "title": f"title {P}", "scale": f"scale {P}", "written": 1.0,
        "runs_root": str(store), "runs": [{"id": "abc123", "arm": f"arm {P}", "seed": 0}]}))
    return store


def test_hostile_strings_stay_text(hostile_store):
    index, n = build_site(hostile_store, hostile_store / "site")
    assert n == 1
    pages = sorted(index.parent.rglob("*.html"))
    assert len(pages) == 4  # index, explorer, the report and its runs page
    seen_json = False
    for path in pages:
        page = parse(path)
        for tag, attrs in page.tags:
            assert tag not in ("img", "svg", "b") or (tag == "img" and attrs["src"].endswith(
                ".png")), (path, tag, attrs)
            assert not any(k.startswith("on") for k in attrs), (path, tag, attrs)
            for k in ("href", "src"):
                assert not (attrs.get(k) or "").lower().startswith("javascript:"), attrs
        for attrs, body in page.scripts:
            if "src" in attrs:
                assert re.fullmatch(r"(\.\./)*assets/[a-z.]+\.js", attrs["src"]) and not body
            elif attrs.get("id") == "data":
                assert attrs["type"] == "application/json"
                # nothing in it can end the element or open a comment, in any case
                assert not re.search(r"<|>|&|\u2028|\u2029", body), body
                data = json.loads(body)
                assert data["runs"][0]["label"] == f"arm {P} seed 0"
                assert data["title"] == f"study {P} (scale {P}): test accuracy"
                seen_json = True
            else:
                assert body in OUR_SCRIPTS, (path, body)
        text = "".join(page.text)
        if path.name == "index.html" and path.parent.name.startswith("study"):
            for p in PAYLOADS:
                assert f"claim {p}" in text and f"ev {p}" in text
            # Markdown reads `&amp;` in report.md as an entity (CommonMark): the rest verbatim
            assert " ".join(PAYLOADS[:-1]) in text and "<script>alert(6)</script>" in text
            assert 'lego-x"><img src=x onerror=alert(5)>' in text  # the folder, as text
    assert seen_json


def test_site_folder_is_never_someone_elses(hostile_store, tmp_path):
    from reasonlab.errors import ConfigError

    out = tmp_path / "site"
    build_site(hostile_store, out)
    (out / "notes.txt").write_text("mine")  # a user file inside the site folder
    (out / "reports" / "mine.md").write_text("mine too")
    build_site(hostile_store, out)  # rebuilt: the user's files are still there
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "reports" / "mine.md").read_text() == "mine too"
    assert not [p for p in out.iterdir() if p.name.startswith(".build")]
    assert not [p for p in tmp_path.iterdir() if "tmp" in p.name]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text("my own page")
    with pytest.raises(ConfigError, match="not a site"):
        build_site(hostile_store, foreign)
    assert (foreign / "index.html").read_text() == "my own page"
    beside = tmp_path / ".site.tmp"  # a user's folder with the name older versions used
    beside.mkdir()
    (beside / "x").write_text("x")
    build_site(hostile_store, out)
    assert (beside / "x").exists()
    link = tmp_path / "link"
    link.symlink_to(out)
    index, _ = build_site(hostile_store, link)  # a link to the site folder: written through
    assert link.is_symlink() and index.exists()


def test_links_out_of_the_store_are_not_followed(hostile_store, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "fig.png").write_bytes(b"\x89PNG secret")
    folder = next(hostile_store.rglob("report.md")).parent
    (folder / "leak.png").symlink_to(secret / "fig.png")
    out = tmp_path / "site"
    build_site(hostile_store, out)
    assert not list(out.rglob("leak.png"))
    (folder / "report.md").unlink()
    (folder / "report.md").symlink_to(secret / "fig.png")
    from reasonlab.errors import ConfigError

    with pytest.raises(ConfigError, match="link out of the store"):
        build_site(hostile_store, out)
