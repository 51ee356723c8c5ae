"""Mimicking initialisation (Zhang et al. 2022, "LEGO", §4.2.2 and Appendix B.3): an init stage
(train/init_stages.py), run after `init_from` loading and before freezing.

Before fine-tuning, chosen heads are trained to reproduce target attention patterns built from
token ids and positions alone, on random task sentences: no pretraining data is involved. The
authors' code (docs/papers.md §1 LEGO, "Mimicking (authors' code)", and §5.3): heads 0 and 1
of every layer get a manipulation target (kernel [1, 2, 4, 2, 1] centred on the diagonal) and
an association target (1 where the tokens are identical, diagonal zeroed); each target gets
+1e-3 and is row-normalised; the loss per layer is KL(model attention || target) with the
model attention smoothed by +1e-3; Adam 5e-5, batches of 200 fresh sentences, 100 steps x 10
epochs (BERT).

As the authors' script runs it: the model is in train mode, so dropout is on and
the loss reads the attention AFTER dropout (`hook_pattern_dropped`, what Hugging Face's BERT
returns as attentions); the learning rate follows a cosine from `lr` to 0 over the steps; the
KL is summed over mimicked layers and heads. `mode="eval"`, `schedule="constant"` and
`reduce="mean"` give the earlier behaviour. Sum and mean differ by the constant factor
layers x heads; Adam's update is invariant to a constant gradient factor per parameter except
through eps (the factor shrinks or grows eps relative to sqrt(v)), so the two are close but not
identical: sum is the default because it is the authors'.

Our reading: the smoothed model attention is renormalised too (so the KL is between
distributions and is >= 0); padding keys get neither smoothing nor target mass; the KL of one
(layer, head) is the mean over sentences and real query rows. In train mode the dropout masks
come from torch's global RNG, which the caller seeds (train.init_stages.build_model), so the
result is still a deterministic function of the seed.

A target is a MIMIC_TARGETS entry `(tokens [B, T], config, special ids) -> [B, T, T] >= 0`;
new targets (any function of token ids and positions) are one registered function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
import torch
from pydantic import Field, field_validator
from tqdm.auto import tqdm

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.registry import Registry
from reasonlab.tasks.base import Batch, Task


class MimicConfig(StrictModel):
    """Which heads imitate which patterns, and how long."""

    heads: dict[int, str] = {0: "manipulation", 1: "association"}
    """Head index -> MIMIC_TARGETS entry, applied in every mimicked layer (authors: head 0
    manipulation, head 1 association)."""
    layers: list[int] | None = None
    """Layer applications to mimic; None = all."""
    kernel: list[float] = [1.0, 2.0, 4.0, 2.0, 1.0]
    """Manipulation kernel over key offsets -k..k, centred on the query (odd length)."""
    steps: int = Field(1000, gt=0)
    """Adam steps on fresh random sentences (authors: 10 epochs x 100 steps for BERT)."""
    batch_size: int = Field(200, gt=0)
    """Sentences per step (authors: 200)."""
    lr: float = Field(5e-5, gt=0)
    """Adam learning rate (authors: 5e-5)."""
    smoothing: float = Field(1e-3, gt=0)
    """Added to targets and model attention before normalising (authors: 1e-3)."""
    mode: Literal["train", "eval"] = "train"
    """train (authors): dropout on, the loss reads the attention after dropout, as Hugging
    Face's BERT returns it; eval: dropout off, the loss reads the softmax pattern."""
    schedule: Literal["cosine", "constant"] = "cosine"
    """Learning rate over the mimicking steps: cosine from lr to 0 (authors), or constant."""
    reduce: Literal["sum", "mean"] = "sum"
    """KL summed over mimicked layers and heads (authors) or averaged over them."""

    @field_validator("kernel")
    @classmethod
    def _odd(cls, v: list[float]) -> list[float]:
        if len(v) % 2 == 0 or any(x < 0 for x in v) or not any(v):
            raise ValueError("kernel must have odd length, entries >= 0, not all zero")
        return v

    @field_validator("heads")
    @classmethod
    def _known(cls, v: dict[int, str]) -> dict[int, str]:
        for name in v.values():
            MIMIC_TARGETS[name]  # ConfigError naming the known targets
        return v


TargetFn = Callable[[torch.Tensor, MimicConfig, tuple[int, ...]], torch.Tensor]
MIMIC_TARGETS: Registry[TargetFn] = Registry("mimic target")


@MIMIC_TARGETS.register("association")
def association_target(tokens: torch.Tensor, cfg: MimicConfig, special: tuple[int, ...]
                       ) -> torch.Tensor:
    """1[u_i = u_j], i != j (attend to the other occurrences of one's own token)."""
    same = (tokens[:, :, None] == tokens[:, None, :]).float()  # [B, T, T]
    return same * (1 - torch.eye(tokens.shape[1], device=tokens.device))


@MIMIC_TARGETS.register("manipulation")
def manipulation_target(tokens: torch.Tensor, cfg: MimicConfig, special: tuple[int, ...]
                        ) -> torch.Tensor:
    """kernel[j - i + k] for |j - i| <= k: a local, position-only pattern."""
    T, k = tokens.shape[1], len(cfg.kernel) // 2
    i = torch.arange(T, device=tokens.device)
    off = i[None, :] - i[:, None] + k  # [T, T], kernel index
    ker = torch.tensor(cfg.kernel, dtype=torch.float32, device=tokens.device)
    band = ker[off.clamp(0, 2 * k)] * ((off >= 0) & (off <= 2 * k))
    return band.expand(tokens.shape[0], T, T)


@MIMIC_TARGETS.register("broadcast")
def broadcast_target(tokens: torch.Tensor, cfg: MimicConfig, special: tuple[int, ...]
                     ) -> torch.Tensor:
    """1[u_j in {[CLS], [SEP]}] (LEGO §5)."""
    hit = torch.zeros_like(tokens, dtype=torch.bool)
    for s in special:
        hit |= tokens == s
    return hit[:, None, :].float().expand(-1, tokens.shape[1], -1)


def normalised(x: torch.Tensor, valid: torch.Tensor, eps: float) -> torch.Tensor:
    """Row-normalise x + eps over valid keys. x [..., q, k], valid [B, k] (broadcast)."""
    keys = valid[:, None, None, :].to(x.dtype)  # [B, 1, 1, k]
    x = (x + eps) * keys
    return x / x.sum(-1, keepdim=True)


def mimic_loss(patterns: list[torch.Tensor], targets: torch.Tensor, heads: list[int],
               valid: torch.Tensor, eps: float, reduce: str = "mean") -> torch.Tensor:
    """KL(smoothed model || target) per (layer, mimicked head), each a mean over sentences and
    real query rows, then summed (`reduce="sum"`, the authors') or averaged over layers and
    heads.

    patterns: per layer [B, H, T, T]; targets [B, len(heads), T, T] (normalised);
    valid [B, T] bool.
    """
    rows = valid[:, None, :].float()  # [B, 1, T] query weights
    total = torch.zeros((), device=targets.device)
    for p in patterns:
        p = normalised(p[:, heads].float(), valid, eps)  # [B, h, T, T]
        kl = (p * (p.clamp_min(1e-30).log() - targets.clamp_min(1e-30).log())).sum(-1)  # [B, h, T]
        total = total + (kl * rows).sum() / rows.sum()  # summed over heads
    return total if reduce == "sum" else total / (len(patterns) * len(heads))


def loss_floor(targets: torch.Tensor, valid: torch.Tensor, eps: float) -> torch.Tensor:
    """The smallest `mimic_loss` any attention can reach on these targets [B, h, T, T].

    The smoothed model row p_s = (p + eps) / (1 + n eps) can never drop below
    m = eps / (1 + n eps) (n = valid keys), while a target's off-pattern entries can (the
    manipulation kernel sums to 10, so there q is about eps / 10): the authors' recipe has a
    floor above 0. The minimiser of KL(p_s || q) under p_s >= m is p_s = max(m, c q) with c
    set so that the row sums to 1 (KKT); c is found by bisection.
    """
    keys = valid[:, None, None, :].to(targets.dtype)  # [B, 1, 1, T]
    n = keys.sum(-1, keepdim=True)
    m = eps / (1 + n * eps)  # [B, 1, 1, 1]
    lo = torch.zeros_like(m).expand(*targets.shape[:-1], 1).clone()
    hi = torch.ones_like(lo)
    for _ in range(60):  # sum_j max(m, c q_j) is increasing in c; it is >= 1 at c = 1
        c = (lo + hi) / 2
        over = (torch.maximum(m, c * targets) * keys).sum(-1, keepdim=True) > 1
        hi, lo = torch.where(over, c, hi), torch.where(over, lo, c)
    p = torch.maximum(m, hi * targets) * keys
    p = p / p.sum(-1, keepdim=True)
    kl = (p * (p.clamp_min(1e-30).log() - targets.clamp_min(1e-30).log()) * keys).sum(-1)
    rows = valid[:, None, :].to(kl.dtype)  # [B, 1, T]
    return (kl * rows).sum() / (rows.sum() * targets.shape[1])


def floor_of(per_head: torch.Tensor, n_layers: int, n_heads: int, reduce: str) -> torch.Tensor:
    """`mimic_loss`'s floor from `loss_floor`'s per-head mean, for n_layers x n_heads terms."""
    return per_head * n_layers * n_heads if reduce == "sum" else per_head


def special_ids(vocab_tokens: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(vocab_tokens) if t in ("[CLS]", "[SEP]"))


def _check(model: torch.nn.Module, cfg: MimicConfig) -> list[int]:
    n_layers = model.config.n_layers  # type: ignore[attr-defined]
    layers = list(range(n_layers)) if cfg.layers is None else cfg.layers
    bad = [l for l in layers if not 0 <= l < n_layers] + [
        h for h in cfg.heads if not 0 <= h < model.config.n_heads]  # type: ignore[attr-defined]
    if bad:
        raise ConfigError(f"mimic: layers/heads {bad} do not exist in this model")
    points = model.hook_points() if hasattr(model, "hook_points") else {}
    if any(f"blocks.{l}.attn.hook_pattern_dropped" not in points for l in layers):
        arch = model.config.arch.name  # type: ignore[attr-defined]
        raise ConfigError(f"mimic reads attention patterns, which arch {arch!r} has none of; "
                          "use arch 'transformer'")
    return layers


def batch_loss(model: torch.nn.Module, batch: Batch, cfg: MimicConfig, special: tuple[int, ...],
               with_floor: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(mimicking loss with its graph, its floor) of `model` on one batch of sentences; the
    attention is read after dropout (identical to the pattern when dropout is off or the model
    is in eval mode). The floor (a 60-step bisection over [B, h, T, T], about as costly as the
    forward pass) is skipped with `with_floor=False`: training does not need it."""
    names = {f"blocks.{l}.attn.hook_pattern_dropped" for l in _check(model, cfg)}
    heads = sorted(cfg.heads)
    seen: dict[str, torch.Tensor] = {}

    def keep(x: torch.Tensor, hook: object) -> None:
        seen[hook.name] = x  # type: ignore[attr-defined]  # with its graph

    valid = (torch.ones_like(batch.tokens, dtype=torch.bool) if batch.pad_mask is None
             else batch.pad_mask.bool())
    raw = torch.stack([MIMIC_TARGETS[cfg.heads[h]](batch.tokens, cfg, special) for h in heads],
                      dim=1)  # [B, h, T, T]
    targets = normalised(raw, valid, cfg.smoothing)
    with model.hooks([(lambda n: n in names, keep)]):  # type: ignore[attr-defined]
        model(batch.tokens, None, batch.pad_mask)
    if set(seen) != names:  # a variant that skips the hook would silently drop layers
        raise RuntimeError(f"mimic: hook points {sorted(names - set(seen))} never fired (their "
                           "attention skipped its hooks)")
    loss = mimic_loss([seen[n] for n in sorted(seen)], targets, heads, valid, cfg.smoothing,
                      cfg.reduce)
    if not with_floor:
        return loss, None
    floor = floor_of(loss_floor(targets, valid, cfg.smoothing), len(seen), len(heads), cfg.reduce)
    return loss, floor


def lr_at_step(cfg: MimicConfig, step: int) -> float:
    """Learning rate of mimicking step `step` (0-based): cosine from lr to 0, or constant."""
    if cfg.schedule == "constant":
        return cfg.lr
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))


def mimic(model: torch.nn.Module, task: Task, cfg: MimicConfig,
          rng: np.random.Generator) -> list[float]:
    """Train `model` in place so that the chosen heads imitate their targets, on fresh
    training-split sentences of `task`; returns the loss of every step."""
    _check(model, cfg)
    special = special_ids(task.vocab.tokens)
    params = [p for p in model.parameters() if p.requires_grad]
    device = next(model.parameters()).device  # the sentences go where the model is
    opt = torch.optim.Adam(params, lr=cfg.lr, foreach=False)
    was = model.training
    model.train(cfg.mode == "train")
    losses: list[torch.Tensor] = []  # read back once at the end: no host sync per step
    # disable=None: a bar on a terminal, silent in logs and tests
    for step in tqdm(range(cfg.steps), desc="mimicking", leave=False, disable=None):
        for group in opt.param_groups:
            group["lr"] = lr_at_step(cfg, step)
        batch = task.sample(rng, cfg.batch_size, "train").to(device)
        with torch.enable_grad():  # also when called under no_grad
            loss, _ = batch_loss(model, batch, cfg, special, with_floor=False)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    model.train(was)
    return torch.stack(losses).tolist() if losses else []
