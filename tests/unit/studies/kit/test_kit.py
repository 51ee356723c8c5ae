"""The study kit: deep-merged run grids, the registry naming studies, seeds per scale, the
Results accessors and the report builder, on hand-made inputs."""

import dataclasses
import inspect
import json

import pytest

from reasonlab.errors import ConfigError
from reasonlab.registry import Registry
from reasonlab.studies import STUDIES
from reasonlab.studies.kit.base import (Claim, Report, Results, Study, StudyRegistry, Verdict, grid,
                                        merge)
from reasonlab.studies.lego.common import recipe


def test_merge_is_deep_and_leaves_its_inputs_alone():
    base = {"model": {"d_model": 64, "n_layers": 2}, "steps": 10}
    over = {"model": {"n_layers": 4}, "task": {"name": "lego"}}
    got = merge(base, over, {"steps": 20})
    assert got == {"model": {"d_model": 64, "n_layers": 4}, "steps": 20, "task": {"name": "lego"}}
    assert base == {"model": {"d_model": 64, "n_layers": 2}, "steps": 10}
    assert merge({"a": {"b": 1}}, {"a": 5}) == {"a": 5}  # a non-dict replaces a dict


def test_grid_nests_arm_point_seed_and_applies_every_override():
    specs = grid(recipe("smoke"), {"A": {}, "B": {"model": {"tie_layers": True}}},
                 [{"n_train": 256}, {"n_train": 512}], seeds=2)
    assert [(s.arm, s.config.n_train, s.seed) for s in specs] == [
        (a, n, s) for a in "AB" for n in (256, 512) for s in (0, 1)]
    assert all(s.config.seed == s.seed for s in specs)
    assert [s.config.model.tie_layers for s in specs] == [False] * 4 + [True] * 4
    assert {s.config.model.d_model for s in specs} == {32}  # the recipe's, kept under merges
    with pytest.raises(ConfigError):  # overrides are validated like any config
        grid(recipe("smoke"), {"A": {"model": {"d_modl": 3}}})


def test_the_registry_names_studies_and_seeds_merge_per_scale():
    reg = StudyRegistry("study")

    @reg.register("toy")
    class Toy(Study):
        title, claims = "t", ()
        default_seeds = {"cpu": 2}

        def analyse(self, results, out):
            return Report(self.title, out)

    class Child(Toy):
        default_seeds = {"paper": 5}

    assert Toy.name == "toy" and isinstance(reg, Registry)
    assert Toy.default_seeds == {"smoke": 1, "cpu": 2, "long": 3, "paper": 3}
    assert Child.default_seeds == {"smoke": 1, "cpu": 2, "long": 3, "paper": 5}
    # measured time comes from a family's measured.json: a class outside a family has none
    assert (Child.measured("cpu"), Child.measured("long")) == (None, None)
    with pytest.raises(NotImplementedError):  # trains = True with no runs() is a bug
        Toy().runs("smoke", 1)

    class Computes(Toy):
        trains = False

    assert Computes().runs("cpu", 3) == []
    with pytest.raises(ConfigError, match="takes no key=value overrides"):  # unless it says
        Computes().check_overrides("cpu", {"steps": 2})
    for name, cls in STUDIES.items():  # every study is named by its registry entry only
        assert cls.name == name and "\n    name = " not in inspect.getsource(cls)


def result(acc: float, depth: list[float]) -> dict:
    return {"final": {"acc": acc, "acc_by_depth": depth},
            "curve": [{"step": 10, "acc_by_depth": depth}]}


def test_results_accessors():
    specs = grid(recipe("smoke"), {"A": {}, "B": {}}, [{"n_train": 512}, {"n_train": 256}], 2)
    accs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    res = Results([(s, result(a, [a, 1 - a])) for s, a in zip(specs, accs)], "smoke", 2)
    assert res.scale == "smoke" and res.seeds == 2 and res.first is specs[0]
    assert res.sweep() == {"A": {256: [0.3, 0.4], 512: [0.1, 0.2]},
                           "B": {256: [0.7, 0.8], 512: [0.5, 0.6]}}  # x sorted, seed order
    assert list(res.curves(["B"])) == ["B"] and len(res.curves()["A"]) == 4


def test_analysis_sample_size_follows_an_overridden_n_test():
    specs = grid(recipe("smoke"), {"A": {}, "B": {}}, seeds=1)
    pairs = [(s, result(0.5, [0.5])) for s in specs]
    assert Results(pairs, "paper", 1).sample_size(4000) == 4000  # the study's own recipe
    trial = Results(pairs, "paper", 1, {"steps": 2, "n_test": 64})
    assert trial.sample_size(4000) == 64 and trial.sample_size(10) == 10
    # what an analysis selects keeps the overrides
    assert trial.where(arm="A").sample_size(500) == 64
    assert all(r.sample_size(500) == 64 for r in trial.by("arm").values())
    assert trial.subset(pairs[:1]).overrides == trial.overrides


def test_report_builder_writes_tables_figures_and_verdicts(tmp_path):
    specs = grid(recipe("smoke"), {"A": {}, "B": {"model": {"tie_layers": True}}}, seeds=2)
    res = Results([(s, result(0.5, [0.9, 0.5])) for s in specs], "smoke", 2)
    rep = Report("T", tmp_path).recipe(res)
    rep.sweep({"A": {1: [0.5, 0.7]}}, "n", "H", name="s.png", title="t")
    rep.verdicts = [Verdict(Claim("k", "c", "s"), "inconclusive", "x 1")]
    text = rep.markdown()
    assert "`model.d_model=32`" in text and "| B | True |" in text  # shared vs per-arm settings
    assert "A 2 seeds, B 2 seeds." in text
    tasks = Results([(dataclasses.replace(s, arm="A"), result(0.5, [0.9])) for s in specs],
                    "smoke", 2)  # one arm holding two configs per seed: 4 runs, 2 seeds
    assert "A 4 runs (2 seeds)." in Report("T", tmp_path).recipe(tasks).markdown()
    assert "| A | 0.600 ± 0.141 |" in text
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG" and "(s.png)" in text
    rep.write(tmp_path)
    assert json.loads((tmp_path / "verdicts.json").read_text())[0]["status"] == "inconclusive"


def test_claims_are_addressed_by_key_and_judged_exactly_once():
    from reasonlab.studies.kit.base import one_verdict_per_claim

    a, b = Claim("a", "claim a", "§1"), Claim("b", "claim b", "§2", paper_numbers="1.66 vs 1.49")

    class Two(Study):
        name, title, claims = "two", "t", (a, b)

        def analyse(self, results, out):
            return Report(self.title, out)

    assert Two.claim("b") is b and Two.claim("b").paper_numbers == "1.66 vs 1.49"
    with pytest.raises(KeyError, match="declares no claim 'c'; its claims: a, b"):
        Two.claim("c")
    with pytest.raises(TypeError, match="unique"):
        type("Twice", (Two,), {"claims": (a, a)})
    va, vb = Verdict(a, "reproduced", "1 vs 2"), Verdict(b, "inconclusive", "3 vs 4")
    assert one_verdict_per_claim(Two(), [vb, va]) == [va, vb]  # declared order
    for bad in ([va], [va, vb, vb], [va, vb, Verdict(Claim("c", "c", "s"), "reproduced", "")]):
        with pytest.raises(RuntimeError, match="one verdict per declared claim"):
            one_verdict_per_claim(Two(), bad)


def test_every_study_declares_unique_keys_with_sources():
    for name, cls in STUDIES.items():
        keys = [c.key for c in cls.claims]
        assert keys and len(set(keys)) == len(keys), name
        assert all(c.text and c.source for c in cls.claims), name
