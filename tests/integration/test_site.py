"""`reasonlab site` in a real headless Chromium (Debian's, driven by Playwright): the index
lists the studies, a click opens a report, the curves and the attention explorer render, and
no page logs a console error. Screenshots land in the test's folder (and $REASONLAB_SHOTS)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from reasonlab.cli import main

CHROMIUM = "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (scripts/setup.sh --dev)")
pytest.importorskip("plotly", reason="plotly is not installed (pip install 'reasonlab[site]')")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian chromium is not installed (scripts/setup.sh --dev installs it)",
                allow_module_level=True)

pytestmark = pytest.mark.slow
# As root and on a closed network: no sandbox, no GPU, no background connections.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    store = tmp_path_factory.mktemp("store")
    assert main(["run", "lego-extrapolation", "--scale", "smoke", "--workers", "1", "--quiet",
                 "--out", str(store)]) == 0
    assert main(["site", "--store", str(store), "--out", str(store / "site")]) == 0
    return store / "site"


def test_site_in_headless_chromium(site, tmp_path):
    shots = Path(os.environ.get("REASONLAB_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))

        page.goto((site / "index.html").as_uri())
        rows = page.locator("#reports a.report")
        assert rows.count() == 1 and rows.first.inner_text() == "lego-extrapolation"
        assert page.locator("#reports .badge").count() == 2
        page.screenshot(path=str(shots / "index.png"), full_page=True)

        rows.first.click()
        page.wait_for_load_state()
        assert page.url.endswith("reports/lego-extrapolation-smoke/index.html")
        assert page.locator("#verdicts .badge").count() == 2
        imgs = page.locator("#report img")
        assert imgs.count() >= 1
        assert all(page.evaluate("i => i.naturalWidth", imgs.nth(k).element_handle()) > 0
                   for k in range(imgs.count()))  # figures shipped and loaded
        page.screenshot(path=str(shots / "report.png"), full_page=True)

        page.locator("a[href^='runs.html#']").first.click()
        page.wait_for_selector("#curves[data-rendered]")
        assert page.locator("#curves .scatterlayer .trace").count() == 2
        box = page.locator("#curves .scatterlayer .trace .point").last.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_selector("#curves .hoverlayer .hovertext")  # hover shows run and step
        page.screenshot(path=str(shots / "curves.png"))

        page.click("header a[href$='explorer.html']")
        page.wait_for_selector("#pattern[data-rendered]")
        n_layers = page.locator("#layer option").count()
        page.select_option("#layer", str(n_layers - 1))
        page.select_option("#head", "1")
        page.select_option("#sentence", "2")
        page.wait_for_selector(f"#pattern[data-rendered='L{n_layers - 1}H1S2']")
        assert page.locator("#pattern .heatmaplayer image, #pattern .hm image").count() >= 1
        assert "association" in page.inner_text("#scores")
        assert "manipulation" in page.inner_text("#scores")
        page.screenshot(path=str(shots / "explorer.png"), full_page=True)
        browser.close()
    assert errors == []
    assert all(u.startswith("file://") or u.startswith("data:") for u in requests), requests


def test_site_errors(tmp_path, capsys):
    assert main(["site", "--store", str(tmp_path / "none")]) == 2
    assert "no store" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["site", "--store", str(tmp_path / "empty")]) == 2
    assert "no study reports" in capsys.readouterr().err
    assert list((tmp_path / "empty").iterdir()) == []


def test_site_replaces_itself_and_refuses_a_foreign_folder(site, tmp_path, capsys):
    store = site.parent
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    assert main(["site", "--store", str(store), "--out", str(other)]) == 2
    assert "not a site" in capsys.readouterr().err and (other / "notes.txt").exists()
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    assert main(["site", "--store", str(store), "--out", str(copy)]) == 0
    assert (copy / "index.html").exists() and not (tmp_path / ".site.tmp").exists()
