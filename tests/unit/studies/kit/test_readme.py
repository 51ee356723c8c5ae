"""Measured results as data (studies/kit/readme.py): a store's reports become measured.json
records, and the README tables are generated from them, never typed by hand."""

import json

import pytest

from reasonlab.errors import ConfigError
from reasonlab.studies.kit import readme

STUDY = "symbols-kernel"  # any registered study; one claim ("conditioning")


def write_report(store, scale, written, timing, status="reproduced", overrides=None,
                 study=STUDY):
    d = store / study / scale
    d.mkdir(parents=True, exist_ok=True)
    (d / "study.json").write_text(json.dumps({
        "study": study, "scale": scale, "written": written, "timing": timing,
        "overrides": overrides or {}, "runs": [{"id": "x", "arm": "a", "seed": s}
                                               for s in range(3)]}))
    (d / "verdicts.json").write_text(json.dumps([{
        "claim": "conditioning", "text": "t", "status": status, "evidence": "e", "why": "",
        "summary": "+0.500 [+0.100, +0.900] (95% CI, n = 3 / 3)",
        "effect": {"what": "gain a - b", "value": 0.5, "lo": 0.1, "hi": 0.9, "n": [3, 3]}}]))


def test_collect_takes_the_newest_report_and_its_timing(tmp_path):
    write_report(tmp_path, "cpu", 1.0, {"wall_s": 600, "cpu_s": 1100, "runs": 12,
                                        "runs_found": 0}, status="inconclusive")
    write_report(tmp_path / "other", "cpu", 0.0, None)  # not a report of this store's layout
    got = readme.collect(tmp_path)
    rec = got["symbols"][STUDY]["cpu"]
    assert rec["minutes"] == 10.0 and rec["cpu_minutes"] == pytest.approx(18.3)
    assert rec["seeds"] == 3 and rec["verdicts"][0]["status"] == "inconclusive"


def test_a_report_that_trained_nothing_keeps_a_logged_time(tmp_path):
    write_report(tmp_path, "cpu", 2.0, {"wall_s": 5, "cpu_s": 5, "runs": 12, "runs_found": 12})
    log = [{"study": STUDY, "scale": "cpu", "wall_s": 420.0, "user_s": 700.0, "sys_s": 20.0}]
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert rec["minutes"] == 7.0 and rec["cpu_minutes"] == 12.0
    # a time measured beside other jobs says so (a timing log's 1/5/15-minute loads)
    log[0]["load"] = "5.1 4.8 4.2"
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert "a machine loaded 4.2" in readme.time_text(object, rec)
    assert "loaded" not in readme.time_text(object, {**rec, "load_at_start": 1.9})


def test_a_resumed_study_has_no_measured_time(tmp_path, monkeypatch):
    """A study that assumes no other and found runs finished them itself in an interrupted
    command: neither this command's time nor the timing log's is the study's (and with no
    earlier measurement in measured.json it reads "not measured")."""
    monkeypatch.setattr(readme, "measured", lambda package: {})
    write_report(tmp_path, "cpu", 2.0, {"wall_s": 60, "cpu_s": 60, "runs": 12, "runs_found": 9})
    log = [{"study": STUDY, "scale": "cpu", "wall_s": 60.0, "user_s": 50.0, "sys_s": 1.0}]
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert "minutes" not in rec and readme.time_text(object, rec) == "not measured"


def test_a_logged_time_of_a_resumed_command_is_not_the_study_s(tmp_path, monkeypatch):
    """The report was written again by a command that trained nothing (a re-analysis); the
    timing log's line for the study is of a command that found 6 of its own 12 runs from an
    interrupted one: not the study's time either."""
    monkeypatch.setattr(readme, "measured", lambda package: {})
    write_report(tmp_path, "cpu", 2.0, {"wall_s": 5, "cpu_s": 5, "runs": 12, "runs_found": 12})
    log = [{"study": STUDY, "scale": "cpu", "wall_s": 86.0, "user_s": 150.0, "sys_s": 6.0,
            "runs": 12, "runs_found": 6}]
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert "minutes" not in rec and readme.time_text(object, rec) == "not measured"
    log[0]["runs_found"] = 0  # the same command on an empty store is a measurement
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert rec["minutes"] == pytest.approx(1.4) and rec["runs"] == 12


def test_a_study_measured_in_two_commands_sums_their_times(tmp_path, monkeypatch):
    """A fixed-seed first command trained 12 runs from an empty store (the timing log); a
    sequential run then found exactly those 12 and trained 12 more: the study's time is both
    commands', found none. A logged line that is not such a first command changes nothing."""
    monkeypatch.setattr(readme, "measured", lambda package: {})
    write_report(tmp_path, "cpu", 2.0, {"wall_s": 300, "cpu_s": 540, "runs": 24,
                                        "runs_found": 12, "load_at_start": 0.5})
    first = {"study": STUDY, "scale": "cpu", "wall_s": 420.0, "user_s": 700.0, "sys_s": 20.0,
             "runs": 12, "runs_found": 0, "load_at_start": 1.5}
    rec = readme.collect(tmp_path, [first])["symbols"][STUDY]["cpu"]
    assert rec["minutes"] == 12.0 and rec["cpu_minutes"] == 21.0
    assert rec["runs"] == 24 and rec["runs_found"] == 0 and rec["load_at_start"] == 1.5
    for other in ({**first, "runs": 10}, {**first, "runs_found": 3}, {**first, "runs": 24}):
        rec = readme.collect(tmp_path, [other])["symbols"][STUDY]["cpu"]
        assert "minutes" not in rec  # 12 runs found, not known to be this study's own


def test_a_trial_with_overrides_is_not_the_study(tmp_path):
    write_report(tmp_path, "cpu", 3.0, None, overrides={"steps": 10})
    assert readme.collect(tmp_path) == {}


def test_family_table_shows_effect_interval_seeds_and_time(tmp_path):
    write_report(tmp_path, "cpu", 1.0, {"wall_s": 600, "cpu_s": 1100, "runs": 12,
                                        "runs_found": 0})
    data = readme.collect(tmp_path)["symbols"]
    row = next(line for line in readme.family_table("symbols", "cpu", data).splitlines()
               if STUDY in line)
    assert "**reproduced**" in row
    assert "gain a - b: +0.500 [+0.100, +0.900] (95% CI, n = 3 / 3)" in row
    assert "| 10 min (18.3 CPU-min) |" in row and "| 3 |" in row
    # a study with no record reads "not run"
    assert "not run" in readme.family_table("symbols", "cpu", {})


def test_a_study_that_reuses_runs_counts_only_those_it_shares(tmp_path, monkeypatch):
    """lego-stochastic-depth's baseline arm is lego-extrapolation's ALBERT-like arm: at 3
    seeds it shares 3 of its 6 runs, so a command finding those 3 measured its own share. One
    finding a 4th found a run of its own an interrupted command trained: not the study's time,
    and no recorded time that found as many stands in for it."""
    from reasonlab.studies import STUDIES

    monkeypatch.setattr(readme, "measured", lambda package: {
        "lego-stochastic-depth": {"cpu": {"minutes": 9.0, "runs": 6, "runs_found": 4}}})
    study = "lego-stochastic-depth"
    cls = STUDIES[study]
    timing = {"wall_s": 300, "cpu_s": 540, "runs": 6, "runs_found": 3}
    write_report(tmp_path, "cpu", 1.0, timing, study=study)
    rec = readme.collect(tmp_path)["lego"][study]["cpu"]
    assert readme.time_text(cls, rec) == (
        "5 min (9 CPU-min; 3 of 6 runs trained, the rest from `lego-extrapolation`)")
    write_report(tmp_path, "cpu", 2.0, {**timing, "runs_found": 4}, study=study)
    rec = readme.collect(tmp_path)["lego"][study]["cpu"]
    assert "minutes" not in rec and readme.time_text(cls, rec) == "not measured"
    # where the plans cannot be made (assets missing on this machine) nothing is judged
    from reasonlab.errors import AssetError
    from reasonlab.studies.kit import base

    def no_assets(*args, **kwargs):
        raise AssetError("study needs weights")

    monkeypatch.setattr(base, "prepare_study", no_assets)
    rec = readme.collect(tmp_path)["lego"][study]["cpu"]
    assert readme.time_text(cls, rec) == (
        "5 min (9 CPU-min; 2 of 6 runs trained, the rest from `lego-extrapolation`)")


def test_blocks_are_replaced_between_their_markers_only():
    begin = readme.BEGIN.format(what="t")
    text = f"intro\n{begin}\nold table\n{readme.END}\nafter\n"
    assert readme.replace_blocks(text, {"t": "new"}, "R") == (
        f"intro\n{begin}\nnew\n{readme.END}\nafter\n")
    with pytest.raises(ConfigError, match="no line"):
        readme.replace_blocks("nothing", {"t": "new"}, "R")


def test_the_repository_readmes_match_their_measured_data():
    """Every generated README block equals what the families' measured.json give (after a new
    measurement, `reasonlab readme --store DIR` rewrites both)."""
    from pathlib import Path

    import reasonlab

    root = Path(reasonlab.__file__).resolve().parents[2]
    if not (root / "README.md").is_file() or not (root / "src" / "reasonlab").is_dir():
        pytest.skip("not a source checkout")
    assert readme.update(root, check=True) == []


def test_a_time_with_resumed_runs_reads_as_a_lower_bound(tmp_path):
    """Runs an interrupted command had partly trained were finished by the timed one: its time
    misses their first part, so the table says "at least" and how many."""
    write_report(tmp_path, "cpu", 1.0, {"wall_s": 600, "cpu_s": 1100, "runs": 12,
                                        "runs_found": 0, "runs_resumed": 2})
    rec = readme.collect(tmp_path)["symbols"][STUDY]["cpu"]
    assert readme.time_text(object, rec) == (
        "at least 10 min (18.3 CPU-min; 2 runs resumed from an earlier command's checkpoints)")
    # the same from a timing log's line, when the report was written again by a re-analysis
    write_report(tmp_path, "cpu", 2.0, {"wall_s": 5, "cpu_s": 5, "runs": 12, "runs_found": 12})
    log = [{"study": STUDY, "scale": "cpu", "wall_s": 600.0, "user_s": 1000.0, "sys_s": 100.0,
            "runs": 12, "runs_found": 0, "runs_resumed": 1}]
    rec = readme.collect(tmp_path, log)["symbols"][STUDY]["cpu"]
    assert readme.time_text(object, rec).startswith("at least 10 min (")
    assert "1 run resumed from" in readme.time_text(object, rec)


def test_a_study_without_the_scale_says_so_or_is_left_out():
    """fpt-backbones has no cpu scale (its weights reach no machine offline): the family's cpu
    table keeps its claims as "no `cpu` scale", not "not run"; lego's long table lists only
    the studies that define `long`."""
    from reasonlab.studies import STUDIES

    cpu = readme.family_table("fpt", "cpu", {})
    row = next(line for line in cpu.splitlines() if "`fpt-backbones`" in line)
    assert "no `cpu` scale" in row and "not run" not in row
    long = readme.family_table("lego", "long", {}, every_study=False)
    assert "`lego-extrapolation`" in long and "`lego-hardcoded-attention`" not in long
    assert {n for n in STUDIES if f"`{n}`" in long} == {
        n for n, c in STUDIES.items() if n.startswith("lego-") and "long" in c.scales}


def test_a_family_whose_study_defines_long_has_a_long_table_before_it_is_measured(monkeypatch):
    """A study that defines `long` but was never measured there reads "not run" in its
    family's long table, not an empty block; a family with no `long` study has no long table."""
    from reasonlab.studies import STUDIES
    from reasonlab.studies.kit.ledger import family_of

    monkeypatch.setattr(readme, "measured", lambda package: {})  # nothing measured anywhere
    out = readme.blocks()
    families = {f: out[p] for p in out for f in [p.parent.name] if p.name == "README.md"}
    with_long = {family_of(c) for _, c in STUDIES.items() if "long" in c.scales}
    assert with_long and {f for f, b in families.items() if "verdicts (long)" in b} == with_long
    table = families["artificial"]["verdicts (long)"]
    row = next(line for line in table.splitlines() if "`artificial-pretraining`" in line)
    assert "| not run |" in row and "`artificial-pretraining-lego`" not in table


def test_a_recorded_time_of_other_seeds_never_stands_in(tmp_path, monkeypatch):
    """A report at more seeds whose own time is not the study's (it found runs an interrupted
    command trained) must not show the time the family recorded at fewer seeds: that would
    state a 3-seed time for a 12-seed study."""
    from reasonlab.studies import STUDIES

    study = "lego-stochastic-depth"
    old = {"minutes": 9.0, "cpu_minutes": 16.0, "runs": 6, "runs_found": 3, "seeds": 3}
    monkeypatch.setattr(readme, "measured", lambda package: {study: {"cpu": old}})
    timing = {"wall_s": 300, "cpu_s": 540, "runs": 6, "runs_found": 4}  # one run not its own
    write_report(tmp_path, "cpu", 1.0, timing, study=study)
    rec = readme.collect(tmp_path)["lego"][study]["cpu"]
    assert rec["minutes"] == 9.0  # the same seeds (3 in the report): the recorded time
    monkeypatch.setattr(readme, "measured", lambda package: {study: {"cpu": {**old,
                                                                             "seeds": 12}}})
    rec = readme.collect(tmp_path)["lego"][study]["cpu"]
    assert "minutes" not in rec and readme.time_text(STUDIES[study], rec) == "not measured"
