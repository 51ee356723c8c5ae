"""lego-plateau's plan: its arms isolate one remedy each, seed 0 of every arm trains first,
the combinations add exactly their remedies, the combination's shipped config is the one the
study defines, and lego-short-chain's arms are lego-plateau's on a shorter chain."""

from __future__ import annotations

import json
from pathlib import Path

from reasonlab.studies.kit.base import STUDIES
from reasonlab.studies.lego._support.remedies import (COMBINATION, COMBINED, CURRICULUM,
                                                      RECIPE, REMEDIES, combined_config)
from reasonlab.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[4]


def flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out |= flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v}
    return out


def differing(a: dict, b: dict) -> set[str]:
    """The dotted keys, down to two levels, where two flattened configs differ."""
    return {".".join(k.split(".")[:2]) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def test_each_remedy_arm_differs_from_the_recipe_in_its_remedy_only():
    specs = STUDIES["lego-plateau"]().runs("long", 3)
    assert len(specs) == 3 * (1 + len(REMEDIES) + len(COMBINED))
    single, combined = specs[:3 * (1 + len(REMEDIES))], specs[3 * (1 + len(REMEDIES)):]
    for block in (single, combined):  # screening seed first, remedies before their combination
        assert [s.seed for s in block] == sorted(s.seed for s in block)
    assert {s.arm for s in combined} == set(COMBINED)
    dumps = {(s.arm, s.seed): flat(s.config.model_dump(mode="json")) for s in specs}
    expected = {arm: ({"model.init"} if "init" in arm else {"model.attention"})
                for arm in REMEDIES}
    expected[COMBINATION] = {"model.init", "model.attention"}
    expected[CURRICULUM] = {"model.init", "model.attention", "task.min_clauses"}
    for arm, keys in expected.items():
        for seed in range(3):
            assert differing(dumps[(arm, seed)], dumps[(RECIPE, seed)]) == keys, arm
    assert all(s.config.diagnostics == ["attention"] and s.config.steps == 3000 for s in specs)


def test_the_short_chain_arms_are_the_plateau_arms_on_half_the_chain():
    short = STUDIES["lego-short-chain"]().runs("long", 3)
    long_ = {(s.arm, s.seed): s for s in STUDIES["lego-plateau"]().runs("long", 3)}
    assert [s.seed for s in short] == sorted(s.seed for s in short)
    assert {s.arm for s in short} == {RECIPE, COMBINATION}
    for s in short:
        twelve = long_[(s.arm, s.seed)]
        assert differing(flat(s.config.model_dump(mode="json")),
                         flat(twelve.config.model_dump(mode="json"))) == {
            "task.n_clauses", "task.n_train_vars", "model.max_seq_len"}  # the last derived
        assert s.config.model.max_seq_len < twelve.config.model.max_seq_len
        assert (s.config.task.n_clauses, s.config.task.n_train_vars) == (6, 3)  # the paper's 12/6
        assert (twelve.config.task.n_clauses, twelve.config.task.n_train_vars) == (12, 6)


def test_the_shipped_combination_config_is_the_studys():
    shipped = json.loads((ROOT / "configs" / "lego_plateau_combined.json").read_text())
    assert TrainConfig.build(shipped) == TrainConfig.build(combined_config("long"))
    c = TrainConfig.build(shipped)
    assert (c.model.attention.name, c.model.init.name, c.task.min_clauses) == (
        "norm_softmax", "rate", 3)
