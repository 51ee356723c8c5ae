"""A task as an lm-evaluation-harness task folder (`reasonlab data lm-eval TASK ... --out DIR`),
which `lm_eval --include_path DIR --tasks reasonlab_<task>` runs on any generative model.

The examples are a run's own (`train/loop.draw_splits`, as `reasonlab data export` draws them:
DataConfig's task, seed and sizes), each written as its text view (tasks/text/): the test split
is what lm-eval scores, the training split is the pool its `--num_fewshot` examples come from.
The folder stands alone, with no reasonlab needed to run or score it:

    reasonlab_<task>.yaml   the task: generate_until, greedy, stops at a newline
    utils.py                `load` (the JSON-lines files beside it, as a DatasetDict; found from
                            its own path, so the folder can move) and `process_results`, which
                            scores with a verbatim copy of tasks/text/score.py
    data/train.jsonl, data/test.jsonl   {"prompt", "answer", "index", "meta"} per example
    README.md               what the task is, its config, how it was drawn, how to run it

The scorer is exact (tasks/text/base.py): the completion's first word must be the answer.
lm-eval's own `exact_match` compares the whole completion after its own normalisation, so the
folder scores through `process_results` instead, with the same function reasonlab and the
reasoning-gym adapter (gym.py) use.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

from reasonlab.data_export import DataConfig, check_out, source, versions
from reasonlab.store import publish_folder
from reasonlab.tasks.base import Batch, Task, build_task
from reasonlab.tasks.text import text_items, view_of

SCORER = "reasonlab.tasks.text.score"
"""The scorer's module (the package's `score` is its function), copied into utils.py."""

UTILS = '''"""Loader and scorer of this lm-evaluation-harness task, written by reasonlab (see
README.md). Needs only `datasets`, which lm-eval installs."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load(**metadata):
    """The splits in data/, beside this file (lm-eval passes the YAML's metadata)."""
    import datasets

    splits = {}
    for name in ("train", "test"):
        with open(os.path.join(HERE, "data", name + ".jsonl"), encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for row in rows:  # a column of JSON text: every example's own keys, no widening
            row["meta"] = json.dumps(row["meta"], sort_keys=True)
        splits[name] = datasets.Dataset.from_list(rows)
    return datasets.DatasetDict(splits)


def process_results(doc, results):
    return {"acc": score(results[0], doc["answer"])}


# reasonlab's scorer (reasonlab/tasks/text/score.py), copied verbatim:
'''


def task_name(config: DataConfig) -> str:
    return f"reasonlab_{config.task.name}"


def yaml_text(name: str, max_gen_toks: int) -> str:
    """The task's YAML. `!function` tags name utils.py's functions, which lm-eval imports from
    the folder holding the YAML."""
    return f"""task: {name}
custom_dataset: !function utils.load
training_split: train
test_split: test
fewshot_split: train
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{answer}}}}"
target_delimiter: " "
fewshot_delimiter: "\\n\\n"
generation_kwargs:
  until: ["\\n"]
  do_sample: false
  max_gen_toks: {max_gen_toks}
process_results: !function utils.process_results
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def rows(task: Task, batch: Batch) -> list[dict[str, Any]]:
    return [{"prompt": it.prompt, "answer": it.answer, "index": k, "meta": it.meta}
            for k, it in enumerate(text_items(task, batch))]


def export(config: DataConfig, out: Path) -> dict[str, int]:
    """Write the lm-eval task folder of `config` at `out` (new or empty; written beside and
    renamed into place, so a failed export leaves nothing); returns the examples per split."""
    from reasonlab.train.loop import draw_splits

    check_out(out)
    task = build_task(config.task)
    view_of(task)  # a task without a prompt form fails before anything is drawn
    train, val, test = draw_splits(task, config.seed, config.n_train, config.n_test,
                                   config.n_val)
    if val is not None:  # the validation examples are the run's too: part of the few-shot pool
        train = Batch.cat([train, val])
    splits = {"train": rows(task, train), "test": rows(task, test)}
    name = task_name(config)
    # a generous budget in tokens: no tokenizer makes more tokens than the answer has
    # characters, plus a few for a model that says something first
    longest = max(len(r["answer"]) for s in splits.values() for r in s)
    with publish_folder(out) as tmp:  # `out` was checked empty (check_out)
        (tmp / "data").mkdir()
        for split, items in splits.items():
            with open(tmp / "data" / f"{split}.jsonl", "w", encoding="utf-8") as f:
                for row in items:
                    f.write(json.dumps(row) + "\n")
        (tmp / f"{name}.yaml").write_text(yaml_text(name, longest + 16), encoding="utf-8")
        scorer = inspect.getsource(importlib.import_module(SCORER))
        (tmp / "utils.py").write_text(UTILS + scorer.split(
            '"""', 2)[2].lstrip(), encoding="utf-8")
        (tmp / "README.md").write_text(card(task, config, name, splits, out.name),
                                       encoding="utf-8")
    return {split: len(items) for split, items in splits.items()}


def card(task: Task, config: DataConfig, name: str, splits: dict[str, list[dict[str, Any]]],
         folder: str) -> str:
    lab = versions()
    example = splits["test"][0]
    view: Any = inspect.getmodule(view_of(task))
    doc = " ".join((view.__doc__ or "").strip().split("\n\n")[0].split())
    return f"""# lm-evaluation-harness task `{name}`

{source(task)}

{doc} (reasonlab's `{view.__name__}`.)

A generative task: the model completes the prompt greedily until a newline, and scores 1 when
the first word of its completion is exactly the answer (`acc`, the mean over the test split;
`utils.py`). Test: {len(splits['test']):,} examples; few-shot pool (`--num_fewshot`):
{len(splits['train']):,}, drawn with seed {config.seed} exactly as a reasonlab run with this
task, seed and sizes draws its data (the test split is disjoint from the training draw).

```bash
lm_eval --model hf --model_args pretrained=MODEL --include_path {folder} --tasks {name}
```

## One test example

Prompt:

```
{example['prompt']}
```

Answer: `{example['answer']}`

## Task config

```json
{json.dumps(config.task.model_dump(mode="json"), indent=1)}
```

Written by reasonlab {lab['version']} (git commit {lab['git_commit']}), RESULTS_VERSION
{lab['results_version']}; seed {config.seed}, n_train {config.n_train}, n_test {config.n_test},
n_val {config.n_val}.
"""
