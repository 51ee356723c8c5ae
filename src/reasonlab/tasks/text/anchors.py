"""Composite anchor functions as a question for a generative model: the sequence and the
anchors' functions; the answer is the value.

The paper's setting (Zhang et al. 2024, "Initialization is Critical to Whether Transformers Fit
Composite Functions by Reasoning or Memorizing", §2-3; docs/papers.md §3): "Anchors 1-4 stand
for x+5, x+1, x-2, x-8. A length-9 sequence holds a key x followed by two anchors a1 a2 among
noise items (keys and noise in 20..99); the target is g(g(x; a1); a2)."

The prompt states each anchor's function and every pair trained to a non-compositional target
(the paper's (3,4) -> x-6), so the answer follows from the prompt: a held-out pair's answer is
its composition (the "inferential" target, the task's label for it). `meta` carries the pair
and its status (compositional, custom, held-out) for accuracy per kind.
"""

from __future__ import annotations

from reasonlab.tasks.anchors import AnchorsTask
from reasonlab.tasks.base import Batch
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem


def _shift(s: int) -> str:
    return f"x{s:+d}" if s else "x"


def rules(task: AnchorsTask) -> str:
    c = task.config
    functions = ", ".join(f"{a}: {_shift(s)}" for a, s in zip(task.anchors, c.shifts))
    text = (f"The numbers 1 to {c.n_anchors} are anchors, each a function of a number x "
            f"({functions}). A key number is followed by two anchors a1 a2; the answer is the "
            "key with a1's function applied, then a2's.")
    for t in c.custom:
        text += f" Exception: the pair {t.pair[0]} {t.pair[1]} maps x to {_shift(t.shift)}."
    return text


@TEXT_VIEWS.register("anchors")
def anchors_item(task: AnchorsTask, batch: Batch, i: int, index: int) -> TextItem:
    label = task.labels_text(batch, i)
    prompt = f"{rules(task)}\nSequence: {task.render(batch, i)}\nAnswer:"
    return TextItem(prompt, label["answer"], {"pair": label["pair"], "status": label["status"],
                                              "key_pos": int(batch.meta["key_pos"][i, 0])})
