"""TrainConfig.stop_at: a run that ends at the first evaluation whose headline accuracy reaches
a level computes exactly the prefix of the run without it, and a run killed after stopping
resumes to nothing more."""

import json
from pathlib import Path

from reasonlab.train.config import TrainConfig, config_id
from reasonlab.train.loop import read_metrics, train
from reasonlab.train.metrics import headline

CONFIG = {"task": {"name": "bit_memory", "n_bits": 20, "patch": 10},
          "model": {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 32,
                    "arch": {"name": "fpt"}},
          "trainable": "fpt", "n_train": 128, "n_test": 32, "batch_size": 16, "steps": 12,
          "eval_every": 2, "ckpt_every": 4, "threads": 1}


def run(tmp: Path, name: str, **over) -> tuple[dict, list[dict]]:
    d = tmp / "runs" / name
    last = train(TrainConfig.build({**CONFIG, **over}), d, quiet=True)
    return last, read_metrics(d)


def test_stop_at_ends_at_the_first_evaluation_reaching_the_level(tmp_path):
    _, full = run(tmp_path, "full")
    level = sorted(headline(m) for m in full)[len(full) // 2]  # reached partway through
    first = next(m for m in full if headline(m) >= level)
    last, curve = run(tmp_path, "stop", stop_at=level)
    assert last["step"] == first["step"] < CONFIG["steps"]
    assert curve == full[: len(curve)] and curve[-1] == first  # bitwise the prefix


def test_a_level_never_reached_trains_every_step_as_without_it(tmp_path):
    _, full = run(tmp_path, "full")
    assert max(headline(m) for m in full) < 1.0  # 12 steps never recall every masked bit
    _, never = run(tmp_path, "never", stop_at=1.0)
    assert never == full


def test_a_stopped_run_resumes_to_nothing_more(tmp_path):
    _, full = run(tmp_path, "full")
    level = headline(full[0])  # the first evaluation reaches it
    last, curve = run(tmp_path, "stop", stop_at=level)
    again, curve2 = run(tmp_path, "stop", stop_at=level)  # a kill before result.json
    assert again == last and curve2 == curve and len(curve) == 1


def test_stop_at_enters_the_run_id_only_when_set():
    plain = TrainConfig.build(CONFIG)
    assert config_id(plain) == config_id(TrainConfig.build({**CONFIG, "stop_at": None}))
    assert config_id(plain) != config_id(TrainConfig.build({**CONFIG, "stop_at": 0.8}))
    assert "stop_at" not in json.dumps(plain.model_dump(mode="json", exclude_defaults=True))


def test_a_stopped_run_that_keeps_no_weights_resumes_to_nothing_more(tmp_path):
    """keep_checkpoints="none": the stop's checkpoint is the record alone (a stopped run is
    finished), and a resume after it trains nothing, as one that kept its weights."""
    from safetensors.torch import load_file

    _, full = run(tmp_path, "full")
    level = headline(full[2])  # reached by step 6, long before the last step
    kept, curve = run(tmp_path, "kept", stop_at=level)
    last, slim = run(tmp_path, "none", stop_at=level, keep_checkpoints="none")
    assert last == kept and slim == curve and last["step"] < CONFIG["steps"]
    tensors = load_file(str(tmp_path / "runs" / "none" / "ckpt" / "state.safetensors"))
    assert not any(k.startswith(("model.", "optim.")) for k in tensors)
    again, slim2 = run(tmp_path, "none", stop_at=level, keep_checkpoints="none")
    assert again == last and slim2 == slim
