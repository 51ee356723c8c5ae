"""ModelConfig: every architectural choice of the network, typed and validated.

The fields read in the order a forward pass meets them, in sections as litgpt's config.py
groups its own: the network and its sizes; embedding and positions; the block and its norms;
attention; MLP; head; initialization; and last what the task decides (TrainConfig fills those
from it). Each variant field (`arch`, `norm_layer`, `attention`, `mlp`, `init`) names a registry
entry and carries that entry's options (model/variants.py); the entry's Config checks its
options against the rest of the model (`VariantConfig.check`), and `_check` below holds only the
rules between the shared fields. Older names load through config_compat.py.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, SerializeAsAny, model_validator

from reasonlab.config import StrictModel
from reasonlab.config_compat import upgrade_model_keys
from reasonlab.model.variants import MODELS, REGISTRIES, VariantConfig, resolve

MAX_WEIGHT = 2**40
"""Elements of one weight matrix above which no machine holds the model (4 TiB in fp32; the
largest of GPT-3 has 6e8): a size beyond it is a typo, refused when the config is built."""


class ModelConfig(StrictModel):
    """One config covers BERT-like, ALBERT-like, causal decoders and their variants."""

    # -- the network and its sizes ---------------------------------------------------------
    arch: SerializeAsAny[VariantConfig] = VariantConfig(name="transformer")
    """MODELS entry: "transformer", or "mlp_baseline" (the abstract-symbols paper's MLP
    baseline; model/mlp_baseline.py), "fpt" (a frozen backbone between a trained input layer
    and read-out; model/fpt.py), "lnlstm" (the FPT authors' LSTM; model/lstm.py)."""
    d_model: int = Field(256, gt=0)
    """Width of the residual stream."""
    n_layers: int = Field(4, gt=0)
    """Layers L; with `tie_layers` the one shared block is applied L times."""
    n_heads: int = Field(4, gt=0)
    """Attention heads per layer."""
    d_head: int | None = Field(None, gt=0)
    """Width of one head's queries/keys/values; None means d_model // n_heads."""
    d_mlp: int = Field(1024, gt=0)
    """Hidden width of the feed-forward block."""

    # -- embedding and positions -----------------------------------------------------------
    d_embed: int | None = Field(None, gt=0, exclude_if=lambda v: v is None)
    """Factorised embedding (ALBERT, Lan et al. 2020 §3.1; `albert-base-v1`: 128 -> 768): token
    and position embeddings of this width, normalised (post-LN), then projected to d_model by a
    learned linear map. None: embeddings of width d_model, no projection (BERT)."""
    positions: Literal["learned", "rotary"] = "learned"
    """How position enters: learned absolute embeddings W_pos added to the input (BERT), or
    rotary embeddings that rotate queries and keys by their position, so that attention logits
    depend on relative position only (RoFormer, Su et al. 2021)."""
    rotary_base: float = Field(10_000.0, gt=1.0)
    """Base of the rotary frequencies theta_i = base^(-2i/d_head) (RoFormer's 10000)."""

    # -- the block and its norms -----------------------------------------------------------
    norm_position: Literal["pre", "post", "post_no_embed_ln"] = "post"
    """Where the normalization layers (`norm_layer`) sit. "post": BERT's post-LN, which also
    normalizes the summed embeddings before layer 1. "post_no_embed_ln": post-LN inside the
    blocks only, the embeddings going straight into layer 1 (Vaswani et al. 2017; the
    anchor-function authors' GPT, docs/papers.md §5.1 Anchor functions): an embedding LayerNorm
    rescales W_E[x] + W_pos to unit RMS and so undoes a small initialization of them. "pre":
    pre-LN, with a final LayerNorm."""
    norm_layer: SerializeAsAny[VariantConfig] = VariantConfig(name="layernorm")
    """NORMS entry: the normalization layer (`norm_position` says where it sits)."""
    ln_eps: float = Field(1e-12, gt=0.0)
    """The normalization layer's epsilon (BERT's 1e-12; PyTorch's default, which both the anchor
    and the abstract-symbols authors keep, is 1e-5). A field of its own, not an option of
    `norm_layer`, while checkpoints' architectures name it (model/pretrained.py)."""
    ln_final_affine: bool = True
    """norm_position="pre" only: the final LayerNorm has a learned gain and bias; the
    abstract-symbols authors' has none (a plain standardization before the read-out)."""
    tie_layers: bool = False
    """ALBERT-like: one block's weights shared by all layers (LEGO paper §3)."""
    depth_range: tuple[int, int] | None = None
    """Stochastic depth: in training, depth drawn uniformly in [lo, hi] per batch; L at eval."""
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """Dropout on attention pattern, attention output, MLP output and embeddings."""

    # -- attention -------------------------------------------------------------------------
    attention: SerializeAsAny[VariantConfig] = VariantConfig(name="softmax")
    """ATTENTION entry and its options: a name ("identity") or {"name": ..., option: ...}."""
    causal: bool = False
    """Causal (decoder) mask instead of bidirectional (encoder) attention."""
    n_kv_heads: int | None = Field(None, gt=0)
    """Grouped-query attention (Ainslie et al. 2023; Llama): the number of key/value heads, as
    TransformerLens (`n_key_value_heads`), HF (`num_key_value_heads`) and litgpt (`n_query_groups`)
    count them; n_heads / n_kv_heads query heads share each. SmolLM2-135M: 9 query heads, 3
    key/value heads. None = n_heads: multi-head attention. (Older configs wrote `kv_groups`, the
    query heads per key/value head; it is converted on load.)"""
    attn_bias: bool = True
    """Biases in the Q/K/V/O projections; the abstract-symbols models have none."""

    # -- MLP -------------------------------------------------------------------------------
    mlp: SerializeAsAny[VariantConfig] = VariantConfig(name="standard")
    """MLPS entry: the feed-forward block of a Transformer layer."""
    act: Literal["gelu", "relu", "gelu_tanh"] = "gelu"
    """Feed-forward nonlinearity: "gelu" is the exact (erf) GELU (BERT's); "gelu_tanh" its
    tanh approximation (GPT-2's and ALBERT's `gelu_new`, Hendrycks & Gimpel 2016 §2)."""
    mlp_bias: bool = True
    """Biases in the feed-forward linears (BERT's); the anchor authors' have none."""

    # -- head ------------------------------------------------------------------------------
    tie_head: bool = False
    """Read-out weight = W_E (needs n_classes == vocab_size): symbolic labels (copying)."""

    # -- initialization --------------------------------------------------------------------
    init: SerializeAsAny[VariantConfig] = VariantConfig(name="default")
    """INITS entry and its options, e.g. {"name": "rate", "gamma": 0.5}: how the weights are
    initialized."""
    init_std: float = Field(0.02, gt=0.0)
    """Standard deviation of the default normal initialization (BERT's 0.02)."""

    # -- inputs from the task (TrainConfig fills them from the task) -----------------------
    vocab_size: int = Field(gt=0)
    """Number of token ids (usually filled from the task's vocabulary)."""
    n_classes: int = Field(gt=0)
    """Classes of the output head (usually filled from the task)."""
    max_seq_len: int = Field(gt=0)
    """Longest sequence the model accepts (rows of W_pos, or of the rotary tables)."""
    d_input: int | None = Field(None, gt=0)
    """Width of one continuous input token (a patch of bits or pixels; filled from the task's
    `d_input`); None: the inputs are token ids. Read by the "fpt" and "lnlstm" architectures'
    trained input layer (a linear map, or an embedding for token ids)."""
    outputs_per_token: int = Field(1, gt=0)
    """Output groups one labelled token carries (filled from the task): the read-out emits
    outputs_per_token x n_classes logits and `Batch.label_sub` picks the group of each slot
    (bit memory: the 50 bits of a query patch). Read by "fpt" and "lnlstm"."""

    @property
    def d_head_(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def n_kv_heads_(self) -> int:
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @property
    def queries_per_kv_head(self) -> int:
        return self.n_heads // self.n_kv_heads_

    @property
    def n_unique_layers(self) -> int:
        return 1 if self.tie_layers else self.n_layers

    @model_validator(mode="before")
    @classmethod
    def _resolve_variants(cls, data: Any) -> Any:
        """Older names under today's (config_compat.py); each sub-config from its registry
        entry's Config (model/variants.py)."""
        if not isinstance(data, dict):
            return data
        defaults = {k: f.default for k, f in cls.model_fields.items()}
        data = upgrade_model_keys(dict(data), defaults)
        for field, registry in REGISTRIES.items():
            if field in data:
                data[field] = resolve(registry, data[field], where=f"model.{field}")
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        """The rules between shared fields; then each variant's own (VariantConfig.check)."""
        if self.d_head is None and self.d_model % self.n_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; "
                "change one or set d_head"
            )
        if self.n_heads % self.n_kv_heads_:
            raise ValueError(f"n_kv_heads={self.n_kv_heads_} (key/value heads) must divide "
                             f"n_heads={self.n_heads}")
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
        if not self.ln_final_affine and self.norm_position != "pre":
            raise ValueError(f"ln_final_affine=False needs norm_position='pre' (norm_position="
                             f"{self.norm_position!r} has no final LayerNorm); remove it or set "
                             "norm_position='pre'")
        reads = getattr(MODELS[self.arch.name], "reads_features", False)
        if (self.d_input is not None or self.outputs_per_token != 1) and not reads:
            raise ValueError(f"the task gives continuous inputs or several outputs per token, "
                             f"which arch={self.arch.name!r} does not read; use arch='fpt' or "
                             "'lnlstm'")
        if self.tie_head and self.d_embed is not None:
            raise ValueError("tie_head reads W_E as a d_model-wide read-out; it cannot be "
                             "combined with a factorised embedding (d_embed): remove one")
        if self.tie_head and self.n_classes != self.vocab_size:
            raise ValueError(f"tie_head needs n_classes ({self.n_classes}) == vocab_size "
                             f"({self.vocab_size}): a task with symbolic labels")
        self._check_sizes()
        for field, registry in REGISTRIES.items():  # the defaults too, which skip _resolve
            resolve(registry, getattr(self, field), where=f"model.{field}").check(self)
        return self

    def _check_sizes(self) -> None:
        """Sizes no machine holds fail here, in one line, before anything is built (a weight's
        element count overflowed torch's storage size, even on the meta device, which the
        free-disk check builds the model on)."""
        d_head = self.d_head or max(1, self.d_model // self.n_heads)
        widths = {"d_model": self.d_model, "d_mlp": self.d_mlp, "vocab_size": self.vocab_size,
                  "max_seq_len": self.max_seq_len, "n_classes": self.n_classes,
                  "n_heads * d_head": self.n_heads * d_head, "d_embed": self.d_embed or 1}
        name, width = max(widths.items(), key=lambda kv: kv[1])
        if self.d_model * width > MAX_WEIGHT:
            raise ValueError(f"a d_model x {name} weight of {self.d_model} x {width} "
                             f"({self.d_model * width:.3g} elements) is beyond any machine's "
                             f"memory (at most {MAX_WEIGHT:.3g} per weight); lower them")
