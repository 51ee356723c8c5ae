"""Every task family as a prompt and a one-word answer (tasks/text/): the answer is the one the
prompt determines, found here by reading the prompt alone (its rules and its sentence), so a
view whose prompt leaves out what the answer follows from, or whose answer is not the
generator's label, fails; and the scorer is exact."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import build_task
from reasonlab.tasks.text import TEXT_VIEWS, extract, score, text_items

CONFIGS = {
    "lego": {"name": "lego", "n_clauses": 5, "n_train_vars": 2},
    "lego s3": {"name": "lego", "group": "s3", "n_clauses": 4, "n_train_vars": 2},
    "lego mixed lengths": {"name": "lego", "n_clauses": 6, "min_clauses": 3},
    "anchors": {"name": "anchors"},
    "templates": {"name": "templates", "preset": "variable_binding"},
    "templates, symbolic": {"name": "templates", "preset": "random", "symbolic": True},
    "listops": {"name": "listops", "min_length": 5, "max_length": 40},
    "bit_xor": {"name": "bit_xor"},
    "bit_memory": {"name": "bit_memory", "n_bits": 60, "patch": 10, "n_patterns": 3},
}


def line(prompt: str, head: str) -> str:
    return next(x for x in prompt.splitlines() if x.startswith(head))[len(head):].strip()


def lego_from_prompt(prompt: str) -> str:
    """Resolve the asked variable from the prompt's rules and sentence alone."""
    act = {}
    for rule in line(prompt, "Rules:").split(", "):
        g, x, _, y = rule.split()
        act[g, x] = y
    clauses = {}
    for clause in line(prompt, "Sentence:").split(";"):
        var, _, g, arg = clause.split()
        clauses[var] = (g, arg)
    asked = re.search(r"What is the value of (\S+)\?", prompt).group(1)

    def value(v: str) -> str:
        g, arg = clauses[v]
        return act[g, value(arg) if arg in clauses else arg]

    return value(asked)


def anchors_from_prompt(prompt: str) -> str:
    shifts = {int(a): int(s[1:]) for a, s in re.findall(r"(\d+): (x[+-]\d+)", prompt)}
    custom = {(int(a), int(b)): int(s[1:]) for a, b, s in
              re.findall(r"the pair (\d+) (\d+) maps x to (x[+-]\d+)", prompt)}
    nums = [int(w) for w in line(prompt, "Sequence:").split()]
    i = next(k for k in range(1, len(nums) - 1) if nums[k] in shifts and nums[k + 1] in shifts)
    key, a1, a2 = nums[i - 1], nums[i], nums[i + 1]
    return str(key + custom.get((a1, a2), shifts[a1] + shifts[a2]))


def from_prompt(task, prompt: str) -> str:
    """The answer the prompt determines: our own readings for LEGO and the anchors (which
    use only the prompt's rules), the task's reference solver on the prompt's text for the
    others (their rules are fixed: templates are listed and matched by the solver)."""
    name = task.config.name
    if name == "lego":
        return lego_from_prompt(prompt)
    if name == "anchors":
        return anchors_from_prompt(prompt)
    if name == "templates":
        for t in task.templates:
            assert f"  {t.text()}" in prompt  # every template is listed
        return task.solve(line(prompt, "String:"))["label"]
    if name == "listops":
        return task.solve(line(prompt, "Expression:"))["value"]
    if name == "bit_xor":
        return task.solve(line(prompt, "Strings:"))["xor"]
    body = prompt.split("\n")[1]  # bit memory: the patterns and Q
    return task.solve(body)["bits"]


@pytest.mark.parametrize("case", CONFIGS)
def test_each_answer_is_what_the_prompt_determines(case):
    task = build_task(CONFIGS[case])
    for split in ("train", "test"):
        batch = task.sample(np.random.default_rng(3), 24, split)
        items = text_items(task, batch)
        assert len(items) == 24
        for item in items:
            assert item.prompt.endswith("Answer:")
            assert from_prompt(task, item.prompt) == item.answer, item.prompt
            assert len(item.answer.split()) == 1


def test_every_family_of_the_issue_has_a_view():
    assert set(TEXT_VIEWS) >= {"lego", "anchors", "templates", "listops", "bit_xor",
                               "bit_memory"}


def test_lego_asks_every_depth_equally_often_and_its_answer_is_the_label():
    task = build_task(CONFIGS["lego"])
    batch = task.sample(np.random.default_rng(0), 20)
    items = text_items(task, batch)
    assert [it.meta["depth"] for it in items] == [k % 5 for k in range(20)]
    for i, it in enumerate(items):  # the generator's label of the asked variable
        assert task.labels_text(batch, i)[it.meta["variable"]] == it.answer
        assert task.depths(batch, i)[it.meta["variable"]] == it.meta["depth"]
    # a chunk that starts later in its split goes on cycling where it is
    assert text_items(task, batch[:3], start=7)[0].meta["depth"] == 2


def test_anchors_held_out_pairs_are_asked_their_composition():
    task = build_task(CONFIGS["anchors"])
    _, test = task.splits(np.random.default_rng(0), 16, 64)
    items = text_items(task, test)
    held = [it for it in items if it.meta["status"] == "held-out"]
    assert held and all(it.meta["pair"] == "4 3" for it in held)
    assert all(anchors_from_prompt(it.prompt) == it.answer for it in held)


def test_tasks_without_a_prompt_form_are_refused_in_one_line():
    task = build_task({"name": "mlm"})
    batch = task.sample(np.random.default_rng(0), 2)
    with pytest.raises(ConfigError, match="no prompt/answer form; tasks with one: anchors"):
        text_items(task, batch)
    listops = build_task({"name": "listops", "tokenisation": "fpt2021", "min_length": 5,
                          "max_length": 40})
    with pytest.raises(ConfigError, match="tokenisation=lra"):
        text_items(listops, listops.sample(np.random.default_rng(0), 1))


def test_the_scorer_is_exact_on_the_first_word():
    assert score("+1", "+1") == 1.0
    assert score("  +1\nbecause b = - a", "+1") == 1.0  # what it says first counts
    assert score("-1 +1", "+1") == 0.0
    assert score("+1.", "+1") == 0.0  # symbols are compared as spelled
    assert score("", "+1") == 0.0 and score(None, "+1") == 0.0
    assert extract(" s17 s4") == "s17"
