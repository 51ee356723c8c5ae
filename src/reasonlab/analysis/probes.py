"""Per-layer linear probes (Zhang et al. 2022, "LEGO", §4.1 Q2 and Fig. 4).

"Given a trained model, we train one linear classifier per layer which predicts the value of a
variable token based only on its token representation at the corresponding layer, while keeping
the original model unchanged." Accuracy over (layer, chain depth) shows how information
percolates: a model that runs a for-loop resolves depth d after d + 1 layers.

Layer 0 is the embedding output (`blocks.0.hook_resid_pre`); layer l >= 1 is block l-1's output
(`block_output_hook`: `hook_resid_post`, or `hook_normalized_resid_post` under post-LN). The
probe is multinomial logistic regression on standardised features, fitted by L-BFGS
(deterministic), pooled over all labelled slots and evaluated on
held-out sentences per value of a meta key (LEGO: "depth"). The shuffled-label baseline fits the
same probe on randomly permuted training labels and must sit at chance.

Works on any HookedModule and any Batch whose slots are `label_pos` / `labels` / `meta`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.model.hooks import run_with_cache, to_device_of
from reasonlab.model.transformer import block_output_hook
from reasonlab.tasks.base import Batch


@torch.no_grad()
def slot_features(model: nn.Module, batch: Batch, batch_size: int = 256) -> torch.Tensor:
    """Residual stream at every labelled slot, per layer: [layers + 1, N, P, d_model], on the
    batch's device; computed on the model's, batch_size examples at a time (a model loaded on
    the run's GPU takes examples drawn on the CPU, hooks.to_device_of)."""
    was = model.training
    model.eval()
    chunks = []
    for i in range(0, len(batch), batch_size):
        b = to_device_of(model, batch[i : i + batch_size])
        out = block_output_hook(model.config)  # each block's output (post-LN: normalised)
        _, cache = run_with_cache(model, b.tokens, pad_mask=b.pad_mask,
                                  names_filter=lambda n: n == "blocks.0.hook_resid_pre"
                                  or n.endswith(f".{out}"))
        layers = [cache["blocks.0.hook_resid_pre"], *cache.stack(out)]
        pos = b.label_pos.clamp(min=0)  # padded slots (label_pos -1) are masked out later
        idx = pos[..., None].expand(-1, -1, layers[0].shape[-1])  # [B, P, d_model]
        chunks.append(torch.stack([x.gather(1, idx) for x in layers]).float().to(
            batch.tokens.device))
    model.train(was)
    return torch.cat(chunks, dim=1)


@dataclass
class LinearProbe:
    """softmax(((x - mean) / std) @ W + b)."""

    mean: torch.Tensor  # [d]
    std: torch.Tensor  # [d]
    W: torch.Tensor  # [d, n_classes]
    b: torch.Tensor  # [n_classes]

    def predict(self, x: torch.Tensor) -> torch.Tensor:  # [N, d] -> [N]
        return (((x - self.mean) / self.std) @ self.W + self.b).argmax(-1)


def fit_probe(x: torch.Tensor, y: torch.Tensor, n_classes: int, l2: float = 1e-3,
              max_iter: int = 200) -> LinearProbe:
    """Multinomial logistic regression, x [N, d], y [N]; L-BFGS from zero (deterministic)."""
    x = x.double()
    mean, std = x.mean(0), x.std(0).clamp(min=1e-6)
    z = (x - mean) / std
    W = torch.zeros(z.shape[1], n_classes, dtype=torch.float64, device=z.device,
                    requires_grad=True)
    b = torch.zeros(n_classes, dtype=torch.float64, device=z.device, requires_grad=True)
    opt = torch.optim.LBFGS([W, b], max_iter=max_iter, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-9, tolerance_change=1e-12)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(z @ W + b, y) + l2 * (W**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return LinearProbe(mean, std, W.detach(), b.detach())


@dataclass
class ProbeResult:
    """Held-out probe accuracy; rows are layers (0 = embeddings), columns meta-key values."""

    acc: np.ndarray  # [layers, keys]
    acc_shuffled: np.ndarray  # [layers, keys], probe fitted on permuted training labels
    overall: np.ndarray  # [layers]
    chance: float  # accuracy of always answering the majority class of the test labels


def probe_layers(train_x: torch.Tensor, train: Batch, test_x: torch.Tensor, test: Batch,
                 n_classes: int, key: str = "depth", seed: int = 0) -> ProbeResult:
    """Fit one probe per layer on `train_x` [layers, N, P, d], evaluate on `test_x`.

    Slots are pooled (all labelled slots with label_pos >= 0, supervised or not); accuracy is
    broken down by `test.meta[key]`.
    """
    def flat(x: torch.Tensor, b: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        valid = b.label_pos >= 0  # [N, P]
        return x[:, valid], b.labels[valid], b.meta[key][valid].long()

    xtr, ytr, _ = flat(train_x, train)
    xte, yte, kte = flat(test_x, test)
    perm = torch.from_numpy(np.random.default_rng(seed).permutation(len(ytr))).to(ytr.device)
    n_keys = int(kte.max()) + 1
    acc = np.zeros((len(xtr), n_keys))
    acc_sh = np.zeros_like(acc)
    overall = np.zeros(len(xtr))
    for l in range(len(xtr)):
        for out, labels in ((acc, ytr), (acc_sh, ytr[perm])):
            correct = (fit_probe(xtr[l], labels, n_classes).predict(xte[l]) == yte).double()
            out[l] = [correct[kte == k].mean().item() if (kte == k).any() else np.nan
                      for k in range(n_keys)]
            if out is acc:
                overall[l] = correct.mean().item()
    chance = float(torch.bincount(yte, minlength=n_classes).max() / len(yte))
    return ProbeResult(acc, acc_sh, overall, chance)


def probe_model(model: nn.Module, train: Batch, test: Batch, n_classes: int, key: str = "depth",
                seed: int = 0) -> ProbeResult:
    """Frozen `model`'s slot representations -> per-layer probes (train on `train`)."""
    return probe_layers(slot_features(model, train), train, slot_features(model, test), test,
                        n_classes, key, seed)


def for_loop_map(n_layers: int, n_keys: int) -> np.ndarray:
    """The one-layer-per-step for-loop: depth d is known after d + 1 layers. [layers+1, keys]."""
    l, d = np.arange(n_layers + 1)[:, None], np.arange(n_keys)[None, :]
    return (l >= d + 1).astype(float)


def diagonal_score(acc: np.ndarray, chance: float, depths: Sequence[int] | None = None
                   ) -> float:
    """How close an accuracy map [layers+1, depths] is to the for-loop: 1 - mean |A - I|.

    A = (acc - chance) / (1 - chance) clipped to [0, 1] (0 = chance, 1 = perfect), I the
    for-loop map, over the chain depths `depths` (default: 0..L-1, the depths an L-layer
    for-loop resolves; deeper columns are all-chance in I and would reward a model that
    resolves nothing). 1 = exactly the diagonal staircase; a map at chance everywhere, or
    perfect everywhere, scores 0.5. NaN when `depths` is empty.
    Our own scalar summary of the paper's Fig. 4 (the paper shows the map only).

    Score a model on its SUPERVISED depths to ask whether it solves them as a for-loop: over
    the default depths a for-loop on #0-#5 of a 12-layer model scores 0.865 when it stops at
    #5 and 0.936 when it also resolves #6-#7, a difference that is extrapolation, not shape
    (both score 1.0 on #0-#5). Score the extrapolated depths separately (`split_diagonal`).
    """
    L = acc.shape[0] - 1
    cols = list(range(min(L, acc.shape[1]))) if depths is None else list(depths)
    if not cols:
        return float("nan")
    a = np.clip((acc[:, cols] - chance) / max(1e-9, 1 - chance), 0, 1)
    ideal = for_loop_map(L, acc.shape[1])[:, cols]
    ok = ~np.isnan(a)
    return float(1 - np.abs(a - ideal)[ok].mean())


def split_diagonal(acc: np.ndarray, chance: float, n_supervised: int) -> tuple[float, float]:
    """(diagonal score on the supervised depths 0..n_supervised-1, on the extrapolated depths
    n_supervised..L-1 that an L-layer for-loop can still reach; NaN when there are none)."""
    L = acc.shape[0] - 1
    reach = min(L, acc.shape[1])
    return (diagonal_score(acc, chance, range(min(n_supervised, acc.shape[1]))),
            diagonal_score(acc, chance, range(n_supervised, reach)))


def plot_probe_maps(maps: dict[str, np.ndarray], path: object, chance: float,
                    title: str = "", n_supervised: int | None = None) -> None:
    """Heatmap of accuracy over (layer, depth) per model, with the for-loop staircase; the
    panel titles give the diagonal score (on the supervised and the extrapolated depths when
    `n_supervised` is given)."""
    from reasonlab.report import plt  # pyplot with the Agg backend, set once there

    n = len(maps)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), squeeze=False)
    im = None
    for ax, (name, acc) in zip(axes[0], maps.items(), strict=True):
        im = ax.imshow(acc, origin="lower", vmin=chance, vmax=1, cmap="viridis", aspect="auto")
        L = acc.shape[0] - 1
        d = np.arange(acc.shape[1])
        ax.step(d, np.minimum(d + 1, L), where="mid", color="w", lw=1, ls="--")
        if n_supervised is None:
            what = f"diagonal score {diagonal_score(acc, chance):.2f}"
        else:
            sup, ext = split_diagonal(acc, chance, n_supervised)
            what = f"diagonal score: supervised {sup:.2f}, extrapolated {ext:.2f}"
        ax.set(title=f"{name}\n{what}",
               xlabel="chain depth", ylabel="layer (0 = embeddings)")
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="probe accuracy")
    fig.suptitle(title or "linear probe accuracy (dashed: one layer per step)", fontsize=9)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
