"""lego-plateau's plan: its arms isolate one remedy each, seed 0 of every arm trains first,
and the combination's shipped config is the one the study defines."""

from __future__ import annotations

import json
from pathlib import Path

from reasonlab.studies.kit.base import STUDIES
from reasonlab.studies.lego.plateau import RECIPE, REMEDIES, combined_config
from reasonlab.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[4]


def flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out |= flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v}
    return out


def test_each_remedy_arm_differs_from_the_recipe_in_its_remedy_only():
    specs = STUDIES["lego-plateau"]().runs("long", 3)
    assert len(specs) == 3 * (1 + len(REMEDIES))
    assert [s.seed for s in specs] == sorted(s.seed for s in specs)  # screening seed first
    dumps = {(s.arm, s.seed): flat(s.config.model_dump(mode="json")) for s in specs}
    for arm in REMEDIES:
        for seed in range(3):
            a, b = dumps[(arm, seed)], dumps[(RECIPE, seed)]
            differ = {k.split(".")[1] for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
            assert differ == ({"init"} if "init" in arm else {"attention"}), (arm, differ)
    assert all(s.config.diagnostics == ["attention"] and s.config.steps == 3000 for s in specs)


def test_the_shipped_combination_config_is_the_studys():
    shipped = json.loads((ROOT / "configs" / "lego_plateau_combined.json").read_text())
    assert TrainConfig.build(shipped) == TrainConfig.build(combined_config("long"))
    c = TrainConfig.build(shipped)
    assert (c.model.attention.name, c.model.init.name, c.task.min_clauses) == (
        "norm_softmax", "rate", 3)
