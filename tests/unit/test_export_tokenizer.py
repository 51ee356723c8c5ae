"""An export stands alone: `AutoTokenizer` and `pipeline()` read the folder `reasonlab export`
writes, the tokenizer turning our text into our ids, the pipeline labelling each variable as
our model does, and config.json's special-token ids name tokens of the task's vocabulary."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from reasonlab.cli import main
from reasonlab.runs import load_run_model
from reasonlab.tasks.base import build_task
from reasonlab.tokenizer import input_text

transformers = pytest.importorskip("transformers")

LEGO = {"name": "lego", "n_clauses": 3, "n_train_vars": 2}
SMALL = {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 32}
GPT2 = dict(SMALL, causal=True, norm_position="pre", act="gelu_tanh")


def trained(tmp_path, task: dict, model: dict):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": task, "model": model}))
    assert main(["train", str(cfg), "steps=4", "eval_every=2", "ckpt_every=2", "n_train=64",
                 "n_test=32", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    return next((tmp_path / "o" / "runs").iterdir())


def test_autotokenizer_and_pipeline_read_a_bert_export(tmp_path):
    run = trained(tmp_path, LEGO, SMALL)
    out = tmp_path / "x"
    assert main(["export", str(run), "--format", "hf", "--out", str(out)]) == 0
    config, model = load_run_model(run)
    task = build_task(config.task)
    batch = task.sample(np.random.default_rng(1), 6)
    tok = transformers.AutoTokenizer.from_pretrained(str(out))
    texts = [input_text(task.vocab.tokens, row.tolist()) for row in batch.tokens]
    assert texts[0].startswith("[CLS] ") and " , [SEP]" in texts[0]
    enc = tok(texts, return_tensors="pt")
    assert torch.equal(enc["input_ids"], batch.tokens)  # our text -> our ids, exactly
    assert tok.decode(batch.tokens[0]) == texts[0]
    assert (tok.pad_token_id, tok.cls_token_id, tok.sep_token_id) == (0, 1, 2)

    pipe = transformers.pipeline("token-classification", model=str(out), device="cpu")
    with torch.no_grad():
        ours = model(batch.tokens).argmax(-1)  # [B, T] class of every position
    names = task.class_names()
    for i, text in enumerate(texts):
        labelled = {e["index"]: e for e in pipe(text)}
        for p in batch.label_pos[i].tolist():  # every variable's clause: the pipeline's label
            assert labelled[p]["entity"] == names[int(ours[i, p])]
            assert labelled[p]["word"] == task.vocab.tokens[int(batch.tokens[i, p])]


@pytest.mark.parametrize("task, ids", [(LEGO, (0, 1, 2)), ({"name": "anchors"}, (0, None, None))])
def test_gpt2_exports_name_special_tokens_of_the_task(tmp_path, task, ids):
    run = trained(tmp_path, task, GPT2)
    out = tmp_path / "x"
    assert main(["export", str(run), "--format", "hf", "--out", str(out)]) == 0
    raw = json.loads((out / "config.json").read_text())
    assert (raw["pad_token_id"], raw["bos_token_id"], raw["eos_token_id"]) == ids
    loaded = transformers.AutoConfig.from_pretrained(str(out))
    assert (loaded.pad_token_id, loaded.bos_token_id, loaded.eos_token_id) == ids
    vocab = json.loads((out / "tokens.json").read_text())
    assert all(i is None or i < len(vocab) for i in ids)  # never 50256 in a small vocabulary
    config, _ = load_run_model(run)
    names = build_task(config.task).class_names()
    assert [loaded.id2label[k] for k in range(len(names))] == list(names)
