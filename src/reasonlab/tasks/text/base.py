"""What a text view is, its registry, and the one scorer every export uses (docs/design.md §2).

A view turns example i of a task's Batch into a `TextItem`: a prompt a generative model
completes and the answer it must produce, a single word with no whitespace in every family
(a point name, a number, a label, a digit, a bit string). The answer is the generator's own
label (never a re-derivation), and each view's test checks it against the task's reference
solver (`Task.solve`), which reads the text alone.

`score(completion, answer)` is exact: the first whitespace-separated word of the completion must
equal the answer, character for character. Nothing is normalised (no case folding, no stripped
punctuation) because the answers are symbols (`+1` and `-1`, `s17`, `01101`) whose spelling is
the whole content. lm-evaluation-harness's `process_results` and reasoning-gym's `score_answer`
both call this function, so the two libraries and reasonlab agree by construction; the scorer
module has no imports, so an exported lm-eval folder carries a copy of it (lm_eval_export.py)
and needs no reasonlab to score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reasonlab.errors import ConfigError
from reasonlab.registry import Registry
from reasonlab.tasks.base import Batch, Task
from reasonlab.tasks.text.score import extract, score  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class TextItem:
    """One example as text: `prompt` (ends with the cue the answer follows), `answer` (one
    word), `meta` (JSON-ready facts per example: LEGO's chain depth of the asked variable, the
    anchors' pair, ...), by which accuracy breaks down."""

    prompt: str
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)


View = Callable[[Task, Batch, int, int], TextItem]
"""(task, batch, i, index) -> the text item of example i; `index` is the example's place in its
split (a view that asks one of several questions, LEGO's, picks it from the index, so a split
asks each question equally often and the same example always asks the same one)."""

TEXT_VIEWS: Registry[View] = Registry("text view")
"""Task name -> its view. A task without one has no prompt form (masked-LM windows, images)."""


def view_of(task: Task) -> View:
    """The view of `task`, or one line naming the tasks that have one."""
    name = task.config.name
    if name not in TEXT_VIEWS:
        raise ConfigError(f"task {name!r} has no prompt/answer form; tasks with one: "
                          f"{', '.join(TEXT_VIEWS)}")
    return TEXT_VIEWS[name]


def text_items(task: Task, batch: Batch, start: int = 0) -> list[TextItem]:
    """Every example of `batch` as a TextItem; `start`: the index of its first example in its
    split (a chunk of a larger split)."""
    view = view_of(task)
    items = [view(task, batch, i, start + i) for i in range(len(batch))]
    for item in items:  # the scorer's contract: a one-word answer, never empty
        if not item.answer or len(item.answer.split()) != 1:
            raise ValueError(f"text view of {task.config.name!r} gave the answer "
                             f"{item.answer!r}, not one word")
    return items
