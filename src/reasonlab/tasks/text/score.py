"""The exact scorer of every text view (tasks/text/base.py says why it is exact).

This module imports nothing: an exported lm-evaluation-harness folder carries its source as its
own `utils.py` (lm_eval_export.py), so the folder scores with this very code and needs no
reasonlab installed.
"""


def extract(completion):
    """The answer a completion gives: its first whitespace-separated word ("" when none).
    A model may go on after the answer (a newline, an explanation); what it says first counts."""
    words = (completion or "").split()
    return words[0] if words else ""


def score(completion, answer):
    """1.0 when the completion's first word is exactly `answer`, else 0.0."""
    return 1.0 if extract(completion) == answer else 0.0
