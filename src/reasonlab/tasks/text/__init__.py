"""Every task family as text for generative models: a prompt, a one-word answer and an exact
scorer (base.py), one view per family in the module named after it. The exports build on it:
an lm-evaluation-harness task folder (lm_eval_export.py) and a reasoning-gym dataset (gym.py).
Importing this package fills TEXT_VIEWS."""

from reasonlab.tasks.text import anchors, bits, lego, listops, templates  # noqa: F401
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem, text_items, view_of
from reasonlab.tasks.text.score import extract, score

__all__ = ["TEXT_VIEWS", "TextItem", "extract", "score", "text_items", "view_of"]
