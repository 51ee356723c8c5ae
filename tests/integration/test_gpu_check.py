"""scripts/gpu-check without a GPU: its CPU-capable sections at toy sizes (--device cpu
--quick), the configs it times at paper shapes (random weights, no checkpoint package), and
the wrapper's one-line refusal where no CUDA device is."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_check.py"


def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), e.get("PYTHONPATH")) if p)
    e.pop("OUT", None)
    return e


@pytest.mark.slow
def test_the_cpu_capable_sections_run_and_report(tmp_path):
    """determinism (two runs, and a SIGKILLed child resumed by `reasonlab train`, compared
    bitwise), the step timings before and after the sync-free loop, the precision comparison
    and a smoke study through the CLI: JSON and Markdown written."""
    # a budget no section reaches on a slow runner: this test is of the results (the
    # deadlines are test_gpu_check_offline.py's)
    p = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--out",
                        str(tmp_path), "--budget", "1500", "--only", "env", "determinism",
                        "steps", "precision", "smoke"], capture_output=True, text=True,
                       env=env(), timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads((tmp_path / "gpu-check.json").read_text())
    sections = data["sections"]
    assert {k: (v["status"], v["cut_short"]) for k, v in sections.items()} == dict.fromkeys(
        ["env", "determinism", "steps", "precision", "smoke"], ("ok", False)), sections
    strict = sections["determinism"]["result"]["strict"]
    assert strict["rerun"]["bitwise"] and strict["resume"]["bitwise"]
    assert strict["killed"]["by_sigkill"] and 0 < strict["killed"]["checkpoint_step"] < 24
    steps = sections["steps"]["result"]
    for family in gpu_check().QUICK_FAMILIES:
        r = steps[family]
        assert r["after_ms"] > 0 and r["before_ms"] > 0 and r["plan_ops_per_step"] > 0, r
    bf16 = sections["precision"]["result"]["bf16"]
    assert bf16["grad_cosine"] > 0.99 and bf16["logits_rel_diff"] < 0.05
    assert sections["precision"]["result"]["tf32"]["logits_max_abs_diff"] == 0  # CPU: fp32
    assert sections["smoke"]["result"]["lego-extrapolation"]["returncode"] == 0
    md = (tmp_path / "gpu-check.md").read_text()
    assert "## determinism: ok" in md and "| lego BERT-base |" in md


def test_every_family_has_a_paper_shape_with_random_weights():
    """The configs the steps section times: the paper's shapes and batches, no checkpoint
    to load (GPT-2 and BERT-base shapes with random weights), no pretraining run."""
    from reasonlab.model.pretrained import fixed_fields

    g = gpu_check()
    for name in g.FAMILIES:
        c = g.family_config(name, "cpu", quick=False)
        assert c.init_from is None, name
        assert c.steps == 10**6 and c.n_val == 0, name
    gpt2 = g.family_config("fpt GPT-2 shape", "cpu", False)
    arch = fixed_fields("gpt2")
    assert (gpt2.model.d_model, gpt2.model.n_layers, gpt2.model.causal) == (
        arch["d_model"], arch["n_layers"], True)
    assert gpt2.trainable is not None  # the FPT groups train, the rest is frozen
    bert = g.family_config("lego BERT-base", "cpu", False)
    assert (bert.model.d_model, bert.model.n_layers, bert.batch_size) == (768, 12, 1000)


def test_the_wrapper_refuses_without_cuda(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    p = subprocess.run([str(ROOT / "scripts" / "gpu-check"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300,
                       env={**env(), "PYTHON": sys.executable})
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no CUDA device"), err


def test_the_markdown_summarises_every_section():
    g = gpu_check()
    md = g.markdown({"started": "now", "wall_s": 3, "budget_s": 450, "sections": {
        "env": {"status": "ok", "wall_s": 1, "result": {"torch": "2.11"}},
        "steps": {"status": "ok", "wall_s": 2, "result": {"fpt": {"after_ms": 41.5}}},
        "compile": {"status": "skipped", "why": "10 s of the budget left"},
        "smoke": {"status": "error", "error": "RuntimeError: boom"}}})
    assert "- torch: 2.11" in md and "| fpt | 41.5 |" in md
    assert "## compile: skipped" in md and "10 s of the budget left" in md
    assert "RuntimeError: boom" in md
