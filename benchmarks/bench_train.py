"""Training throughput: reasonlab `Transformer` vs `transformers.BertForTokenClassification`.

Same shape (4 layers, d_model 256, 4 heads, d_mlp 1024, post-LN), same LEGO Task 1 batches
(64 x 62, n = 12, first 6 chain variables supervised), forward + backward + AdamW step, fp32
and bf16 autocast. Timed blocks alternate between the models in one process (the machine is
shared and noisy); medians and ratios are reported.

Run: `python benchmarks/bench_train.py [--threads 2] [--quick | --smoke] [--batch 64]
[--dtype bf16]`.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from typing import Any, Callable

import numpy as np
import torch

from reasonlab.model.config import ModelConfig
from reasonlab.model.transformer import Transformer
from reasonlab.tasks import build_task
from reasonlab.train.config import OptimConfig
from reasonlab.train.metrics import slot_loss
from reasonlab.train.optim import make_optimizer

TASK = {"name": "lego", "group": "z2", "n_clauses": 12, "n_train_vars": 6}
SHAPE = dict(d_model=256, n_layers=4, n_heads=4, d_mlp=1024)


def lego_batches(n_batches: int, batch_size: int = 64, seed: int = 0):
    task = build_task(TASK)
    rng = np.random.default_rng(seed)
    batches = [task.sample(rng, batch_size) for _ in range(n_batches)]
    return task, batches


def hf_labels(batch) -> torch.Tensor:
    """[B, T] labels: -100 everywhere except the supervised label positions."""
    B, T = batch.tokens.shape
    labels = torch.full((B, T), -100, dtype=torch.long)
    rows = torch.arange(B)[:, None].expand_as(batch.label_pos)
    m = batch.loss_mask
    labels[rows[m], batch.label_pos[m]] = batch.labels[m]
    return labels


def make_ours(task) -> tuple[Transformer, Callable]:
    cfg = ModelConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                      max_seq_len=task.seq_len, norm_position="post", **SHAPE)
    torch.manual_seed(0)
    model = Transformer(cfg)
    model.train()
    opt = make_optimizer(model, OptimConfig(lr=1e-4, weight_decay=0.01))

    def step(batch, _labels):
        logits = model(batch.tokens, batch.label_pos, batch.pad_mask)
        loss = slot_loss(logits, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return model, step


def make_hf(task, attn: str) -> tuple[Any, Callable]:
    from transformers import BertConfig, BertForTokenClassification

    cfg = BertConfig(vocab_size=len(task.vocab), hidden_size=SHAPE["d_model"],
                     num_hidden_layers=SHAPE["n_layers"],
                     num_attention_heads=SHAPE["n_heads"], intermediate_size=SHAPE["d_mlp"],
                     max_position_embeddings=task.seq_len, type_vocab_size=1,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=2,
                     attn_implementation=attn)
    torch.manual_seed(0)
    model = BertForTokenClassification(cfg)
    assert model.config._attn_implementation == attn
    model.train()
    # Same optimizer as ours (AdamW, decay on matrices only, for-loop implementation).
    opt = make_optimizer(model, OptimConfig(lr=1e-4, weight_decay=0.01))

    def step(batch, labels):
        out = model(input_ids=batch.tokens, labels=labels)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()
        return out.loss
    return model, step


def bench_train(threads: int = 2, quick: bool = False, dtypes=("fp32", "bf16"),
                log: Callable[[str], None] = print, batch_size: int = 64, smoke: bool = False
                ) -> dict[str, dict[str, Any]]:
    """Per dtype: median s/step of ours, hf-eager, hf-sdpa; reference = faster HF. `smoke`:
    one step of each at batch 2 (seconds: the tests run it)."""
    torch.set_num_threads(threads)
    block, rounds, warm = (1, 1, 0) if smoke else (2, 2, 1) if quick else (3, 5, 2)
    batch_size = 2 if smoke else batch_size
    task, batches = lego_batches(block, batch_size)
    labels = [hf_labels(b) for b in batches]
    B, T = batches[0].tokens.shape
    results: dict[str, dict[str, Any]] = {}
    for dt in dtypes:
        ctx = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if dt == "bf16" \
            else contextlib.nullcontext
        models = {"ours": make_ours(task), "hf-eager": make_hf(task, "eager"),
                  "hf-sdpa": make_hf(task, "sdpa")}
        ours_model = models["ours"][0]
        flops_step = ours_model.flops_per_token(seq_len=T) * B * T
        for name, (_, step) in models.items():  # warm-up
            with ctx():
                for i in range(warm):
                    step(batches[i % block], labels[i % block])
        times: dict[str, list[float]] = {k: [] for k in models}
        for _ in range(rounds):
            for name, (_, step) in models.items():
                t0 = time.perf_counter()
                with ctx():
                    for i in range(block):
                        loss = step(batches[i], labels[i])
                loss.item()
                times[name].append((time.perf_counter() - t0) / block)
        med = {k: statistics.median(v) for k, v in times.items()}
        ref = min(("hf-eager", "hf-sdpa"), key=lambda k: med[k])
        results[dt] = {"s_per_step": med, "ref": ref, "flops_step": flops_step,
                       "tokens_per_step": B * T, "ratio": med[ref] / med["ours"],
                       "times": times}
        log(f"[train {dt}, batch {B}] "
            + ", ".join(f"{k} {B * T / v:,.0f} tok/s" for k, v in med.items())
            + f"; ref={ref}; ours/ref = {med[ref] / med['ours']:.3f}")
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dtype", choices=("fp32", "bf16"), action="append")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    bench_train(args.threads, args.quick, tuple(args.dtype or ("fp32", "bf16")),
                batch_size=args.batch, smoke=args.smoke)


if __name__ == "__main__":
    main()
