"""The FPT folder as a newcomer reads it, and what its refactors must keep.

- One module per study, named after it (fpt-init: init.py); support code only in the family's
  fixed modules or _support/; every `[studies.X]` of claims.toml has its module and the other
  way round.
- Every study's runs are the stored runs: the identity of each study's runs (what its run ids
  hash, less RESULTS_VERSION) is pinned at smoke and cpu scale, as written down from the code
  before the folder was rearranged. A store of CPU runs is reused by id, so a change that moves
  one run's id orphans it.
- One `by_backbone`: the runs without a backbone (the LSTMs) join every backbone, and the
  split keeps the command line's recipe overrides (an analysis sizes its samples by them).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import pkgutil


import reasonlab.studies.fpt as fpt
from reasonlab.studies import STUDIES
from reasonlab.studies.fpt.common import by_backbone
from reasonlab.studies.kit.claims import family_file
from reasonlab.studies.kit.core import Results, RunSpec
from reasonlab.train.config import TrainConfig, id_view

FIXED = {"common", "analysis", "verdicts", "paper", "calibration", "_support"}
"""The family's modules that are not studies (docs/adding-a-family.md)."""


def _study_modules() -> dict[str, str]:
    """module name -> the study it registers (fpt-<module>, '_' read as '-')."""
    return {m.name: f"fpt-{m.name.replace('_', '-')}" for m in pkgutil.iter_modules(fpt.__path__)
            if m.name not in FIXED}


def test_each_study_module_registers_the_study_it_is_named_after():
    modules = _study_modules()
    for module, study in modules.items():
        importlib.import_module(f"reasonlab.studies.fpt.{module}")
        registered = [n for n, cls in STUDIES.items()
                      if cls.__module__ == f"reasonlab.studies.fpt.{module}"]
        assert registered == [study], f"fpt/{module}.py registers {registered}, not [{study}]"
    family = {n for n, cls in STUDIES.items() if cls.__module__.startswith(fpt.__name__ + ".")}
    assert family == set(modules.values())  # no study in a support module


def test_claims_file_and_study_modules_name_the_same_studies():
    assert set(family_file(fpt.__name__)["studies"]) == set(_study_modules().values())


def test_support_code_lives_under_the_fixed_names_only():
    support = importlib.import_module("reasonlab.studies.fpt._support")
    names = {m.name for m in pkgutil.iter_modules(support.__path__)}
    assert "backbone" in names and "slides" in names
    for name in names:  # a support module registers no study
        mod = importlib.import_module(f"{support.__name__}.{name}")
        assert not [n for n, cls in STUDIES.items() if cls.__module__ == mod.__name__]


PINNED = {
    "fpt-attention/smoke": (4, "98d0df6f9f1c9875"),
    "fpt-attention/cpu": (12, "6f9f3c8b230e9874"),
    "fpt-backbones/smoke": (3, "b8a8fd677d1414d9"),
    "fpt-convergence/smoke": (8, "b14e733345392555"),
    "fpt-convergence/cpu": (60, "a29486009a92cd42"),
    "fpt-fitting/smoke": (8, "966a2d3598bf6b61"),
    "fpt-fitting/cpu": (24, "83c11a03d6ba7627"),
    "fpt-freeze-ablation/smoke": (24, "9929fbcfd326ef75"),
    "fpt-freeze-ablation/cpu": (72, "dbb4f4c6e0a66dee"),
    "fpt-freeze-fewer/smoke": (16, "5d118a73a138957c"),
    "fpt-freeze-fewer/cpu": (48, "9aa8ee17873bae34"),
    "fpt-freeze-random/smoke": (24, "d1512d19954c1a4e"),
    "fpt-freeze-random/cpu": (72, "8a99b7f1c9569986"),
    "fpt-init/smoke": (6, "2e419db0d15bf6ea"),
    "fpt-init/cpu": (54, "779d8f22ebc560d0"),
    "fpt-lstm/smoke": (12, "096a2ae47a9e750a"),
    "fpt-lstm/cpu": (81, "c918b075d3797f23"),
    "fpt-modality/smoke": (8, "8dd7e151f3d5fb77"),
    "fpt-modality/cpu": (60, "a0ec71c326d468fb"),
    "fpt-scaling/smoke": (8, "37e26596aec60c1d"),
    "fpt-scaling/cpu": (36, "18ae1c2a3f3b4edf"),
    "fpt-universal/smoke": (20, "293437f6b4de5c9d"),
    "fpt-universal/cpu": (90, "7f5ec1b144ded049"),
    "fpt-vit/smoke": (2, "c13d2ee2844c5f75"),
}
"""study/scale -> (runs, digest of their identities): written down once, see the module doc.
If a change means to move runs (a recipe change), write the new values here:
`python tests/unit/studies/fpt/test_layout.py` prints them."""


def digests() -> dict[str, tuple[int, str]]:
    """study/scale -> (runs, sha256 of the sorted run identities: task and non-default config
    under the first version's names, what config_id hashes besides RESULTS_VERSION)."""
    out = {}
    for name, cls in sorted(STUDIES.items()):
        if not name.startswith("fpt-"):
            continue
        for scale in ("smoke", "cpu"):
            if scale not in cls.scales:
                continue
            specs = cls().runs(scale, cls.default_seeds[scale])
            ids = sorted(json.dumps({"task": s.config.task.name, "config": id_view(
                s.config.model_dump(mode="json", exclude_defaults=True))}, sort_keys=True)
                for s in specs)
            out[f"{name}/{scale}"] = (len(ids), hashlib.sha256(
                "\n".join(ids).encode()).hexdigest()[:16])
    return out


def test_every_study_runs_the_runs_it_ran_before():
    assert digests() == PINNED


def _spec(arm: str, **factors: object) -> RunSpec:
    return RunSpec(arm, 0, TrainConfig.build({"task": {"name": "listops"}, "model": {}}),
                   {"arm": arm, **factors})


def test_by_backbone_adds_the_runs_without_a_backbone_to_each_and_keeps_overrides():
    runs = Results([(_spec("FPT", backbone="smollm2"), {"i": 0}),
                    (_spec("LSTM"), {"i": 1}),
                    (_spec("FPT", backbone="minilm"), {"i": 2})], "smoke", 1, {"n_test": 8})
    split = by_backbone(runs)
    assert list(split) == ["smollm2", "minilm"]
    assert [r["i"] for _, r in split["smollm2"]] == [0, 1]
    assert [r["i"] for _, r in split["minilm"]] == [2, 1]
    assert all(rs.overrides == {"n_test": 8} and rs.scale == "smoke" for rs in split.values())
    assert split["minilm"].sample_size(64) == 8


if __name__ == "__main__":
    for k, v in digests().items():
        print(f'    "{k}": {v},')
