"""Attention maps and per-head pattern scores (Zhang et al. 2022, "LEGO", §4.2 and Fig. 7).

The LEGO paper names three attention patterns seen in pretrained BERT (§4.2.1, §5):

    association   a query attends to the OTHER occurrences of its own token (long range,
                  content-based: "b = a" reads the value from the clause defining a)
    manipulation  a query attends to nearby positions (short range, position-based: moves a
                  value from the right-hand to the left-hand side of a clause); the query's
                  own position is left out, so a head that only attends to itself scores 0
    broadcast     a query attends to [CLS] / [SEP]

Each head gets one score per pattern in [0, 1]: the attention mass a query puts where the
pattern says, averaged over real (non-padding) queries and over examples. For association only
queries whose token occurs elsewhere in the sentence count (others cannot score above 0).

Two more scores read what the paper means more narrowly:

    association_variable  association over VARIABLE-token queries only (ScoreInput.variables):
                  §4.2.1's head "moves a value between two occurrences of the same variable,
                  oblivious to their positions". The any-token score cannot tell position from
                  content: with fixed 5-token LEGO clauses `=` and `,` repeat every 5 tokens,
                  so a content-blind "same position mod 5" head scores ~0.50 on it, more than a
                  perfect variable-to-variable head (~0.38). On variable queries that head
                  scores 0 (a variable's other occurrence is never at the same clause offset).
    manipulation_self     manipulation with the query's own position included (|q - k| <=
                  window): a perfect mimic of the authors' kernel [1, 2, 4, 2, 1] puts 0.4 on
                  itself, so it scores 0.6 without self and 1.0 with it.

`association_controls` puts the variable score beside two positional controls: the score of
a content-blind "same position mod clause length" head, and each head's score against the same
sentences with their clauses permuted (the head's positional habits, content broken).

Everything goes through hook points (`blocks.{l}.attn.hook_pattern`), so any model built on
`HookedModule` and any token batch works; the scores are registry entries (HEAD_SCORES) taking
patterns and tokens, so a new pattern is one function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import numpy as np
from torch import nn

from reasonlab.model.hooks import run_with_cache, to_device_of
from reasonlab.registry import Registry


@dataclass(frozen=True)
class ScoreInput:
    """What a head score sees.

    pattern  [layers, batch, heads, q_pos, k_pos]  rows sum to 1
    tokens   [batch, seq]
    valid    [batch, seq] bool, True = real token (queries and keys)
    special  token ids that count as broadcast targets ([CLS], [SEP])
    window   manipulation half-width: keys with 1 <= |q - k| <= window count
    variables token ids that are variables (LEGO's a..z): association_variable's queries
    targets  [batch, q_pos, k_pos] bool or None: the keys each query needs, as the task says
             (`Task.attention_targets`: FPT's bit tasks); task_targets' pattern
    """

    pattern: torch.Tensor
    tokens: torch.Tensor
    valid: torch.Tensor
    special: tuple[int, ...] = ()
    window: int = 2
    variables: tuple[int, ...] = ()
    targets: torch.Tensor | None = None


ScoreFn = Callable[[ScoreInput], torch.Tensor]
HEAD_SCORES: Registry[ScoreFn] = Registry("head score")


def _mass(x: ScoreInput, where: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
    """Mean over selected queries of the attention mass on keys in `where`.

    where [batch, q_pos, k_pos] bool; queries [batch, q_pos] bool -> [layers, heads].
    """
    mass = (x.pattern * where[None, :, None].to(x.pattern.dtype)).sum(-1)  # [L, B, H, q_pos]
    w = queries[None, :, None].to(mass.dtype)  # [1, B, 1, q_pos]
    n = w.sum((1, 3))  # [1, 1]
    return (mass * w).sum((1, 3)) / n.clamp(min=1)  # [L, H]


def _same_token(x: ScoreInput) -> torch.Tensor:
    """[B, q_pos, k_pos] bool: k holds the query's token, k != q, k real."""
    T = x.tokens.shape[1]
    same = x.tokens[:, :, None] == x.tokens[:, None, :]  # [B, q_pos, k_pos]
    return same & ~torch.eye(T, dtype=torch.bool, device=same.device)[None] & x.valid[:, None, :]


@HEAD_SCORES.register("association")
def association(x: ScoreInput) -> torch.Tensor:
    """Mass on other occurrences of the query's token, any token (LEGO §4.2.1 read broadly);
    [layers, heads]."""
    same = _same_token(x)
    return _mass(x, same, x.valid & same.any(-1))


@HEAD_SCORES.register("association_variable")
def association_variable(x: ScoreInput) -> torch.Tensor:
    """Mass on the other occurrences of the query's VARIABLE, over variable queries only (the
    paper's association head, §4.2.1); [layers, heads]. Needs `x.variables`."""
    same = _same_token(x)
    is_var = torch.isin(x.tokens, torch.tensor(x.variables, dtype=x.tokens.dtype,
                                                device=x.tokens.device))
    return _mass(x, same, x.valid & is_var & same.any(-1))


def _manipulation(x: ScoreInput, lo: int) -> torch.Tensor:
    T = x.tokens.shape[1]
    i = torch.arange(T, device=x.tokens.device)
    gap = (i[:, None] - i[None, :]).abs()  # [q_pos, k_pos]
    near = (gap >= lo) & (gap <= x.window)
    return _mass(x, near[None] & x.valid[:, None, :], x.valid)


@HEAD_SCORES.register("manipulation")
def manipulation(x: ScoreInput) -> torch.Tensor:
    """Mass on the other positions within `window` of the query (LEGO §4.2.1)."""
    return _manipulation(x, 1)


@HEAD_SCORES.register("manipulation_self")
def manipulation_self(x: ScoreInput) -> torch.Tensor:
    """Mass on the positions within `window` of the query, itself included."""
    return _manipulation(x, 0)


@HEAD_SCORES.register("broadcast")
def broadcast(x: ScoreInput) -> torch.Tensor:
    """Mass on [CLS] / [SEP] keys (LEGO §5)."""
    special = torch.zeros_like(x.tokens, dtype=torch.bool)
    for t in x.special:
        special |= x.tokens == t
    T = x.tokens.shape[1]
    return _mass(x, (special & x.valid)[:, None, :].expand(-1, T, -1), x.valid)


@HEAD_SCORES.register("task_targets")
def task_targets(x: ScoreInput) -> torch.Tensor:
    """Mass on the keys the task says a query needs (`Task.attention_targets`), over the
    queries that need some (FPT's bit tasks: the slides' first-layer attention maps)."""
    assert x.targets is not None, "task_targets needs ScoreInput.targets"
    where = x.targets & x.valid[:, None, :]
    return _mass(x, where, x.valid & where.any(-1))


@torch.no_grad()
def attention_patterns(model: nn.Module, tokens: torch.Tensor,
                       pad_mask: torch.Tensor | None = None, batch_size: int | None = None,
                       **inputs: torch.Tensor | None) -> torch.Tensor:
    """Every layer's attention: [layers, batch, heads, q_pos, k_pos], from the hook points,
    on the tokens' device. inputs: the batch's other model inputs, those not None passed on (a
    continuous task's `features` [batch, seq, d_input], with `label_pos` / `label_sub` for
    FPT's read-out of several outputs a token; model/fpt.py). Computed on the model's device
    (a model loaded on the run's GPU takes CPU examples: hooks.to_device_of), `batch_size`
    sentences at a time when given (else all at once)."""
    n = len(tokens)
    step = batch_size or max(n, 1)
    out = [_patterns(model, tokens[i:i + step],
                     None if pad_mask is None else pad_mask[i:i + step],
                     {k: v[i:i + step] for k, v in inputs.items() if v is not None}
                     ).to(tokens.device)
           for i in range(0, max(n, 1), step)]
    return out[0] if len(out) == 1 else torch.cat(out, dim=1)


def _patterns(model: nn.Module, tokens: torch.Tensor, pad_mask: torch.Tensor | None,
              extra: dict[str, torch.Tensor]) -> torch.Tensor:
    was = model.training
    model.eval()
    tokens = to_device_of(model, tokens)
    pad_mask = None if pad_mask is None else to_device_of(model, pad_mask)
    extra = {k: to_device_of(model, v) for k, v in extra.items()}
    _, cache = run_with_cache(model, tokens, pad_mask=pad_mask, **extra,
                              names_filter=lambda n: n.endswith("attn.hook_pattern"))
    model.train(was)
    if not cache:
        from reasonlab.errors import ConfigError

        raise ConfigError(f"{type(model).__name__} has no attention layers to draw (no "
                          "`attn.hook_pattern` hook point); give a transformer run")
    return cache.stack("attn.hook_pattern").float()


NEEDS_VARIABLES = ("association_variable",)
"""Scores that read ScoreInput.variables (left out by default when none are given)."""
NEEDS_TARGETS = ("task_targets",)
"""Scores that read ScoreInput.targets (left out by default when none are given)."""
NEEDS_TOKENS = ("association", "association_variable", "broadcast")
"""Scores that read token identities: left out for continuous inputs, whose positions all
hold the same placeholder token (tasks/patches.py PATCH_VOCAB)."""


def head_scores(pattern: torch.Tensor, tokens: torch.Tensor, pad_mask: torch.Tensor | None = None,
                special: Sequence[int] = (), window: int = 2,
                names: Sequence[str] | None = None, variables: Sequence[int] = (),
                targets: torch.Tensor | None = None, continuous: bool = False
                ) -> dict[str, torch.Tensor]:
    """name -> [layers, heads] scores in [0, 1] for the patterns of `tokens` [batch, seq].

    Default names: every HEAD_SCORES entry, the variable-only ones when `variables` is given,
    task_targets when `targets` is, and none of the token scores when `continuous`.
    """
    valid = torch.ones_like(tokens, dtype=torch.bool) if pad_mask is None else pad_mask.bool()
    x = ScoreInput(pattern, tokens, valid, tuple(int(s) for s in special), window,
                   tuple(int(v) for v in variables), targets)
    names = names or [n for n in HEAD_SCORES if (variables or n not in NEEDS_VARIABLES)
                      and (targets is not None or n not in NEEDS_TARGETS)
                      and not (continuous and n in NEEDS_TOKENS)]
    return {n: HEAD_SCORES[n](x) for n in names}


# ---------------------------------------------------------------------- positional controls


def positional_head(valid: torch.Tensor, span: int) -> torch.Tensor:
    """A content-blind head: each query attends uniformly to the other real positions at the
    same position mod `span` (LEGO: the same slot of every other clause), itself when there is
    none. valid [batch, seq] -> pattern [1, batch, 1, q_pos, k_pos]."""
    T = valid.shape[1]
    i = torch.arange(T, device=valid.device)
    same = ((i[:, None] - i[None, :]) % span == 0) & (i[:, None] != i[None, :])  # [T, T]
    w = (same[None] & valid[:, None, :]).float()  # [B, q, k]
    eye = torch.eye(T, device=w.device)[None].expand_as(w)
    w = torch.where(w.sum(-1, keepdim=True) > 0, w, eye)
    return (w / w.sum(-1, keepdim=True))[None, :, None]


def permute_clauses(tokens: torch.Tensor, valid: torch.Tensor, span: int, start: int,
                    rng: np.random.Generator) -> torch.Tensor:
    """Tokens with each sentence's clauses (spans of `span` tokens from `start`, real tokens
    only) shuffled: positions keep their slot in a clause, content moves to other clauses."""
    out = tokens.clone()
    for b in range(tokens.shape[0]):
        n = (int(valid[b].sum()) - start) // span
        clauses = tokens[b, start : start + n * span].view(n, span)
        order = torch.from_numpy(rng.permutation(n)).to(tokens.device)
        out[b, start : start + n * span] = clauses[order].flatten()
    return out


def association_controls(pattern: torch.Tensor, tokens: torch.Tensor, variables: Sequence[int],
                         span: int, start: int = 1, pad_mask: torch.Tensor | None = None,
                         seed: int = 0) -> dict[str, torch.Tensor]:
    """The association scores of every head with their positional controls, all [layers, heads]
    except the positional head's ([1, 1]):

        any token              association (today's score)
        variables              association_variable (the paper's association head)
        variables, permuted    association_variable on the same attention but with each
                               sentence's clauses permuted (what position alone earns)
        positional head        association_variable of `positional_head` (same slot mod span)
        positional head, any token   its any-token score (~0.50 on LEGO: why that score misleads)

    A head is an association head when its variable score beats both controls (studies decide
    by how much)."""
    valid = torch.ones_like(tokens, dtype=torch.bool) if pad_mask is None else pad_mask.bool()
    names = ["association", "association_variable"]
    own = head_scores(pattern, tokens, valid, names=names, variables=variables)
    shuffled = permute_clauses(tokens, valid, span, start, np.random.default_rng(seed))
    permuted = head_scores(pattern, shuffled, valid, names=names[1:], variables=variables)
    blind = head_scores(positional_head(valid, span), tokens, valid, names=names,
                        variables=variables)
    return {"any token": own["association"], "variables": own["association_variable"],
            "variables, permuted": permuted["association_variable"],
            "positional head": blind["association_variable"],
            "positional head, any token": blind["association"]}


def top_heads(scores: torch.Tensor, k: int = 3) -> list[tuple[int, int, float]]:
    """The k best (layer, head, score) of a [layers, heads] score map, best first."""
    flat = scores.flatten()
    idx = flat.argsort(descending=True)[:k]
    H = scores.shape[1]
    return [(int(i) // H, int(i) % H, float(flat[i])) for i in idx]


def reading_order(seq: int, starts: Sequence[int], span: int) -> list[int]:
    """A permutation of 0..seq-1 that lists the spans `starts[k] .. starts[k]+span-1` in the
    given order (e.g. LEGO clauses in chain order, as the paper's Fig. 7), the positions
    outside every span staying before or after them in place."""
    inside = [p for s in starts for p in range(s, s + span)]
    covered = set(inside)
    first = min(starts) if len(starts) else seq
    before = [p for p in range(seq) if p not in covered and p < first]
    after = [p for p in range(seq) if p not in covered and p >= first]
    return before + inside + after


# ---------------------------------------------------------------------- figures


def plot_attention(pattern: torch.Tensor, labels: Sequence[str], path: Path,
                   heads: Sequence[tuple[int, int]] | None = None,
                   order: Sequence[int] | None = None, title: str = "",
                   scores: dict[str, torch.Tensor] | None = None) -> None:
    """Attention grids of ONE example: pattern [layers, heads, q_pos, k_pos].

    heads: (layer, head) pairs to draw (default: all, one row per layer); order: a reading
    order of the positions (both axes); scores: shown under each panel's title, two a line.
    Every panel names its tokens on both axes (panels grow with the sentence to keep them
    legible).
    """
    from reasonlab.report import plt, save

    L, H, T, _ = pattern.shape
    heads = list(heads) if heads is not None else [(l, h) for l in range(L) for h in range(H)]
    order = list(order) if order is not None else list(range(T))
    idx = torch.as_tensor(order, device=pattern.device)
    cols = min(len(heads), H if len(heads) == L * H else 4)
    rows = -(-len(heads) // cols)
    maps = {k: v for k, v in (scores or {}).items() if v.shape == pattern.shape[:2]}
    lines = -(-len(maps) // 2)  # score lines under each title
    size = max(2.2, 0.075 * T)  # inches per panel: ~5 pt per token label
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols + 0.8,
                                                  (size + 0.35 + 0.14 * lines) * rows + 0.6),
                             squeeze=False)
    lab = [labels[p] for p in order]
    for ax in axes.flat:
        ax.axis("off")
    for ax, (l, h) in zip(axes.flat, heads, strict=False):
        ax.axis("on")
        ax.imshow(pattern[l, h][idx][:, idx].numpy(), cmap="viridis", vmin=0,
                  vmax=float(pattern[l, h].max()) or 1.0)
        text = [f"{k.replace('_', ' ')} {float(v[l, h]):.2f}" for k, v in maps.items()]
        ax.set_title("\n".join([f"layer {l}, head {h}"] + ["   ".join(text[i:i + 2])
                                                            for i in range(0, len(text), 2)]),
                     fontsize=6, loc="left")
        ax.set_xticks(range(T), lab, fontsize=4, rotation=90)
        ax.set_yticks(range(T), lab, fontsize=4)
        ax.tick_params(length=1, pad=1)
        ax.set_xlabel("key", fontsize=6, labelpad=1)
        ax.set_ylabel("query", fontsize=6, labelpad=1)
    fig.suptitle(title or "attention patterns (row = query, column = key)", fontsize=9)
    fig.tight_layout()
    save(fig, path)


def plot_head_scores(scores: dict[str, torch.Tensor], path: Path, title: str = "") -> None:
    """One [layers x heads] heatmap per score, shared colour scale [0, 1]."""
    from reasonlab.report import plt, save

    L, H = next(iter(scores.values())).shape
    scores = {k: v for k, v in scores.items() if v.shape == (L, H)}  # maps, not scalars
    n = len(scores)
    fig, axes = plt.subplots(1, n, figsize=(max(1.6, 0.35 * H) * n + 2, 0.35 * L + 1.9),
                             squeeze=False)
    im = None
    for ax, (name, s) in zip(axes[0], scores.items(), strict=True):
        im = ax.imshow(s.numpy(), vmin=0, vmax=1, cmap="viridis")
        ax.set_title(name.replace(", ", ",\n").replace("_", " "), fontsize=8)
        ax.set_xlabel("head")
        ax.set_xticks(range(H))
        ax.set_yticks(range(L))
        ax.tick_params(labelsize=6)
    axes[0][0].set_ylabel("layer")  # once: the panels share it
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="score")
    fig.suptitle(title or "head scores (attention mass on the pattern)", fontsize=9)
    save(fig, path)


# ---------------------------------------------------------------------- one-call report


def model_inputs(batch: Any) -> dict[str, torch.Tensor | None]:
    """What a continuous-input batch feeds besides tokens (`attention_patterns`' inputs);
    nothing for a token batch (its model reads tokens alone)."""
    if batch.features is None:
        return {}
    return {"features": batch.features, "label_pos": batch.label_pos,
            "label_sub": batch.label_sub}


def position_labels(batch: Any, example: int, vocab: Sequence[str]) -> list[str]:
    """Axis labels of one example: its tokens; for continuous inputs (every position holds
    the same placeholder token) the position and, for one value a position (bit XOR), it."""
    if batch.features is None:
        return [vocab[t] for t in batch.tokens[example].tolist()]
    x = batch.features[example]  # [seq, d_input]
    return [f"{i}:{float(v[0]):g}" if x.shape[1] == 1 else str(i) for i, v in enumerate(x)]


def special_ids(vocab_tokens: Sequence[str]) -> tuple[int, ...]:
    """Ids of [CLS] and [SEP] in a task vocabulary (the broadcast targets)."""
    return tuple(i for i, t in enumerate(vocab_tokens) if t in ("[CLS]", "[SEP]"))


def attention_report(model: nn.Module, task: object, out: Path, n: int = 64, example: int = 0,
                     seed: int = 0, span: int | None = None, window: int = 2,
                     title: str = "", variables: Sequence[int] = (),
                     control_span: int | None = None) -> dict[str, torch.Tensor]:
    """Head scores over `n` fresh task examples and the attention grids of one of them.

    Writes attention.png (every head, positions in reading order when `span` is given: the
    labelled slots' spans in label order, e.g. LEGO clauses in chain order), head_scores.png
    and head_scores.json into `out`; returns name -> [layers, heads] scores (with the
    variable-only association when `variables` names the variable token ids). With
    `control_span` (LEGO: the clause length) also the association's positional controls, as
    the studies report them (`association_controls`): "association_variable, clauses
    permuted" [layers, heads] and "positional head" [1, 1], a content-blind head's score.
    """
    import json

    out.mkdir(parents=True, exist_ok=True)
    batch = task.sample(np.random.default_rng(seed), n)  # type: ignore[attr-defined]
    vocab = task.vocab.tokens  # type: ignore[attr-defined]
    pattern = attention_patterns(model, batch.tokens, batch.pad_mask, **model_inputs(batch))
    targets = getattr(task, "attention_targets", None)
    scores = head_scores(pattern, batch.tokens, batch.pad_mask, special_ids(vocab), window,
                         variables=variables, continuous=batch.features is not None,
                         targets=None if targets is None else targets(batch))
    if control_span and variables:
        c = association_controls(pattern, batch.tokens, variables, control_span,
                                 pad_mask=batch.pad_mask)
        scores["association_variable, clauses permuted"] = c["variables, permuted"]
        scores["positional head"] = c["positional head"].reshape(1, 1)
    T = batch.tokens.shape[1]
    starts = [p for p in batch.label_pos[example].tolist() if p >= 0]  # -1: padded slot
    order = reading_order(T, starts, span) if span else None
    labels = position_labels(batch, example, vocab)
    plot_attention(pattern[:, example], labels, out / "attention.png", order=order,
                   title=title, scores=scores)
    plot_head_scores(scores, out / "head_scores.png", title=title)
    (out / "head_scores.json").write_text(json.dumps(
        {k: v.tolist() for k, v in scores.items()} | {"n_examples": n, "window": window}))
    return scores
