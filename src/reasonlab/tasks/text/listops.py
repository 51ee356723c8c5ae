"""ListOps as a question for a generative model: the expression; the answer is its value.

The FPT paper's definition (Lu et al. 2021, "Evaluation tasks - 3. ListOps"):

    "Input: sequence of list operations resulting in a single digit
     [ MAX 4 3 [ MIN 2 3 ] 1 0 ]
     Output: the result of the input operations: 4"

The expression is the benchmark's token form (`[MAX 4 3 [MIN 2 3 ] 1 0 ]`); the fpt2021
tokenisation drops the closing brackets and truncates, so its text no longer determines the
answer and has no prompt form.
"""

from __future__ import annotations

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import Batch
from reasonlab.tasks.listops import ListOpsTask
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem

RULES = ("Evaluate the expression. `[OP` opens an operation on the values up to its `]`: MAX "
         "and MIN, MED the median (rounded down), SM the sum modulo 10. Every value is a digit.")


@TEXT_VIEWS.register("listops")
def listops_item(task: ListOpsTask, batch: Batch, i: int, index: int) -> TextItem:
    if task.config.tokenisation != "lra":
        raise ConfigError("task.tokenisation=fpt2021 drops the closing brackets, so its text "
                          "does not determine the answer; use task.tokenisation=lra")
    prompt = f"{RULES}\nExpression: {task.render(batch, i)}\nAnswer:"
    return TextItem(prompt, str(int(batch.labels[i, 0])),
                    {"tokens": int(batch.label_pos[i, 0]) + 1})
