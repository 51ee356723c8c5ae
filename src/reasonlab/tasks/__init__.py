"""Tasks with exact ground truth. Importing this package fills the TASKS registry."""

from reasonlab.tasks import anchors, lego  # noqa: F401  (register "anchors", "lego")
from reasonlab.tasks import corpora, templates  # noqa: F401  (register "corpus_lm", "templates")
from reasonlab.tasks import mlm, programs  # noqa: F401  (register "mlm", "programs")
# FPT tasks (docs/papers.md §4, §5.4)
from reasonlab.tasks import bits, images, listops  # noqa: F401
from reasonlab.tasks import artificial, glosses, natural  # noqa: F401  (CORPORA, "gloss_class")
from reasonlab.tasks import gloss_pairs  # noqa: F401  (register "gloss_pair")
from reasonlab.tasks import glue  # noqa: F401  (register "glue": GLUE from local files)
from reasonlab.tasks.base import TASKS, Batch, Task, TaskConfig, Vocab, build_task

__all__ = ["TASKS", "Batch", "Task", "TaskConfig", "Vocab", "build_task"]
