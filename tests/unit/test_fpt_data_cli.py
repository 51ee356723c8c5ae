"""`reasonlab data <task>` prints examples of every FPT task (docs/papers.md §4)."""

from __future__ import annotations

import json

import pytest

from reasonlab.cli import main

CASES = [
    (["bit_memory", "n_bits=20", "patch=5"], "bits"),
    (["bit_xor"], "xor"),
    (["listops", "min_length=16", "max_length=64"], "value"),
    (["listops", "min_length=16", "max_length=64", "tokenisation=fpt2021"], "value"),
    (["digits"], "class"),
]


@pytest.mark.parametrize("args, label", CASES)
def test_data_prints_text_and_jsonl(args, label, capsys):
    assert main(["data", *args, "--n", "2"]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["data", *args, "--n", "2", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        ex = json.loads(line)
        assert ex["text"] and set(ex["labels"]) == {label}


def test_data_on_a_missing_dataset_is_one_line_exit_2(tmp_path, capsys):
    assert main(["data", "mnist", f"path={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "MNIST" in err
