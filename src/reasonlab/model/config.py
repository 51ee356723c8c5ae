"""ModelConfig: every architectural choice of the Transformer, typed and validated."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, SerializeAsAny, model_validator

from reasonlab.config import StrictModel
from reasonlab.model.variants import REGISTRIES, VariantConfig, resolve

LEGACY_KEYS: dict[str, tuple[str, str, str]] = {
    "identity_terms": ("attention", "identity", "terms"),
    "identity_zero_diag": ("attention", "identity", "zero_diag"),
    "mlp_equality": ("arch", "mlp_baseline", "equality"),
    "init_gamma": ("init", "rate", "gamma"),
}
"""Flat keys of the ModelConfig before variants owned their options -> (field,
entry, option). Still accepted as input, so that old config files, the config.json of old run
folders (`reasonlab runs show/diff`) and flat overrides keep validating. Old dumps hold null for
an unset key; null is skipped."""

RENAMED_FIELDS = {"norm": "norm_position", "normalization": "norm_layer"}
"""Old ModelConfig field names -> new ones: `norm` (where the normalization sits) stood beside
`normalization` (which layer it is). Old names are accepted on input; no name is reused, so an
old key never means something else now."""

RENAMED_ARCHS = {"mlp": "mlp_baseline"}
"""Old MODELS names -> new ones: the abstract-symbols MLP baseline was "mlp", beside the MLPS
registry of feed-forward blocks and the `mlp` field that selects one."""


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
    norm_position: Literal["pre", "post", "post_no_embed_ln"] = "post"
    """Where the normalization layers (`norm_layer`) sit. "post": BERT's post-LN, which also
    normalizes the summed embeddings before layer 1. "post_no_embed_ln": post-LN inside the
    blocks only, the embeddings going straight into layer 1 (Vaswani et al. 2017; the
    anchor-function authors' GPT, docs/papers.md §5.1 Anchor functions): an embedding LayerNorm
    rescales W_E[x] + W_pos to unit RMS and so undoes a small initialization of them. "pre":
    pre-LN, with a final LayerNorm."""
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
    attention: SerializeAsAny[VariantConfig] = VariantConfig(name="softmax")
    """ATTENTION entry and its options: a name ("identity") or {"name": ..., option: ...}."""
    act: Literal["gelu", "relu", "gelu_tanh"] = "gelu"
    """Feed-forward nonlinearity: "gelu" is the exact (erf) GELU (BERT's); "gelu_tanh" its
    tanh approximation (GPT-2's and ALBERT's `gelu_new`, Hendrycks & Gimpel 2016 §2)."""
    init: SerializeAsAny[VariantConfig] = VariantConfig(name="default")
    """INITS entry and its options, e.g. {"name": "rate", "gamma": 0.5}: how the weights are
    initialized."""
    init_std: float = Field(0.02, gt=0.0)
    """Standard deviation of the default normal initialization (BERT's 0.02)."""
    ln_eps: float = Field(1e-12, gt=0.0)
    """LayerNorm epsilon (BERT's 1e-12; PyTorch's default, which both the anchor and the
    abstract-symbols authors keep, is 1e-5)."""
    mlp_bias: bool = True
    """Biases in the feed-forward linears (BERT's); the anchor authors' have none."""
    ln_final_affine: bool = True
    """norm_position="pre" only: the final LayerNorm has a learned gain and bias; the
    abstract-symbols authors' has none (a plain standardization before the read-out)."""

    norm_layer: SerializeAsAny[VariantConfig] = VariantConfig(name="layernorm")
    """NORMS entry: the normalization layer (`norm_position` says where it sits)."""
    mlp: SerializeAsAny[VariantConfig] = VariantConfig(name="standard")
    """MLPS entry: the feed-forward block of a Transformer layer."""
    d_input: int | None = Field(None, gt=0)
    """Width of one continuous input token (a patch of bits or pixels; filled from the task's
    `d_input`); None: the inputs are token ids. Read by the "fpt" and "lstm" architectures'
    trained input layer (a linear map, or an embedding for token ids)."""
    outputs_per_token: int = Field(1, gt=0)
    """Output groups one labelled token carries (filled from the task): the read-out emits
    outputs_per_token x n_classes logits and `Batch.label_sub` picks the group of each slot
    (bit memory: the 50 bits of a query patch). Read by "fpt" and "lstm"."""
    n_kv_heads: int | None = Field(None, gt=0)
    """Grouped-query attention (Ainslie et al. 2023; Llama): the number of key/value heads, as
    TransformerLens (`n_key_value_heads`), HF (`num_key_value_heads`) and litgpt (`n_query_groups`)
    count them; n_heads / n_kv_heads query heads share each. SmolLM2-135M: 9 query heads, 3
    key/value heads. None = n_heads: multi-head attention. (Older configs wrote `kv_groups`, the
    query heads per key/value head; it is converted on load.)"""

    # -- abstract-symbols variants (Boix-Adsera et al. 2024; docs/papers.md §2) -------------
    arch: SerializeAsAny[VariantConfig] = VariantConfig(name="transformer")
    """MODELS entry: "transformer", or "mlp_baseline" (the paper's MLP baseline; model/
    mlp_baseline.py), "fpt", "lstm"."""
    attn_bias: bool = True
    """Biases in the Q/K/V/O projections; the abstract-symbols models have none."""
    tie_head: bool = False
    """Read-out weight = W_E (needs n_classes == vocab_size): symbolic labels (copying)."""

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
        """Each sub-config from its registry entry's Config (see model/variants.py)."""
        if not isinstance(data, dict):
            return data
        data = _map_legacy_keys(dict(data))
        for field, registry in REGISTRIES.items():
            if field in data:
                data[field] = resolve(registry, data[field], where=f"model.{field}")
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        """The rules between fields; a variant's own options are checked by its Config."""
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
        for field, registry in REGISTRIES.items():  # also the defaults, which skip _resolve
            resolve(registry, getattr(self, field), where=f"model.{field}")
        if not self.ln_final_affine and self.norm_position != "pre":
            raise ValueError(f"ln_final_affine=False needs norm_position='pre' (norm_position="
                             f"{self.norm_position!r} has no final LayerNorm); remove it or set "
                             "norm_position='pre'")
        from reasonlab.model.variants import MODELS

        reads = getattr(MODELS[self.arch.name], "reads_features", False)
        if (self.d_input is not None or self.outputs_per_token != 1) and not reads:
            raise ValueError(f"the task gives continuous inputs or several outputs per token, "
                             f"which arch={self.arch.name!r} does not read; use arch='fpt' or "
                             "'lstm'")
        if self.arch.name == "mlp_baseline" and (self.attention.name != "softmax"
                                                 or self.tie_head):
            raise ValueError("arch='mlp_baseline' has no attention and no tied head; remove "
                             "attention and tie_head")
        if self.tie_head and self.d_embed is not None:
            raise ValueError("tie_head reads W_E as a d_model-wide read-out; it cannot be "
                             "combined with a factorised embedding (d_embed): remove one")
        if self.tie_head and self.n_classes != self.vocab_size:
            raise ValueError(f"tie_head needs n_classes ({self.n_classes}) == vocab_size "
                             f"({self.vocab_size}): a task with symbolic labels")
        self._check_hardcoded()
        return self

    def _check_hardcoded(self) -> None:
        """LEGO §5 (model/hardcoded_attention.py, read by attribute so that this module does not
        import its variants): the broadcast maps read token ids; Hybrid keeps fewer heads than
        BERT."""
        opts = self.attention
        for key in ("cls_id", "sep_id"):
            if hasattr(opts, key) and getattr(opts, key) >= self.vocab_size:
                raise ValueError(f"attention.{key}={getattr(opts, key)} is not a token id "
                                 f"(vocab_size={self.vocab_size})")
        if hasattr(opts, "learned_heads") and opts.learned_heads >= self.n_heads:
            raise ValueError(f"attention.learned_heads={opts.learned_heads} must be fewer than "
                             f"n_heads={self.n_heads}: Hybrid replaces some of BERT's heads "
                             "by the hardcoded maps and the convolution")


def _map_legacy_keys(data: dict[str, Any]) -> dict[str, Any]:
    """Move the LEGACY_KEYS into the sub-config of the entry that reads them; convert the old
    `kv_groups` (query heads per key/value head) into `n_kv_heads` (key/value heads); rename
    RENAMED_FIELDS and RENAMED_ARCHS."""
    for old, new in RENAMED_FIELDS.items():
        if old in data:
            if data.get(new) is not None:
                raise ValueError(f"{old} (the old name of {new}) and {new} are both set; give "
                                 f"{new} only")
            data[new] = data.pop(old)
    arch = data.get("arch")
    if isinstance(arch, str) and arch in RENAMED_ARCHS:
        data["arch"] = RENAMED_ARCHS[arch]
    elif isinstance(arch, dict) and arch.get("name") in RENAMED_ARCHS:
        data["arch"] = {**arch, "name": RENAMED_ARCHS[arch["name"]]}
    groups = data.pop("kv_groups", None)
    if groups is not None:
        n_heads = data.get("n_heads", ModelConfig.model_fields["n_heads"].default)
        if type(groups) is not int or type(n_heads) is not int or groups <= 0 or (
                n_heads % groups):
            raise ValueError(f"kv_groups={groups} (the old name: query heads per key/value "
                             f"head) must divide n_heads={n_heads}; write n_kv_heads instead")
        if data.get("n_kv_heads") not in (None, n_heads // groups):
            raise ValueError(f"kv_groups={groups} and n_kv_heads={data['n_kv_heads']} disagree "
                             f"(n_heads={n_heads}); keep n_kv_heads only")
        data["n_kv_heads"] = None if groups == 1 else n_heads // groups
    for old, (field, entry, option) in LEGACY_KEYS.items():
        value = data.pop(old, None)
        if value is None:
            continue
        sub = data.get(field, ModelConfig.model_fields[field].default)
        if isinstance(sub, str):
            sub = {"name": sub}
        elif isinstance(sub, VariantConfig):
            sub = sub.model_dump()
        elif not isinstance(sub, dict):
            raise ValueError(f"{field} must be a name or an object with a \"name\" key")
        if sub.get("name") != entry:
            raise ValueError(f"{old} is an option of {field}={entry!r} (now {field}."
                             f"{option}), not of {field}={sub.get('name')!r}; remove it or set "
                             f"{field}={{\"name\": \"{entry}\", \"{option}\": ...}}")
        if option in sub and sub[option] != value:
            raise ValueError(f"{old}={value!r} disagrees with {field}.{option}="
                             f"{sub[option]!r}; give one")
        data[field] = {**sub, option: value}
    return data


def legacy_names(dump: dict[str, Any]) -> dict[str, Any]:
    """A ModelConfig dump under the old names (RENAMED_FIELDS, RENAMED_ARCHS), as the run id
    hashes it (train/config.py, id_view)."""
    fields = {new: old for old, new in RENAMED_FIELDS.items()}
    out = {fields.get(k, k): v for k, v in dump.items()}
    archs = {new: old for old, new in RENAMED_ARCHS.items()}
    arch = out.get("arch")
    if isinstance(arch, dict) and arch.get("name") in archs:
        out["arch"] = {**arch, "name": archs[arch["name"]]}
    return out
