"""Every task implements the Task protocol (tasks/base.py), which names everything the training
loop calls: a task subclasses it (so it inherits `class_mask` -> None) and overrides each of the
protocol's stubs (a stub left in place would silently return None)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from reasonlab.tasks import TASKS, Task, build_task

REQUIRED = ("sample", "splits", "render", "example_json", "solve", "n_classes", "seq_len")


@pytest.mark.parametrize("name", list(TASKS))
def test_task_subclasses_the_protocol_and_overrides_every_stub(name):
    cls = TASKS[name]
    assert Task in cls.__mro__, f"{cls.__name__} must subclass reasonlab.tasks.Task"
    stubs = [m for m in REQUIRED if inspect.getattr_static(cls, m) is
             inspect.getattr_static(Task, m)]
    assert not stubs, f"{cls.__name__} leaves the protocol's stubs {stubs}"
    assert "split" in inspect.signature(cls.sample).parameters
    assert hasattr(cls, "Config")


def test_class_mask_defaults_to_none_and_sample_takes_the_split():
    lego = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2})
    assert lego.class_mask("train") is None and lego.class_mask("test") is None
    a = lego.sample(np.random.default_rng(0), 4, "test")
    b = lego.sample(np.random.default_rng(0), 4)
    assert (a.tokens == b.tokens).all()  # LEGO draws both splits alike
    tpl = build_task({"name": "templates", "preset": "copy", "symbolic": True,
                      "n_train_symbols": 20, "n_val_symbols": 5, "n_test_symbols": 5})
    train, test = tpl.class_mask("train"), tpl.class_mask("test")
    assert train is not None and test is not None and not (train & test).any()
    drawn = tpl.sample(np.random.default_rng(0), 16, "test")
    assert test[drawn.labels].all()  # a test-split sample answers with test symbols
