"""Template tasks with abstract symbols as a question for a generative model: the templates,
the string, and its label.

The paper's framing (Boix-Adsera et al., ICLR 2024, §2; docs/papers.md §2): a template is a
string of wildcards and regular tokens with a label, and an example substitutes distinct
symbols for its distinct wildcards; labels are real (a class, `a=+1; print(a)` -> +1) or
symbolic (a wildcard: the answer is the symbol put in its place). Test symbols come from an
alphabet never seen in training.

The prompt lists the task's templates (`$name` wildcards), so the label follows from the
prompt alone, as `TemplatesTask.solve` finds it: match the string to a template, then answer
its class, or the symbol in place of its labelling wildcard. `meta["template"]` is the
template's index.
"""

from __future__ import annotations

from reasonlab.tasks.base import Batch
from reasonlab.tasks.templates import TemplatesTask
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem


def rules(task: TemplatesTask) -> str:
    listed = "\n".join(f"  {t.text()}" for t in task.templates)
    return ("Each string instantiates one of these templates, a word starting with $ standing "
            "for any symbol (distinct $-words for distinct symbols). Answer the template's "
            "label; a $-word label means the symbol in its place.\n"
            f"Templates:\n{listed}")


@TEXT_VIEWS.register("templates")
def templates_item(task: TemplatesTask, batch: Batch, i: int, index: int) -> TextItem:
    prompt = f"{rules(task)}\nString: {task.render(batch, i)}\nAnswer:"
    return TextItem(prompt, task.label_text(batch, i),
                    {"template": int(batch.meta["template"][i, 0])})
