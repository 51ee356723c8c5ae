"""`reasonlab data lm-eval`: the folder it writes runs in lm-evaluation-harness itself, offline,
on a tiny causal model saved locally, and lm-eval's score is ours.

The model is a 1-layer GPT-2 whose final LayerNorm is set to output one fixed vector, so it
always generates the word `+1`: lm-eval's accuracy must then be exactly the share of test
answers that are `+1` (about half on LEGO Task 1, so neither 0 nor 1), a number known from the
folder's data without running any model, and each sample's score must be our scorer's on the
completion lm-eval recorded."""

from __future__ import annotations

import json

import pytest
import torch

from reasonlab.cli import main
from reasonlab.tasks.text import score

lm_eval = pytest.importorskip("lm_eval")
transformers = pytest.importorskip("transformers")

TASK = ["lego", "n_clauses=4", "n_train_vars=2"]


def always_plus_one(folder) -> None:
    """A local GPT-2 + tokenizer that answers every prompt with `+1 +1 ...`."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "[EOS]": 1, "+1": 2, "-1": 3}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]",
                                               eos_token="[EOS]", pad_token="[EOS]")
    config = transformers.GPT2Config(vocab_size=4, n_positions=512, n_embd=8, n_layer=1,
                                     n_head=2, bos_token_id=1, eos_token_id=1, pad_token_id=1)
    model = transformers.GPT2LMHeadModel(config)
    with torch.no_grad():  # every position's hidden state: a large multiple of `+1`'s embedding
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.copy_(100 * model.transformer.wte.weight[2])
    tok.save_pretrained(folder)
    model.save_pretrained(folder)


def test_lm_eval_scores_the_exported_task_as_we_do(tmp_path, monkeypatch, capsys):
    for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(key, "1")  # nothing may come from a hub
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = tmp_path / "task"
    assert main(["data", "lm-eval", *TASK, "--n-train", "40", "--n-test", "24", "--seed", "2",
                 "--out", str(out)]) == 0
    assert "reasonlab_lego" in capsys.readouterr().out
    test = [json.loads(x) for x in (out / "data" / "test.jsonl").read_text().splitlines()]
    expected = sum(r["answer"] == "+1" for r in test) / len(test)
    assert len(test) == 24 and 0 < expected < 1

    always_plus_one(tmp_path / "model")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    # TaskManager(include_path=...) is what `lm_eval --include_path` builds
    results = simple_evaluate(
        model="hf", model_args=f"pretrained={tmp_path / 'model'},dtype=float32",
        tasks=["reasonlab_lego"], device="cpu", batch_size=8, log_samples=True,
        task_manager=TaskManager(include_path=str(out), include_defaults=False))
    acc = results["results"]["reasonlab_lego"]["acc,none"]
    assert acc == pytest.approx(expected, abs=1e-12)
    samples = results["samples"]["reasonlab_lego"]
    assert len(samples) == 24
    for s in samples:
        completion = s["filtered_resps"][0]
        assert completion.split()[0] == "+1"  # the model did answer, after the prompt
        assert s["acc"] == score(completion, s["doc"]["answer"])
        assert s["arguments"][0][0].endswith("Answer:")  # the prompt as our view wrote it


def test_the_folder_stands_alone_and_refuses_what_it_cannot_ask(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["data", "lm-eval", "anchors", "--n-train", "30", "--n-test", "20",
                 "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["README.md", "data", "reasonlab_anchors.yaml", "utils.py"]
    assert "import reasonlab" not in (out / "utils.py").read_text()
    card = (out / "README.md").read_text()
    assert str(tmp_path) not in card and "--include_path t " in card
    capsys.readouterr()
    assert main(["data", "lm-eval", "mlm", "--n-train", "30", "--n-test", "20",
                 "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: task 'mlm' has no prompt/answer form") and "\n" not in err
    assert not (tmp_path / "m").exists()
