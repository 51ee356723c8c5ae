"""The claims ledger lists, per paper, the rules that decide only from more units than their
study runs: each calibration case's declared `decides_at` (kit/calibration.py), with the units
per arm the study runs at each scale, so that an inconclusive verdict of such a rule reads as
the design's, not as bad luck."""

from dataclasses import replace

from reasonlab.studies import STUDIES
from reasonlab.studies.kit.calibration import Exempt, families_cases
from reasonlab.studies.kit.calibration_engine import Mixture
from reasonlab.studies.kit.ledger import Decides, decides, ledger, ledger_text


def test_every_declared_decides_at_is_in_its_papers_ledger():
    book = {p.key: p for p, _ in ledger()}
    for family, cases in families_cases():
        if family == "kit":  # the kit's generic rules belong to no paper
            continue
        declared = {c.name.removeprefix("reasonlab.studies.") for c in cases
                    if not isinstance(c, Exempt) and c.decides_at is not None}
        assert {d.rule for d in book[family].decides} == declared, family


def test_a_sim_lists_its_studys_units_at_every_scale():
    classical = [d for d in decides("lego") if d.rule == "lego.verdicts.classical_verdict"]
    units = tuple((s, STUDIES["lego-extrapolation"].default_seeds[s])
                  for s in STUDIES["lego-extrapolation"].scales if s != "smoke")
    # two cases (supervised and partly-fitted noise) of one rule and study: one line
    assert classical == [Decides("lego.verdicts.classical_verdict", 6, units,
                                 "lego-extrapolation")]
    [chance] = [d for d in decides("symbols") if d.rule.endswith("chance_verdict")]
    assert chance.text() == ("symbols-mlp-vs-transformer: symbols.verdicts.chance_verdict "
                             "decides from 6 units per arm; runs 5 at cpu, 3 at paper")


def test_a_mixture_case_lists_its_studys_scales():
    cases = dict(families_cases("lego"))["lego"]
    plateau = [c for c in cases if isinstance(c, Mixture) and c.decides_at is not None
               and c.rule.__name__ == "plateau_verdict"]
    assert plateau and all(c.study == "lego-plateau" for c in plateau)
    [d] = [d for d in decides("lego") if d.rule == "lego.verdicts.plateau_verdict"]
    assert d.units == (("long", 3), ("paper", 3)) and d.decides_at == 4


def test_the_ledger_text_says_where_a_rule_decides():
    book = ledger(paper="lego")
    text = ledger_text(book)
    assert "rules that decide only from more units" in text
    assert ("lego-extrapolation: lego.verdicts.classical_verdict decides from 6 units per arm; "
            "runs 3 at cpu, 3 at long, 3 at paper") in text
    # a paper none of whose rules declares decides_at has no such block
    [(paper, entries)] = ledger(paper="anchors")
    assert paper.decides
    bare = ledger_text([(replace(paper, decides=()), entries)])
    assert "rules that decide only from more units" not in bare and paper.title in bare
