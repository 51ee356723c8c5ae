"""`reasonlab studies` and `reasonlab claims` answer from a cached text (reasonlab.listing)
without importing a study, and recompute it whenever what it is computed from changes: the
package's files, the store's reports. Listing never builds a run config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonlab import listing
from reasonlab.cli import main
from reasonlab.site import report_files

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import json, sys; from reasonlab.cli import main; "
         "rc = [main(c.split()) for c in sys.argv[1:]]; "
         "heavy = sorted(m for m in ('torch', 'reasonlab.studies', 'scipy') if m in sys.modules); "
         "print(json.dumps([rc, heavy]), file=sys.stderr)")
"""Runs the commands named on its line (each one argument: "studies --scale smoke") in one
process; reports their exit statuses and which heavy modules the process imported."""


def _reasonlab(cache: Path, cwd: Path, *commands: str,
               env: dict[str, str] | None = None) -> tuple[str, list]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), listing.ENV: str(cache), **(env or {})}
    env.pop("REASONLAB_PLUGINS", None)
    p = subprocess.run([sys.executable, "-c", PROBE, *commands], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout, json.loads(p.stderr.strip().splitlines()[-1])


def test_a_cached_listing_prints_the_same_text_without_importing_a_study(tmp_path):
    cache = tmp_path / "cache"
    cold_studies, (rc, imported) = _reasonlab(cache, tmp_path, "studies")
    assert rc == [0] and "reasonlab.studies" in imported and "lego-extrapolation" in cold_studies
    cold_claims, _ = _reasonlab(cache, tmp_path, "claims")
    assert "Unveiling Transformers with LEGO" in cold_claims
    warm, (rc, imported) = _reasonlab(cache, tmp_path, "studies", "claims")
    assert rc == [0, 0] and warm == cold_studies + cold_claims
    assert imported == [], f"a cached listing imported {imported}"


def test_the_cost_table_is_remembered_and_the_assets_looked_for_each_time(tmp_path):
    """`studies --scale S` builds every run config of the scale and counts their models' ops;
    the next command prints the same text without importing a study. What it remembers of
    the assets is what the runs read, never whether this machine has them."""
    cache = tmp_path / "cache"
    cold, (rc, imported) = _reasonlab(cache, tmp_path, "studies --scale smoke")
    assert rc == [0] and "reasonlab.studies" in imported and "| lego-extrapolation |" in cold
    assert "What the studies need from this machine" in cold
    warm, (rc, imported) = _reasonlab(cache, tmp_path, "studies --scale smoke")
    assert rc == [0] and warm == cold
    assert "reasonlab.studies" not in imported, imported
    remembered = "".join(p.read_text() for p in (cache / "listing").glob("*.txt"))
    assert "fpt-universal" in remembered and "found" not in remembered


@pytest.fixture
def memo(monkeypatch, tmp_path):
    """listing.listing over a package of one file, as a fresh command would use it."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "study.py").write_text("title = 'a'\n")
    monkeypatch.setattr(listing, "PACKAGE", package)
    monkeypatch.setattr(listing, "usable", lambda: True)
    monkeypatch.setenv(listing.ENV, str(tmp_path / "cache"))
    calls = []

    def compute() -> str:
        calls.append(1)
        return f"text {len(calls)}\n"
    return package, calls, compute


def test_an_edited_file_or_a_new_report_is_listed_anew(memo, tmp_path):
    package, calls, compute = memo
    assert listing.listing(["studies"], compute) == "text 1\n"
    assert listing.listing(["studies"], compute) == "text 1\n" and len(calls) == 1
    assert listing.listing(["claims"], compute) == "text 2\n"  # another command, another text
    (package / "study.py").write_text("title = 'a longer title'\n")
    assert listing.listing(["studies"], compute) == "text 3\n"

    store = tmp_path / "store"
    assert report_files(store) == []
    folder = store / "lego-extrapolation" / "cpu"
    folder.mkdir(parents=True)
    (folder / "report.md").write_text("# report\n")
    assert report_files(store) == []  # not a report until its verdicts are there
    (folder / "verdicts.json").write_text("[]")
    before = report_files(store)
    assert len(before) == 2 and listing.listing(["claims"], compute, before) == "text 4\n"
    assert listing.listing(["claims"], compute, report_files(store)) == "text 4\n"
    (folder / "verdicts.json").write_text('[{"claim": "x"}]')
    assert listing.listing(["claims"], compute, report_files(store)) == "text 5\n"


def test_a_cache_that_cannot_be_written_costs_only_the_speed(memo, monkeypatch, tmp_path):
    _, calls, compute = memo
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(listing.ENV, str(blocker))  # a file where the folder should be
    assert listing.listing(["studies"], compute) == "text 1\n"
    assert listing.listing(["studies"], compute) == "text 2\n"


def test_a_process_holding_the_studies_computes_and_caches_nothing(monkeypatch, tmp_path):
    import reasonlab.studies  # noqa: F401  (a test or notebook may register studies of its own)

    monkeypatch.setenv(listing.ENV, str(tmp_path / "cache"))
    assert not listing.usable()
    assert listing.listing(["studies"], lambda: "x") == "x"
    assert not (tmp_path / "cache").exists()


def test_listing_the_studies_builds_no_run_config(monkeypatch, capsys, tmp_path):
    from reasonlab.studies import STUDIES
    from reasonlab.train import config

    built = []
    for _, cls in STUDIES.items():
        monkeypatch.setattr(cls, "runs", lambda self, *a, **k: built.append(self.name) or [])
    real = config.TrainConfig.model_validate
    monkeypatch.setattr(config.TrainConfig, "model_validate",
                        classmethod(lambda c, *a, **k: built.append("config") or real(*a, **k)))
    monkeypatch.setenv(listing.ENV, str(tmp_path / "cache"))
    assert main(["studies"]) == 0 and main(["claims"]) == 0
    assert "lego-extrapolation" in capsys.readouterr().out
    assert built == []


def test_the_shipped_texts_are_this_source_s_and_a_first_command_reads_them(tmp_path):
    """listings.json is current (`reasonlab readme` rewrites it after any source edit), and a
    fresh command with an empty cache prints its text without importing a study -- the same
    text it computes when the shipped file is not there."""
    assert not listing.stale(), "src/reasonlab/listings.json is stale: run `reasonlab readme`"
    shipped = listing.shipped_path()
    computed, _ = _reasonlab(tmp_path / "a", tmp_path, "studies", "claims")
    env = {listing.SHIPPED_ENV: str(shipped)}
    first, (rc, imported) = _reasonlab(tmp_path / "b", tmp_path, "studies", "claims", env=env)
    assert rc == [0, 0] and first == computed and imported == []
    assert not (tmp_path / "b").exists()  # nothing to remember: it was shipped


def test_a_shipped_text_of_other_source_is_never_read(memo, monkeypatch):
    package, _, _ = memo
    monkeypatch.setenv(listing.SHIPPED_ENV, str(package / "listings.json"))
    listing.source_hash.cache_clear()
    assert listing.ship({("studies",): lambda: "shipped\n"})
    assert not listing.ship({("studies",): lambda: "shipped\n"})  # unchanged: not rewritten
    assert not listing.stale()
    assert listing.listing(["studies"], lambda: "computed\n", shipped_as=["studies"]) == "shipped\n"
    assert listing.listing(["claims"], lambda: "computed\n", shipped_as=["claims"]) == "computed\n"
    (package / "notes.md").write_text("not a source file\n")  # READMEs do not change listings
    listing.source_hash.cache_clear()
    assert not listing.stale()
    (package / "study.py").write_text("title = 'b'\n")
    listing.source_hash.cache_clear()
    assert listing.stale()
    text = listing.listing(["studies"], lambda: "computed\n", shipped_as=["studies"])
    assert text == "computed\n"
    listing.source_hash.cache_clear()
