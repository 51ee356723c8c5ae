"""What a study costs before it runs: runs, training FLOPs from the shapes, estimated time.

`reasonlab studies --scale paper` prints, per study, the runs it trains (its pretraining runs
included), their FLOPs and the time they would take on one H100 in bf16 and on this kind of
CPU. FLOPs come from the configs, not from running anything: the model is built on PyTorch's
meta device (studies/kit/sizes.py) and

    training FLOPs = steps x batch x seq_len x flops_per_token            (6 N + attention)
                   + evaluations x n_test x seq_len x flops_per_token / 3 (forward only)

with `flops_per_token` the Transformer's (model/transformer.py: 6 x parameters applied per
token + the attention variant's q k^T and pattern @ v), or 6 x non-embedding parameters for the
other architectures (LSTM, MLP, FPT; an upper bound for FPT, whose frozen weights need no
weight gradients). Mimicking warm-ups and the analyses' own forward passes are left out (each
under 1% of a study's training at paper scale).
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonlab.studies.kit.sizes import meta_model
from reasonlab.train.config import TrainConfig

H100_BF16_DENSE = 989e12
"""NVIDIA H100 SXM, dense bf16 tensor-core peak (FLOP/s), from NVIDIA's data sheet."""
GPU_UTILISATION = 0.4
"""Model FLOPs utilisation assumed on the GPU: 40%, what well-fed transformer training reaches
in bf16 on an H100. Small models (d_model <= 256) are bound by kernel launches and reach far
less, so for them the estimate is a lower bound on the time."""
CPU_FLOPS = 1.9e11
"""Model FLOP/s of one training run on this machine's CPU: 190 GFLOP/s, a BERT-base layer
stack (12 x 768, seq 62, batch 16, fp32, 2 threads) trained by
`python benchmarks/bench_precision.py --rate --threads 2` on a quiet 2-core AMD EPYC (AVX-512):
196.0, 189.5 and 191.3 in three runs (2026-11-27). An earlier 18.1, measured while other jobs
shared the cores, made every CPU estimate about 10x too long. Against the wall clock measured
for the cpu scales from an empty runs folder (two runs side by side on 2 cores) the estimate
is 0.06x (symbols' 3-token templates) to 0.6-0.8x (anchors, the artificial studies) of it,
as small models run at a lower rate, and up to 1.3x where FLOPs are counted that never run:
frozen backbones' weight gradients (fpt-init: 7.8 min against 5.8) and a masked-LM head
counted at every position, not only the masked ones (artificial-pretraining --scale long:
2.9 h against 2.3 h). An AVX2-only CPU is slower."""


@dataclass(frozen=True)
class Cost:
    runs: int
    flops: float

    @property
    def gpu_hours(self) -> float:
        return self.flops / (H100_BF16_DENSE * GPU_UTILISATION) / 3600

    @property
    def cpu_hours(self) -> float:
        return self.flops / CPU_FLOPS / 3600


def flops_per_token(config: TrainConfig) -> float:
    """Training FLOPs per token of the run's model (module docstring)."""
    model = meta_model(config)
    T = config.model.max_seq_len
    if hasattr(model, "flops_per_token"):
        return float(model.flops_per_token(T))
    n = (model.num_params(non_embedding=True) if hasattr(model, "num_params")
         else sum(p.numel() for p in model.parameters()))
    return 6.0 * n


def run_flops(config: TrainConfig) -> float:
    """Training plus evaluation FLOPs of one run."""
    T = config.model.max_seq_len
    per_token = flops_per_token(config)
    evals = -(-config.steps // config.eval_every)
    train = config.steps * config.batch_size * T * per_token
    evaluate = evals * config.n_test * (2 if config.eval_train else 1) * T * per_token / 3
    return train + evaluate


def study_cost(configs: list[TrainConfig]) -> Cost:
    """Runs and FLOPs of a study's configs and of the pretraining runs they start from, each
    distinct run once (the run store trains a shared one once)."""
    from reasonlab.train.config import config_id

    seen: dict[str, TrainConfig] = {}
    todo = list(configs)
    while todo:
        c = todo.pop()
        cid = config_id(c)
        if cid not in seen:
            seen[cid] = c
            if c.init_run is not None:
                todo.append(c.init_run)
    total = 0.0
    for c in seen.values():  # FLOPs depend on the shapes and counts, not the seed
        key = (c.model.model_dump_json(), c.steps, c.batch_size, c.eval_every, c.n_test,
               c.eval_train)
        if key not in _FLOPS:
            _FLOPS[key] = run_flops(c)
        total += _FLOPS[key]
    return Cost(len(seen), total)


_FLOPS: dict[tuple[str, int, int, int, int, bool], float] = {}
"""run_flops by shapes and counts: a study's seeds and arms share a handful of them."""


def fmt_hours(h: float) -> str:
    if h < 1 / 60:
        return f"{h * 3600:.0f} s"
    if h < 1:
        return f"{h * 60:.0f} min"
    if h < 48:
        return f"{h:.1f} h"
    if h < 2 * 365 * 24:
        return f"{h / 24:.0f} days"
    return f"{h / 24 / 365:.0f} years"
