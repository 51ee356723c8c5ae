"""Claims as data: every family's claims.toml loads, every study declares its claims from it by
its registered name (one mechanism for all), and the kit still judges each claim exactly once."""

import inspect
import re
import tomllib
from pathlib import Path

import pytest

from reasonlab.errors import ConfigError
from reasonlab.studies import STUDIES, families
from reasonlab.studies.anchors.common import by_reading
from reasonlab.studies.kit.base import Verdict, one_verdict_per_claim
from reasonlab.studies.kit.claims import CLAIMS_FILE, claim_row, family_claims, family_file
from reasonlab.studies.kit.ledger import family_of, papers

ROOT = Path(__file__).resolve().parents[4]


def package(family: str) -> str:
    return f"reasonlab.studies.{family}"


def test_every_family_file_loads_with_its_paper_and_only_registered_studies():
    for f in families():
        data = family_file(package(f))
        assert {"citation", "title", "seed"} <= set(data["paper"]), f
        registered = [name for name, cls in STUDIES.items() if family_of(cls) == f]
        # the file lists exactly the family's studies: no claims left behind by a removed one
        assert sorted(family_claims(package(f))) == sorted(registered), f


def test_every_study_declares_its_claims_from_its_family_file():
    for name, cls in STUDIES.items():
        listed = family_claims(package(family_of(cls)))[name]
        assert listed, name
        # anchors judge each base claim on two readings of gamma (<key>.mapped, <key>.direct)
        expected = (sum(by_reading(listed).values(), ()) if hasattr(cls, "readings")
                    else listed)
        assert cls.claims == expected, name
        keys = [c.key for c in cls.claims]
        assert len(set(keys)) == len(keys) and all(c.text and c.source for c in cls.claims)
        # one mechanism: the registry reads them by the study's name (no claims line), or the
        # class body says the same lookup (the anchors derive theirs in Study.judged)
        source = inspect.getsource(cls)
        assert ("claims =" not in source
                or f'family_claims(__package__)["{name}"]' in source), name


def test_the_registry_reads_a_study_s_claims_by_its_name(tmp_path, monkeypatch):
    """A study registered without a claims line gets its family file's rows for its name; a
    name the file lacks, or a study outside any package, is one ConfigError line."""
    from reasonlab.studies.kit.base import Report, Study, StudyRegistry

    pkg = tmp_path / "fam_claims_by_name"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / CLAIMS_FILE).write_text(
        '[paper]\ncitation = "c"\ntitle = "t"\nseed = "s"\n\n'
        '[[studies.fam-x]]\nkey = "k1"\ntext = "first"\nsource = "s1"\n\n'
        '[[studies.fam-x]]\nkey = "k2"\ntext = "second"\nsource = "s2"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("fam_claims_by_name")
    reg = StudyRegistry("study")

    def study(module_name, name):
        cls = type("S", (Study,), {"title": "t", "analyse": lambda self, r, o: Report("t", o),
                                   "__module__": module_name})
        return reg.register(name)(cls)

    got = study("fam_claims_by_name.x", "fam-x")
    assert [c.key for c in got.claims] == ["k1", "k2"] and got.claim("k2").text == "second"
    with pytest.raises(ConfigError, match=r"has no \[\[studies.fam-y\]\] rows"):
        study("fam_claims_by_name.y", "fam-y")
    with pytest.raises(ConfigError, match="outside any package"):
        study("toplevel_module", "fam-z")
    assert "fam-y" not in reg and "fam-z" not in reg and module


def test_untested_claims_say_why_and_do_not_shadow_a_tested_key():
    for f, p in papers().items():
        keys = [u.claim.key for u in p.untested]
        tested = {c.key for cs in family_claims(package(f)).values() for c in cs}
        assert len(set(keys)) == len(keys) and not set(keys) & tested, f
        assert all(u.why and u.claim.source for u in p.untested), f


def test_each_claim_from_a_file_gets_exactly_one_verdict():
    for name, cls in STUDIES.items():
        verdicts = [Verdict(c, "inconclusive", "") for c in reversed(cls.claims)]
        assert one_verdict_per_claim(cls(), verdicts) == verdicts[::-1], name
        with pytest.raises(RuntimeError, match="one verdict per declared claim"):
            one_verdict_per_claim(cls(), verdicts[1:] + verdicts[:1] * 2)
        for c in cls.claims:
            assert cls.claim(c.key) is c


def test_a_malformed_row_fails_with_the_file_and_the_claim():
    with pytest.raises(ConfigError, match=r"f.toml: claim 'k' lacks \['source'\]"):
        claim_row({"key": "k", "text": "t"}, "f.toml")
    with pytest.raises(ConfigError, match="unknown fields \\['paper_number'\\]"):
        claim_row({"key": "k", "text": "t", "source": "s", "paper_number": "1"}, "f.toml")
    assert claim_row({"key": "k", "text": "t", "source": "s", "why": "w"}, "f.toml",
                     extra=("why",)).paper_numbers == ""
    with pytest.raises(ConfigError, match=CLAIMS_FILE):
        family_file("reasonlab.studies.kit")  # the kit is no family: it has no claims file


def test_every_family_file_is_shipped_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]
    for f in families():  # its own line, or the one every package shares
        assert CLAIMS_FILE in shipped.get(package(f), []) + shipped.get("*", []), f


def test_numbers_written_in_a_file_agree_with_the_code_they_describe():
    from reasonlab.studies.artificial._support.paper_table import SEED_TABLE, seed_avg
    from reasonlab.studies.lego.common import N_CLAUSES
    from reasonlab.studies.lego.mixed_lengths import SHORTEST

    # "Avg: <row> 0.581, <row> 0.536": each row's average as _support/paper_table.csv gives it
    checked = 0
    for c in STUDIES["artificial-pretraining"].claims:
        for row, avg in re.findall(r"(?:^Avg: |, )([^:,;/]+?) (\d\.\d{3})\b", c.paper_numbers):
            assert row in SEED_TABLE and avg == f"{seed_avg(row):.3f}", (c.key, row)
            checked += 1
    assert checked >= 15
    text = STUDIES["lego-mixed-lengths"].claim("mixed-lengths").text
    assert f"({SHORTEST}-{N_CLAUSES} clauses" in text
