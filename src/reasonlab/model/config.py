"""ModelConfig: every architectural choice of the Transformer, typed and validated."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from reasonlab.config import StrictModel


class ModelConfig(StrictModel):
    """One config covers BERT-like, ALBERT-like, causal decoders and their variants."""

    vocab_size: int = Field(gt=0)
    """Number of token ids (usually filled from the task's vocabulary)."""
    n_classes: int = Field(gt=0)
    """Classes of the output head (usually filled from the task)."""
    max_seq_len: int = Field(gt=0)
    """Longest sequence the model accepts (rows of W_pos, or of the rotary tables)."""
    d_model: int = Field(256, gt=0)
    """Width of the residual stream."""
    n_layers: int = Field(4, gt=0)
    """Layers L; with `tie_layers` the one shared block is applied L times."""
    n_heads: int = Field(4, gt=0)
    """Attention heads per layer."""
    d_head: int | None = Field(None, gt=0)
    """Width of one head's queries/keys/values; None means d_model // n_heads."""
    d_embed: int | None = Field(None, gt=0, exclude_if=lambda v: v is None)
    """Factorised embedding (ALBERT, Lan et al. 2020 §3.1; `albert-base-v1`: 128 -> 768): token
    and position embeddings of this width, normalised (post-LN), then projected to d_model by a
    learned linear map. None: embeddings of width d_model, no projection (BERT)."""
    d_mlp: int = Field(1024, gt=0)
    """Hidden width of the feed-forward block."""
    causal: bool = False
    """Causal (decoder) mask instead of bidirectional (encoder) attention."""
    norm: Literal["pre", "post", "post_no_embed_ln"] = "post"
    """LayerNorm placement. "post": BERT's post-LN, which also normalizes the summed
    embeddings before layer 1. "post_no_embed_ln": post-LN inside the blocks only, the
    embeddings going straight into layer 1 (Vaswani et al. 2017; the anchor-function authors'
    GPT, docs/papers.md): an embedding LayerNorm rescales W_E[x] + W_pos to unit RMS and so
    undoes a small initialization of them. "pre": pre-LN, with a final LayerNorm."""
    positions: Literal["learned", "rotary"] = "learned"
    """How position enters: learned absolute embeddings W_pos added to the input (BERT), or
    rotary embeddings that rotate queries and keys by their position, so that attention logits
    depend on relative position only (RoFormer, Su et al. 2021)."""
    rotary_base: float = Field(10_000.0, gt=1.0)
    """Base of the rotary frequencies theta_i = base^(-2i/d_head) (RoFormer's 10000)."""
    tie_layers: bool = False
    """ALBERT-like: one block's weights shared by all layers (LEGO paper §3)."""
    depth_range: tuple[int, int] | None = None
    """Stochastic depth: in training, depth drawn uniformly in [lo, hi] per batch; L at eval."""
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """Dropout on attention pattern, attention output, MLP output and embeddings."""
    attention: str = "softmax"
    """ATTENTION registry entry."""
    act: Literal["gelu", "relu"] = "gelu"
    """Feed-forward nonlinearity."""
    init: str = "default"
    """INITS registry entry: how the weights are initialized."""
    init_std: float = Field(0.02, gt=0.0)
    """Standard deviation of the default normal initialization (BERT's 0.02)."""
    init_gamma: float | None = Field(None, gt=0.0)
    """Initialization rate gamma of init="rate": std (1/d_in)^gamma (Zhang et al. 2024);
    required by that scheme and rejected by the others."""
    ln_eps: float = Field(1e-12, gt=0.0)
    """LayerNorm epsilon (BERT's 1e-12; PyTorch's default, which both the anchor and the
    abstract-symbols authors keep, is 1e-5)."""
    mlp_bias: bool = True
    """Biases in the feed-forward linears (BERT's); the anchor authors' have none."""
    ln_final_affine: bool = True
    """norm="pre" only: the final LayerNorm has a learned gain and bias; the abstract-symbols
    authors' has none (a plain standardization before the read-out)."""

    # -- Llama pieces (SmolLM2's architecture; docs/papers.md §4, the FPT backbone) ----------
    # Left out of dumps (so of run ids) at their defaults: adding them kept run ids valid.
    norm_type: str = Field("layernorm", exclude_if=lambda v: v == "layernorm")
    """NORMS registry entry of every normalisation layer: "layernorm" (BERT, GPT-2) or
    "rmsnorm" (Llama: x / RMS(x) * g, no mean subtraction and no bias; Zhang & Sennrich
    2019). `ln_eps` is its epsilon."""
    feed_forward: str = Field("standard", exclude_if=lambda v: v == "standard")
    """FEED_FORWARD registry entry: "standard" (W_out act(W_in x), `act` chosen above) or
    "swiglu" (Llama: W_down(silu(W_gate x) * W_up x); Shazeer 2020, which reads no `act`)."""
    kv_groups: int = Field(1, gt=0, exclude_if=lambda v: v == 1)
    """Grouped-query attention (Ainslie et al. 2023; Llama, SmolLM2: 9 query heads, 3
    key/value heads -> 3): this many query heads share one key/value head, so there are
    n_heads / kv_groups key/value heads. 1 = multi-head attention."""

    # -- abstract-symbols variants (Boix-Adsera et al. 2024; PAPERS.md §2) ------------------
    arch: str = "transformer"
    """MODELS registry entry: "transformer", or "mlp" (the paper's MLP baseline)."""
    attn_bias: bool = True
    """Biases in the Q/K/V/O projections; the abstract-symbols models have none."""
    tie_head: bool = False
    """Read-out weight = W_E (needs n_classes == vocab_size): symbolic labels (copying)."""
    identity_terms: Literal["ab", "a", "b"] | None = None
    """attention="identity" only: which terms are on (a: logits += a_h X X^T, b: output +=
    b_h Attn_h X); None = both."""
    identity_zero_diag: bool | None = None
    """attention="identity" only: zero the diagonal of X X^T in the a term; None = False."""
    mlp_equality: bool | None = None
    """arch="mlp" only: also feed the flattened equality matrix X X^T; None = False."""

    @property
    def d_head_(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def n_kv_heads(self) -> int:
        return self.n_heads // self.kv_groups

    @property
    def n_unique_layers(self) -> int:
        return 1 if self.tie_layers else self.n_layers

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.d_head is None and self.d_model % self.n_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; "
                "change one or set d_head"
            )
        if self.n_heads % self.kv_groups:
            raise ValueError(f"kv_groups={self.kv_groups} must divide n_heads={self.n_heads}")
        if self.positions == "rotary" and self.d_head_ % 2:
            raise ValueError(f"rotary positions rotate pairs of dimensions: d_head={self.d_head_} "
                             "must be even")
        if self.depth_range is not None:
            lo, hi = self.depth_range
            if not 1 <= lo <= hi <= self.n_layers:
                raise ValueError(
                    f"depth_range={list(self.depth_range)} must satisfy 1 <= lo <= hi <= "
                    f"n_layers={self.n_layers}"
                )
        from reasonlab.model.attention import ATTENTION
        from reasonlab.model.init import INITS
        from reasonlab.model.layers import FEED_FORWARD, NORMS

        ATTENTION[self.attention]  # raises a ConfigError naming the known entries
        NORMS[self.norm_type]
        FEED_FORWARD[self.feed_forward]
        scheme = INITS[self.init]
        # Each scheme declares the optional config fields it reads (e.g. init_gamma).
        for name in ("init_gamma",):
            wants = name in getattr(scheme, "uses", ())
            if wants and getattr(self, name) is None:
                raise ValueError(f"init={self.init!r} needs {name}; set it")
            if not wants and getattr(self, name) is not None:
                raise ValueError(f"{name} is only read by init='rate', not init={self.init!r}; "
                                 "remove it or change init")
        if not self.ln_final_affine and self.norm != "pre":
            raise ValueError(f"ln_final_affine=False needs norm='pre' (norm={self.norm!r} has "
                             "no final LayerNorm); remove it or set norm='pre'")
        self._check_symbol_variants()
        return self

    def _check_symbol_variants(self) -> None:
        from reasonlab.model.attention import ATTENTION
        from reasonlab.model.identity_attention import IdentityAttention
        from reasonlab.model.models import MODELS

        MODELS[self.arch]
        identity = issubclass(ATTENTION[self.attention], IdentityAttention)
        for name in ("identity_terms", "identity_zero_diag"):
            if getattr(self, name) is not None and not identity:
                raise ValueError(f"{name} needs attention='identity'; remove it or set it")
        if self.mlp_equality is not None and self.arch != "mlp":
            raise ValueError("mlp_equality needs arch='mlp'; remove it")
        if self.arch == "mlp" and (self.attention != "softmax" or self.tie_head):
            raise ValueError("arch='mlp' has no attention and no tied head; remove attention "
                             "and tie_head")
        if self.tie_head and self.d_embed is not None:
            raise ValueError("tie_head reads W_E as a d_model-wide read-out; it cannot be "
                             "combined with a factorised embedding (d_embed): remove one")
        if self.tie_head and self.n_classes != self.vocab_size:
            raise ValueError(f"tie_head needs n_classes ({self.n_classes}) == vocab_size "
                             f"({self.vocab_size}): a task with symbolic labels")
