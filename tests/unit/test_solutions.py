"""Solution analysis against oracle "models" whose held-out answers are chosen by hand."""

import numpy as np
import pytest
import torch
from torch import nn

from reasonlab.analysis.solutions import FIT_THRESHOLD, classify, heldout_solutions
from reasonlab.tasks import build_task
from reasonlab.train.metrics import evaluate


class Oracle(nn.Module):
    """Answers every sequence from its numbers: trained pairs right (unless `wrong_seen`),
    held-out pair (4,3) by `rule`: x-10 (inferential), x-6 (symmetric) or x+1 (neither)."""

    def __init__(self, task, rule, wrong_seen=0.0):
        super().__init__()
        self.task, self.rule, self.wrong_seen = task, rule, wrong_seen

    def forward(self, tokens, label_pos, pad_mask=None):
        logits = torch.zeros(len(tokens), 1, self.task.n_classes)
        for i, row in enumerate(tokens.tolist()):
            nums = [int(w) for w in self.task.vocab.decode(row)]
            j = next(k for k in range(len(nums)) if nums[k] <= 4)
            x, pair = nums[j - 1], (nums[j], nums[j + 1])
            if pair == (4, 3):
                y = x + {"inferential": -10, "symmetric": -6, "neither": 1}[self.rule]
            else:
                y = int(self.task.solve(" ".join(map(str, nums)))["answer"])
                if (i % 100) < 100 * self.wrong_seen:
                    y += 1
            logits[i, 0, y - self.task.target_lo] = 1.0
        return logits


@pytest.mark.parametrize("rule", ["inferential", "symmetric", "neither"])
def test_verdicts_from_oracles(rule):
    t = build_task({"name": "anchors"})
    _, test = t.splits(np.random.default_rng(0), 10, 800)
    (sol,) = heldout_solutions(Oracle(t, rule), t, test, batch_size=300)
    assert sol.pair == (4, 3) and sol.n == 50 and sol.seen_acc == 1.0
    want = {"inferential": (1, 0, 0), "symmetric": (0, 1, 0), "neither": (0, 0, 1)}[rule]
    assert (sol.inferential, sol.symmetric, sol.neither) == want
    assert sol.verdict == rule
    # the generic metrics agree: held-out labels are the inferential target
    m = evaluate(Oracle(t, rule), test, 300)
    assert m["acc_by_pair"][t.pair_id(4, 3)] == want[0]
    assert m["acc_supervised"] == 1.0 and len(m["acc_by_key_pos"]) == 7


def test_unfit_when_seen_pairs_not_learned():
    t = build_task({"name": "anchors"})
    _, test = t.splits(np.random.default_rng(1), 10, 800)
    (sol,) = heldout_solutions(Oracle(t, "inferential", wrong_seen=0.2), t, test)
    assert sol.seen_acc == pytest.approx(0.8, abs=0.05) and sol.seen_acc < FIT_THRESHOLD
    assert sol.verdict == "unfit" and sol.inferential == 1.0


def test_classify_rule():
    assert classify(0.95, 0.6, 0.3) == "inferential"
    assert classify(0.95, 0.2, 0.5) == "symmetric"
    assert classify(0.95, 0.4, 0.4) == "neither"
    assert classify(0.5, 1.0, 0.0) == "unfit"
