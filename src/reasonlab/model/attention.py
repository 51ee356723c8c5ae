"""Multi-head attention and its variants (the ATTENTION registry).

`SoftmaxAttention` ("softmax") is BERT's attention. A variant subclasses it, declares its options
as a `Config` (a `VariantConfig` subclass; none: inherit softmax's), overrides one of three
methods, and registers itself (docs/model.md, "How to add a variant"):

    scores(q, k, x)      -> [batch, n_heads, q_pos, k_pos]  pre-softmax logits
                            (e.g. add a hardcoded or identity term to the logits)
    pattern(scores, mask) -> [batch, n_heads, q_pos, k_pos] rows summing to 1 over allowed keys
                            (e.g. replace some heads' pattern by a fixed one)
    output(z, pattern, x) -> [batch, seq, d_model] the heads' values mixed back by W_O
                            (e.g. add a term that reads the pattern and the layer input)

    @ATTENTION.register("my_variant")
    class MyAttention(SoftmaxAttention):
        class Config(VariantConfig):
            heads: list[int] = [0]  # (a docstring per field: the heads replaced)

        def __init__(self, config):
            super().__init__(config)
            self.heads = config.attention.heads  # this entry's resolved Config

        def pattern(self, scores, mask): ...

A subclass that overrides any of them always takes the explicit path; the fused
`F.scaled_dot_product_attention` path is used only by the plain softmax maths.

The attention module holds parameters only. Its hook points (`hook_q`, ..., `hook_z`) live in
an `AttentionHooks` passed to `forward`, so that a weight-tied layer applied L times (ALBERT)
still has separate hook points per application (`blocks.{l}.attn.hook_pattern`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.model.hooks import HookPoint
from reasonlab.model.variants import ATTENTION, VariantConfig


class Rotary(nn.Module):
    """Rotary position embedding (RoFormer, Su et al. 2021, §3.4), "rotate-half" layout as in
    GPT-NeoX and Llama: dimension i is paired with i + d_head/2 and the pair is rotated by the
    angle pos * base^(-2i/d_head). Then q_m . k_n depends on m - n only, so a pattern such as
    "attend two tokens to my right" is one thing to learn rather than one per position.
    """

    def __init__(self, d_head: int, max_seq_len: int, base: float):
        super().__init__()
        inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
        angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)  # [max_seq_len, d_head]
        # Not persistent: derived from the config, so checkpoints hold only learned weights.
        # Kept in float64 and cast to the input's dtype, so a float64 model is exact; the cast
        # tables are kept per (length, dtype, device), not cast again at every call (four
        # kernels a layer, in every forward pass, on a GPU).
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self._cast: dict[tuple[int, torch.dtype, torch.device],
                         tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def tables(self, T: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin of the first T positions, [seq, 1, d_head], in `dtype`: the float64
        buffers cast once (the same values a cast at every call gives)."""
        key = (T, dtype, self.cos.device)
        hit = self._cast.get(key)
        if hit is None or hit[2] is not self.cos:  # new, or the buffers were replaced
            # a plain tensor even when first asked for under inference_mode
            with torch.inference_mode(False), torch.no_grad():
                hit = (self.cos[:T, None, :].to(dtype), self.sin[:T, None, :].to(dtype),
                       self.cos)
            self._cast[key] = hit
        return hit[0], hit[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [batch, seq, n_heads, d_head] -> rotated by each position's angles."""
        T, half = x.shape[1], x.shape[-1] // 2
        cos, sin = self.tables(T, x.dtype)  # [seq, 1, d_head]
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin


class AttentionHooks(nn.Module):
    """The hook points of one application of an attention layer."""

    def __init__(self) -> None:
        super().__init__()
        self.hook_q = HookPoint()  # [batch, seq, n_heads, d_head]
        self.hook_k = HookPoint()  # [batch, seq, n_heads, d_head]
        self.hook_v = HookPoint()  # [batch, seq, n_heads, d_head]
        self.hook_attn_scores = HookPoint()  # [batch, n_heads, q_pos, k_pos], masked = -inf
        self.hook_pattern = HookPoint()  # [batch, n_heads, q_pos, k_pos], rows sum to 1
        # [batch, n_heads, q_pos, k_pos], after attention dropout: what mixes the values and
        # what Hugging Face's BERT returns as attentions (== hook_pattern in eval mode)
        self.hook_pattern_dropped = HookPoint()
        self.hook_z = HookPoint()  # [batch, seq, n_heads, d_head], pattern-weighted values

    @property
    def needs_pattern(self) -> bool:
        return (self.hook_attn_scores.has_hooks or self.hook_pattern.has_hooks
                or self.hook_pattern_dropped.has_hooks)


def _cpu_bf16(x: torch.Tensor) -> bool:
    """True when this attention would run in bf16 on the CPU (cast or autocast)."""
    if x.device.type != "cpu":
        return False
    if x.dtype == torch.bfloat16:
        return True
    try:  # torch >= 2.4
        on, dtype = torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    except TypeError:  # older torch
        on, dtype = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
    return on and dtype == torch.bfloat16


SDPA_GQA = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 5)
"""Whether F.scaled_dot_product_attention takes enable_gqa (torch >= 2.5)."""


def cuda_shortcut(x: torch.Tensor) -> bool:
    """Whether SDPA may take CUDA's shortcuts (is_causal, enable_gqa): x is on CUDA. Never on
    the CPU, whose runs keep their bits."""
    return x.device.type == "cuda"


@ATTENTION.register("softmax")
class SoftmaxAttention(nn.Module):
    """softmax(q k^T / sqrt(d_head) + mask) v, per head, then W_O (Vaswani et al. 2017)."""

    Config = VariantConfig  # no options

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.n_heads, self.d_head = config.n_heads, config.d_head_
        # Grouped-query attention (Ainslie et al. 2023; Llama): n_kv_heads key/value heads, each
        # shared by queries_per_kv query heads. n_kv_heads = n_heads is multi-head attention.
        self.n_kv_heads, self.queries_per_kv = config.n_kv_heads_, config.queries_per_kv_head
        d_attn, d_kv = self.n_heads * self.d_head, self.n_kv_heads * self.d_head
        self.sizes = (d_attn, d_kv, d_kv)  # rows of q | k | v in the fused projection
        # Fused Q, K, V projection: one GEMM instead of three (docs/design.md §8
        # Performance); biases as BERT.
        self.qkv = nn.Linear(config.d_model, d_attn + 2 * d_kv, bias=config.attn_bias)
        self.out = nn.Linear(d_attn, config.d_model, bias=config.attn_bias)
        self.dropout = config.dropout
        self.causal = config.causal
        self.pattern_dropout = nn.Dropout(config.dropout)
        self.rotary = (Rotary(self.d_head, config.max_seq_len, config.rotary_base)
                       if config.positions == "rotary" else None)
        cls = type(self)
        # Only the unmodified softmax maths may take the fused SDPA kernel.
        self.fusable = cls.scores is SoftmaxAttention.scores and (
            cls.pattern is SoftmaxAttention.pattern
        ) and cls.output is SoftmaxAttention.output

    # -- the overridable steps -----------------------------------------------------------

    def project(self, x: torch.Tensor, pad_mask: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q [batch, seq, n_heads, d_head] and k, v [batch, seq, n_kv_heads, d_head] from the
        layer input x [batch, seq, d_model] (`pad_mask` [batch, seq] for variants that mix
        positions, e.g. `conv_qkv`)."""
        B, T, _ = x.shape
        q, k, v = self.qkv(x).split(self.sizes, dim=-1)
        return (q.view(B, T, self.n_heads, self.d_head),
                k.view(B, T, self.n_kv_heads, self.d_head),
                v.view(B, T, self.n_kv_heads, self.d_head))

    def scores(self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Attention logits [batch, n_heads, q_pos, k_pos] from q, k [batch, seq, n_heads, d_head].

        `x` [batch, seq, d_model] is the layer input, for variants that need it.
        """
        return torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_head)

    def pattern(self, scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Attention probabilities [batch, n_heads, q_pos, k_pos]; mask True = may attend."""
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores.softmax(dim=-1)

    def output(self, z: torch.Tensor, pattern: torch.Tensor | None, x: torch.Tensor
               ) -> torch.Tensor:
        """z [batch, seq, n_heads, d_head] -> [batch, seq, d_model] through W_O.

        `pattern` [batch, n_heads, q_pos, k_pos] (None on the fused path, which only the plain
        softmax maths takes) and the layer input `x` are there for variants that need them.
        """
        return self.out(z.flatten(2))

    # -- forward ----------------------------------------------------------------------------

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, hooks: AttentionHooks,
        tokens: torch.Tensor | None = None, pad_mask: torch.Tensor | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """x [batch, seq, d_model] -> [batch, seq, d_model] ([batch, P, d_model] for `rows`).

        mask [batch or 1, 1, q_pos, k_pos] bool (True = may attend) or None. Every row of
        `mask` must allow at least one key (see `transformer.attention_mask`). The token ids
        [batch, seq] and pad_mask [batch, seq] are there for variants that read them
        (hardcoded patterns, convolutions); softmax attention does not. `rows` [batch, P]:
        queries at these positions only, keys and values at all (`Transformer.run_layers`).
        """
        pattern = None
        q, k, v = self.project(x, pad_mask)  # each [batch, seq, H, d_head]
        q, k, v = hooks.hook_q(q), hooks.hook_k(k), hooks.hook_v(v)
        if self.rotary is not None:  # hook_q/hook_k see the unrotated projections
            q, k = self.rotary(q), self.rotary(k)
        if rows is not None:  # [batch, P, H, d_head]; the mask keeps the rows of those queries
            q = q.gather(1, rows[:, :, None, None].expand(-1, -1, *q.shape[2:]))
            if mask is not None:
                mask = mask.expand(len(rows), -1, -1, -1).gather(
                    2, rows[:, None, :, None].expand(-1, 1, -1, mask.shape[-1]))
        # Fused kernel unless someone looks at the pattern, or on CPU in bf16 where the
        # explicit matmul + softmax is ~30% faster (docs/design.md §8 Performance).
        fused = self.fusable and not hooks.needs_pattern and not _cpu_bf16(x)
        # On CUDA a plain causal mask is SDPA's is_causal (flash attention takes no mask
        # tensor) and grouped-query heads are its enable_gqa in half precision (flash reads
        # the shared heads in place); the CPU keeps the explicit mask and copies, and its bits
        causal_only = fused and cuda_shortcut(x) and self.causal and pad_mask is None and (
            rows is None)
        gqa = causal_only and SDPA_GQA and self.queries_per_kv > 1 and q.dtype in (
            torch.bfloat16, torch.float16)
        if self.queries_per_kv > 1 and not gqa:  # query head i reads kv head i // per_kv
            k = k.repeat_interleave(self.queries_per_kv, dim=2)  # [batch, seq, H, d_head]
            v = v.repeat_interleave(self.queries_per_kv, dim=2)  # (HF repeat_kv)

        if fused:
            masking = ({"is_causal": True, **({"enable_gqa": True} if gqa else {})}
                       if causal_only else {"attn_mask": mask})
            z = F.scaled_dot_product_attention(
                q.transpose(1, 2),  # [batch, H, seq, d_head]
                k.transpose(1, 2),  # [batch, H or n_kv_heads, seq, d_head]
                v.transpose(1, 2),
                dropout_p=self.dropout if self.training else 0.0,
                **masking,
            )  # [batch, H, q_pos, d_head]
        else:
            scores = hooks.hook_attn_scores(self.scores(q, k, x))  # [batch, H, q_pos, k_pos]
            pattern = hooks.hook_pattern(self.pattern(scores, mask))  # [batch, H, q_pos, k_pos]
            dropped = hooks.hook_pattern_dropped(self.pattern_dropout(pattern))
            z = dropped @ v.transpose(1, 2)  # [batch, H, q_pos, d_head]
        z = hooks.hook_z(z.transpose(1, 2))  # [batch, seq, H, d_head]
        return self.output(z, pattern, x)  # [batch, seq, d_model]

    @staticmethod
    def make_hooks(config: ModelConfig) -> AttentionHooks:
        """The hook points of one application of this layer (a variant may have others)."""
        return AttentionHooks()

    def mixing_flops(self, seq_len: int) -> int:
        """Forward FLOPs per token beyond the parameter matmuls (`Transformer.flops_per_token`):
        q k^T and pattern @ v, 2 matmuls x 2 FLOPs x seq x d_attn."""
        return 4 * seq_len * self.n_heads * self.d_head

    # -- weights in the maths' convention (x @ W), as views of the fused parameters --------

    def _split(self, t: torch.Tensor | None, i: int) -> torch.Tensor:
        if t is None:  # bias-free projections (attn_bias=False): the bias is zero
            return self.qkv.weight.new_zeros(self.sizes[i])
        start = sum(self.sizes[:i])
        return t[start : start + self.sizes[i]]

    def _heads(self, i: int) -> int:
        return self.n_heads if i == 0 else self.n_kv_heads

    def _W(self, i: int) -> torch.Tensor:  # [n_heads (K, V: n_kv_heads), d_model, d_head]
        w = self._split(self.qkv.weight, i)  # [heads*d_head, d_model]
        return w.view(self._heads(i), self.d_head, -1).transpose(1, 2)

    @property
    def W_Q(self) -> torch.Tensor:
        return self._W(0)

    @property
    def W_K(self) -> torch.Tensor:
        return self._W(1)

    @property
    def W_V(self) -> torch.Tensor:
        return self._W(2)

    @property
    def b_Q(self) -> torch.Tensor:  # [n_heads, d_head]
        return self._split(self.qkv.bias, 0).view(self.n_heads, self.d_head)

    @property
    def b_K(self) -> torch.Tensor:
        return self._split(self.qkv.bias, 1).view(self.n_kv_heads, self.d_head)

    @property
    def b_V(self) -> torch.Tensor:
        return self._split(self.qkv.bias, 2).view(self.n_kv_heads, self.d_head)

    @property
    def W_O(self) -> torch.Tensor:  # [n_heads, d_head, d_model]
        return self.out.weight.view(-1, self.n_heads, self.d_head).permute(1, 2, 0)

    @property
    def b_O(self) -> torch.Tensor:  # [d_model]
        return self.out.bias if self.out.bias is not None else self.out.weight.new_zeros(
            self.out.weight.shape[0])
