"""LEGO as a question for a generative model: the sentence, the rules of the group action, and
one variable to resolve.

The paper's definition (Zhang et al. 2022, "Unveiling Transformers with LEGO", §2): "A sentence
in our formal language is made of clauses separated by a semi-colon. A clause is of the form
a = gx with a ∈ A, g ∈ G and either x ∈ X or x ∈ A. [...] The task's goal is to take in input a
sentence with a fixed number n of clauses, given in an arbitrary order, and to output the
assigned element to each variable that appear in the sentence." Its Task 1 example: "a = +1;
b = -a; e = +b; d = -f; c = +d; f = +e".

The sentence is the task's readable form (`LegoTask.render`: every op printed, identity too).
A generative model answers one variable per prompt; example `index` of a split asks the
variable at chain depth `index mod n` (n its clauses), so a split asks every depth equally
often and accuracy breaks down by depth as the classifier's does (`meta["depth"]`). The rules
line spells the action out (`- +1 = -1`), so a prompt holds everything the answer follows from,
whatever the group.
"""

from __future__ import annotations

from reasonlab.tasks.base import Batch
from reasonlab.tasks.lego import LegoTask
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem


def rules(task: LegoTask) -> str:
    """`g x = y` for every element g and point x: the whole action, in the sentence's names."""
    act = task.action.act.tolist()
    names, points = task.op_names, task.point_names
    return ", ".join(f"{g} {x} = {points[act[gi][xi]]}" for gi, g in enumerate(names)
                     for xi, x in enumerate(points))


@TEXT_VIEWS.register("lego")
def lego_item(task: LegoTask, batch: Batch, i: int, index: int) -> TextItem:
    values = task.labels_text(batch, i)  # the generator's answer per variable
    depths = task.depths(batch, i)
    depth = index % len(depths)
    var = next(v for v, d in depths.items() if d == depth)
    prompt = (
        "Each clause `x = g y` assigns to the variable x the element g applied to y, where y "
        "is a value or a variable assigned by another clause. Clauses are separated by `;` "
        "and come in any order.\n"
        f"Rules: {rules(task)}\n"
        f"Sentence: {task.render(batch, i)}\n"
        f"What is the value of {var}?\n"
        "Answer:")
    return TextItem(prompt, values[var], {"depth": depth, "variable": var})
