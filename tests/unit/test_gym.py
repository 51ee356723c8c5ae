"""reasonlab's tasks as reasoning-gym datasets (gym.py), created and scored through
reasoning-gym's own factory and composite dataset."""

from __future__ import annotations

import pytest

rg = pytest.importorskip("reasoning_gym")

from reasoning_gym.composite import CompositeConfig, CompositeDataset, DatasetSpec  # noqa: E402

import reasonlab.gym  # noqa: E402,F401  (registers the reasonlab_* datasets)
from reasonlab.errors import ConfigError  # noqa: E402
from reasonlab.tasks.base import build_task  # noqa: E402

SMALL = {"reasonlab_lego": {"n_clauses": 4, "n_train_vars": 2},
         "reasonlab_listops": {"min_length": 5, "max_length": 30},
         "reasonlab_bit_memory": {"n_bits": 40, "patch": 10},
         "reasonlab_templates": {"preset": "same_different"}}


@pytest.mark.parametrize("name", reasonlab.gym.NAMES)
def test_each_dataset_is_procedural_and_scores_its_own_answers(name):
    data = rg.create_dataset(name, size=6, seed=5, task=SMALL.get(name, {}))
    items = list(data)
    assert len(items) == 6
    again = rg.create_dataset(name, size=6, seed=5, task=SMALL.get(name, {}))
    assert [again[i] for i in range(6)] == items  # (seed, index) alone fixes an item
    other = rg.create_dataset(name, size=6, seed=6, task=SMALL.get(name, {}))
    assert [x["question"] for x in other] != [x["question"] for x in items]
    score = rg.get_score_answer_fn(name)
    for k, item in enumerate(items):
        assert item["metadata"]["source_dataset"] == name
        assert item["metadata"]["source_index"] == k
        assert data.score_answer(item["answer"], item) == 1.0
        assert score(item["answer"], item) == 1.0
        assert data.score_answer(None, item) == 0.0


def test_the_answer_is_the_tasks_solution_and_partial_credit_is_none():
    data = rg.create_dataset("reasonlab_lego", size=20, seed=0, task=SMALL["reasonlab_lego"])
    task = build_task({"name": "lego", **SMALL["reasonlab_lego"]})
    for item in data:
        sentence = item["question"].split("Sentence: ")[1].split("\n")[0]
        assert task.solve(sentence)[item["metadata"]["variable"]] == item["answer"]
        wrong = "-1" if item["answer"] == "+1" else "+1"
        # reasoning-gym's default would credit an answer containing the right one
        assert data.score_answer(f"{wrong} {item['answer']}", item) == 0.0


def test_reasoning_gyms_composite_routes_our_items_to_our_scorer():
    config = CompositeConfig(size=12, seed=3, datasets=[
        DatasetSpec("reasonlab_bit_xor", 1.0, {}),
        DatasetSpec("reasonlab_anchors", 1.0, {"split": "test"})])
    data = CompositeDataset(config)
    seen = set()
    for item in data:
        seen.add(item["metadata"]["source_dataset"])
        assert data.score_answer(item["answer"], item) == 1.0
        assert data.score_answer(item["answer"] + "0", item) == 0.0
    assert seen == {"reasonlab_bit_xor", "reasonlab_anchors"}


def test_a_bad_config_is_one_config_error():
    with pytest.raises(ConfigError, match="task.n_clauses"):
        rg.create_dataset("reasonlab_lego", task={"n_clauses": 0})
    with pytest.raises(ConfigError, match="create the dataset reasonlab_anchors instead"):
        rg.create_dataset("reasonlab_lego", task={"name": "anchors"})
    with pytest.raises(ConfigError, match="size=0"):
        rg.create_dataset("reasonlab_bit_xor", size=0)
