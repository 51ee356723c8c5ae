"""The claims ledger: every study's claims under its family's paper, the untested claims with
their reasons, and the newest verdict per study and scale read from hand-made report folders."""

import json

from reasonlab.cli import main
from reasonlab.site import ReportInfo, find_reports, index_page
from reasonlab.studies import STUDIES, families
from reasonlab.studies.kit.ledger import (NO_SCALE, NOT_RUN, UNTESTED, counts, family_of, ledger,
                                          ledger_text, papers, summary_markdown)


def write_report(store, study, scale, written, statuses):
    folder = store / f"{study}-{written}" / scale
    folder.mkdir(parents=True)
    (folder / "report.md").write_text("# report\n")
    (folder / "verdicts.json").write_text(json.dumps(
        [{"claim": k, "text": k, "status": s, "evidence": "1 vs 2"} for k, s in statuses]))
    (folder / "study.json").write_text(json.dumps(
        {"study": study, "title": study, "scale": scale, "written": written}))


def test_every_family_has_a_paper_and_every_claim_one_entry():
    book = ledger()
    assert [p.key for p, _ in book] == families() == sorted(papers())
    assert {p.key for p, _ in book} == {"lego", "symbols", "anchors", "fpt", "artificial"}
    tested = [(e.study, e.key) for _, entries in book for e in entries if e.study]
    assert sorted(tested) == sorted((name, c.key) for name, cls in STUDIES.items()
                                    for c in cls.claims)
    for p, entries in book:
        for e in entries:
            if e.study is None:  # untested: says why, and has no verdict at any scale
                assert e.why and e.source and e.status("cpu") == UNTESTED
            else:
                cls = STUDIES[e.study]
                assert family_of(cls) == p.key and e.status("cpu") == (
                    NOT_RUN if "cpu" in cls.scales else "no cpu scale")
    untested = {p.key: sum(e.study is None for e in entries) for p, entries in book}
    assert untested["fpt"] >= 1 and untested["artificial"] >= 6  # tables no study tests yet
    # every table of the FPT slides has a claim, tested or not
    sources = " ".join(e.source for p, entries in book if p.key == "fpt" for e in entries)
    for table in ("Performance on Multimodal Sequence Benchmarks", "Importance of language "
                  "pre-training", "Importance of architecture", "Training duration",
                  "Over- and underfitting", "Scaling with size", "Weight initialization",
                  "Freezing more parameters", "Successive finetuning",
                  "Freezing fewer parameters", "first layer attention"):
        assert table in sources, table


def test_latest_verdict_per_study_and_scale(tmp_path):
    write_report(tmp_path, "lego-extrapolation", "cpu", 100,
                 [("classical", "reproduced"), ("extrapolation", "reproduced")])
    write_report(tmp_path, "lego-extrapolation", "cpu", 200,
                 [("classical", "not reproduced"), ("extrapolation", "inconclusive")])
    write_report(tmp_path, "lego-extrapolation", "smoke", 50, [("classical", "reproduced")])
    keys = [c.key for c in STUDIES["lego-extrapolation"].claims]
    assert keys == ["classical", "extrapolation"]
    [(paper, entries)] = ledger(find_reports(tmp_path), "lego")
    got = {e.key: (e.status("smoke"), e.status("cpu"), e.status("paper")) for e in entries
           if e.study == "lego-extrapolation"}
    assert got == {"classical": ("reproduced", "not reproduced", NOT_RUN),
                   "extrapolation": (NOT_RUN, "inconclusive", NOT_RUN)}
    c = counts(entries, "cpu")
    n_untested = len(paper.untested)
    # claims of the studies without a cpu scale (the plateau studies run at long scale only)
    n_no_cpu = sum(e.study is not None and "cpu" not in STUDIES[e.study].scales
                   for e in entries)
    assert n_no_cpu == sum(len(STUDIES[s].claims) for s in ("lego-plateau", "lego-short-chain"))
    assert c == {"claims": len(entries), "reproduced": 0, "not reproduced": 1,
                 "inconclusive": 1, NOT_RUN: len(entries) - 2 - n_untested - n_no_cpu,
                 NO_SCALE: n_no_cpu, UNTESTED: n_untested}
    assert (f"| {len(entries)} | 0 | 1 | 1 | {c[NOT_RUN]} | {n_no_cpu} | {n_untested} |"
            in summary_markdown([(paper, entries)]))
    text = ledger_text([(paper, entries)])
    assert "lego-extrapolation / classical" in text and "cpu: not reproduced" in text
    assert "untested / length-switch" in text and "untested: " in text


def test_claims_command(tmp_path, capsys):
    assert main(["claims", "fpt", "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Lu et al. 2021") and "untested / t5-less" in out
    assert "fpt-vit / vit" in out and "fpt-backbones / longformer-less" in out
    assert "fpt-init / statistics-only" in out
    assert "fpt-universal / random-worse" in out and "cpu: not run" in out
    # a study without the scale says so rather than "not run" (fpt-vit needs pretrained ViTs)
    assert "cpu" not in STUDIES["fpt-vit"].scales
    vit = out.splitlines()[out.splitlines().index(next(
        line for line in out.splitlines() if "fpt-vit / vit" in line)) + 2]
    assert "cpu: no cpu scale" in vit and "paper: not run" in vit
    # and the counts keep those claims apart from the ones not run yet
    [(_, entries)] = ledger(find_reports(tmp_path), "fpt")
    without = sum("cpu" not in STUDIES[e.study].scales for e in entries if e.study)
    assert without >= 3 and counts(entries, "cpu")[NO_SCALE] == without
    assert f"{without} in studies without it" in out
    assert counts(entries, "paper")[NO_SCALE] == 0
    assert main(["claims", "--summary", "--store", str(tmp_path)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 7  # header, rule, five papers
    assert main(["claims", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no paper 'nonsense'; papers: ") and err.count("\n") == 1


def test_site_index_groups_reports_by_paper(tmp_path):
    reports = [ReportInfo(tmp_path, s, "cpu", s, [{"claim": "x", "status": "reproduced"}], 0.0,
                          slug=s)
               for s in ("symbols-kernel", "lego-probes", "lego-staircase", "gone-study")]
    html = index_page(reports)
    lego = html.index("Zhang et al. 2022: Unveiling")
    symbols = html.index("Boix-Adsera et al. 2024")
    assert lego < html.index(">lego-probes<") < html.index(">lego-staircase<") < symbols
    assert symbols < html.index(">symbols-kernel<") < html.index("Other reports") < \
        html.index(">gone-study<")
    assert "Lu et al. 2021" not in html  # a paper without reports gets no section


def test_readme_summary_counts_every_claim_the_ledger_knows():
    """The README's per-paper table: its claims and untested columns are the ledger's, and the
    measured columns add up to the tested claims (the verdicts come from cpu runs)."""
    from pathlib import Path

    import reasonlab

    readme = (Path(reasonlab.__file__).parents[2] / "README.md").read_text()
    for paper, entries in ledger():
        [row] = [line for line in readme.splitlines()
                 if line.startswith("| ") and f"[{paper.key}](" in line]
        n_claims, *measured, n_untested = (int(c) for c in row.strip("| ").split(" | ")[2:])
        assert (n_claims, n_untested) == (len(entries), len(paper.untested)), paper.key
        assert sum(measured) == n_claims - n_untested, paper.key
