"""The Frozen Pretrained Transformer (Lu, Grover, Abbeel, Mordatch 2021; docs/papers.md §4).

A language model's layers, frozen, between a new trained input layer and a new trained
read-out; position embeddings and the norms' gains train too (the freeze policy, model/freeze.py,
says which groups train; this module only builds the network). In forward order:

    input       W_in: an embedding of the task's token ids (ListOps), or a linear map from a
                continuous token of d_input values (a patch of bits or pixels) to d_model.
                The authors' linear input layer is orthogonally initialised with gain 1.41
                (docs/papers.md §4, "FPT, authors' recipe"); their embedding is
                nn.Embedding's N(0, 1).
    positions   W_pos [max_seq_len, d_model] added to the input. The backbone's own learned
                table when it has one (BERT / MiniLM; GPT-2's wpe in the paper), trained from its
                pretrained values: freeze group "positions". A rotary backbone (Llama /
                SmolLM2) has no table: its attention keeps rotating q and k by position, frozen
                like the rest of the attention, and FPT adds a trained absolute table
                initialised at ZERO, so that at step 0 the backbone sees inputs placed as in
                pretraining and the table only learns what the task adds: freeze group
                "added_positions" (the authors do the same for ViT, whose positions they
                replace by `vit_pos_embed = zeros(1, 1024, 768)`, universal_computation/fpt.py).
    backbone    the Transformer's embedding norm (BERT), its layers and final norm (pre-LN),
                unchanged: hook points keep their names under `backbone.` (e.g.
                `backbone.blocks.3.attn.hook_pattern`). The backbone's token table W_E does not
                enter the forward pass (the input layer replaces it) and is the `embeddings`
                group.
    read-out    `head`: a linear map from the hidden state at each label_pos (the last token,
                or the last k tokens for k outputs) to outputs_per_token x n_classes logits;
                label_sub picks each slot's group (bit memory: one of the 50 bits of a query
                patch). nn.Linear's own init, as the authors'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.freeze import Group
from reasonlab.model.hooks import HookedModule, HookPoint, name_hook_points
from reasonlab.model.transformer import Transformer, gather_positions
from reasonlab.model.variants import MODELS, VariantConfig
from reasonlab.registry import Registry


class InputLayer(nn.Module):
    """Token ids [batch, seq] or features [batch, seq, d_input] -> [batch, seq, d_model]."""

    def __init__(self, config: ModelConfig, generator: torch.Generator | None):
        super().__init__()
        d = config.d_model
        self.continuous = config.d_input is not None
        if self.continuous:
            self.proj = nn.Linear(config.d_input, d)
            _torch_linear_init(self.proj, generator)
            # the authors' input layer: orthogonal, gain 1.41 (docs/papers.md §4)
            nn.init.orthogonal_(self.proj.weight, gain=1.41, generator=generator)
        else:
            self.W_in = nn.Parameter(torch.randn(config.vocab_size, d, generator=generator))

    def forward(self, tokens: torch.Tensor, features: torch.Tensor | None) -> torch.Tensor:
        if self.continuous:
            if features is None:
                raise ConfigError("this model reads continuous inputs (d_input set) but the "
                                  "batch has no features; use a task that provides them")
            return self.proj(features)  # [batch, seq, d_model]
        return F.embedding(tokens, self.W_in)  # [batch, seq, d_model]


class ReadOut(nn.Module):
    """Hidden states at label_pos -> logits [batch, P, n_classes] (one group per slot)."""

    def __init__(self, config: ModelConfig, generator: torch.Generator | None):
        super().__init__()
        self.k, self.c = config.outputs_per_token, config.n_classes
        self.head = nn.Linear(config.d_model, self.k * self.c)
        _torch_linear_init(self.head, generator)

    def forward(self, x: torch.Tensor, label_pos: torch.Tensor | None,
                label_sub: torch.Tensor | None) -> torch.Tensor:
        logits = self.head(gather_positions(x, label_pos))  # [batch, P, k * n_classes]
        if self.k == 1:
            return logits
        B, P = logits.shape[:2]
        logits = logits.view(B, P, self.k, self.c)
        if label_sub is None:
            raise ConfigError(f"outputs_per_token={self.k} needs the batch's label_sub")
        index = label_sub[..., None, None].expand(B, P, 1, self.c)
        return logits.gather(2, index).squeeze(2)  # [batch, P, n_classes]


@torch.no_grad()
def _torch_linear_init(layer: nn.Linear, generator: torch.Generator | None) -> None:
    """nn.Linear's default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from our generator."""
    bound = 1.0 / math.sqrt(layer.in_features)
    for p in (layer.weight, layer.bias):
        if p is not None:
            p.uniform_(-bound, bound, generator=generator)


@MODELS.register("fpt")
class FPT(HookedModule):
    """Input layer -> W_pos -> backbone layers -> read-out (see the module docstring)."""

    Config = VariantConfig  # no options: the backbone is the ModelConfig's Transformer
    reads_features = True

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        self.input = InputLayer(config, generator)
        backbone = config.model_copy(update={"arch": VariantConfig(name="transformer"),
                                             "tie_head": False})
        self.backbone = Transformer(backbone, generator)
        # the backbone's own head is never used; drop it (no dead trained parameters)
        del self.backbone.head
        # rotary backbones have no table: a trained one starting at zero (module docstring)
        self.W_pos = (nn.Parameter(torch.zeros(config.max_seq_len, config.d_model))
                      if self.backbone.W_pos is None else None)
        self.hook_input = HookPoint()
        self.hook_pos_embed = HookPoint()
        self.readout = ReadOut(config, generator)
        name_hook_points(self)

    def positions(self) -> torch.Tensor:  # [max_seq_len, d_model]
        return self.W_pos if self.W_pos is not None else self.backbone.W_pos

    def forward(self, tokens: torch.Tensor, label_pos: torch.Tensor | None = None,
                pad_mask: torch.Tensor | None = None, depth: int | None = None,
                features: torch.Tensor | None = None, label_sub: torch.Tensor | None = None
                ) -> torch.Tensor:
        """tokens [batch, seq] (features [batch, seq, d_input] for continuous inputs) ->
        logits [batch, P, n_classes] at label_pos [batch, P], group label_sub [batch, P]."""
        B, T = tokens.shape
        if T > self.config.max_seq_len:
            raise ConfigError(f"sequence length {T} exceeds max_seq_len="
                              f"{self.config.max_seq_len}")
        x = self.hook_input(self.input(tokens, features))  # [batch, seq, d_model]
        x = x + self.hook_pos_embed(self.positions()[:T].expand(B, T, -1))
        x = self.backbone.embed_out(x)  # BERT: embedding LayerNorm; [batch, seq, d_model]
        depth = depth or self.config.n_layers
        if label_pos is not None and self._read_rows_only(depth):
            # the read-out needs the last block at label_pos only (Transformer.run_layers);
            # padded slots (-1) read position 0, as gather_positions does
            x = self.backbone.run_layers(x, pad_mask, depth, rows=label_pos.clamp(min=0))
            return self.readout(x, None, label_sub)  # [batch, P, n_classes]
        x = self.backbone.run_layers(x, pad_mask, depth)  # [batch, seq, d_model]
        return self.readout(x, label_pos, label_sub)  # [batch, P, n_classes]

    def _read_rows_only(self, depth: int) -> bool:
        """The last block may run at the read positions only: plain softmax attention (the
        variants' maths may mix positions after the attention) and no hook on that block or
        the final norm (a hook expects every position)."""
        from reasonlab.model.attention import SoftmaxAttention

        attn = self.backbone.layer(depth - 1).attn
        points = [*self.backbone.blocks[depth - 1].modules(), self.backbone.hook_final]
        return (type(attn).forward is SoftmaxAttention.forward and attn.fusable
                and not any(isinstance(p, HookPoint) and p.has_hooks for p in points))

    def param_group(self, name: str) -> str:
        """The freeze-policy group of parameter `name` (model/freeze.py GROUPS)."""
        if name.startswith("input."):
            return "input"
        if name.startswith("readout."):
            return "output"
        if name == "backbone.W_pos":  # the backbone's own (pretrained) table
            return "positions"
        if name == "W_pos":  # the zero table added for a rotary backbone (module docstring)
            return "added_positions"
        owner = self.get_submodule(name.rsplit(".", 1)[0])
        from reasonlab.model.init import is_norm

        if is_norm(owner):
            return "norms"
        if ".attn." in name:
            return "attention"
        if ".mlp." in name:
            return "mlp"
        if name.startswith(("backbone.W_E", "backbone.embed_proj")):
            return "embeddings"
        raise ValueError(f"parameter {name} belongs to no freeze group")

    def num_params(self, non_embedding: bool = False) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n - self.backbone.W_E.numel() if non_embedding else n


# ---------------------------------------------------------------------- backbones


@dataclass(frozen=True)
class Backbone:
    """A pretrained language model FPT freezes (the paper's GPT-2), as data: its checkpoint
    (model/pretrained.py PRETRAINED) and what its position and norm groups hold. A study takes
    the backbone as a factor (studies/fpt/_support/backbone.py), so every claim is judged on
    each."""

    name: str
    checkpoint: str
    """PRETRAINED entry whose layers FPT freezes."""
    statistics: str
    """PRETRAINED entry of its "Statistics Only" twin (model/pretrained.py StatisticsOnly)."""
    title: str
    """How reports name it."""
    positions: Group
    """The group of its position parameters: "positions" (its own pretrained table) or
    "added_positions" (a new zero table, for a rotary backbone)."""
    structure: str
    """One line for reports: norms and positions as they differ from GPT-2's."""

    @property
    def architecture(self) -> dict[str, Any]:
        """The ModelConfig fields the checkpoint fixes (n_layers: all of its layers)."""
        from reasonlab.model.pretrained import fixed_fields

        return fixed_fields(self.checkpoint)

    def fields(self, n_layers: int, init: Init = "pretrained") -> dict[str, Any]:
        """TrainConfig fields of an FPT run on this backbone's first n_layers layers, its
        weights as `init` says (INIT_ROWS: the slides' "Weight initialization" rows)."""
        model = {"arch": "fpt", "n_layers": n_layers}
        checkpoint = {"pretrained": self.checkpoint, "statistics": self.statistics,
                      "random": None}[init]
        if checkpoint is None:
            return {"model": {**self.architecture, **model}}
        return {"model": model, "init_from": checkpoint}


Init = Literal["pretrained", "statistics", "random"]
INIT_ROWS: dict[Init, str] = {"pretrained": "Pretrained", "statistics": "Statistics Only",
                              "random": "Default"}
"""A backbone's weights -> its row in the slides' "Weight initialization" table (Lu et al.
2021): the checkpoint's; its "Statistics Only" twin (model/pretrained.py StatisticsOnly: each
tensor redrawn with its mean and std); the same architecture at the default random init
(N(0, 0.02), Hugging Face's for GPT-2, BERT and Llama alike; the paper's "Random" / frozen
random transformer). Not the INITS registry of init schemes (model/variants.py)."""


FPT_BACKBONES: Registry[Backbone] = Registry("FPT backbone")
"""The offline backbones (SmolLM2, MiniLM: no GPT-2 weights reach our machines, docs/design.md
§9) and the paper's own, found in a local Hugging Face folder or cache at paper scale."""

SMOLLM2_BACKBONE = FPT_BACKBONES.register("smollm2")(Backbone(
    name="smollm2", checkpoint="smollm2-135m", statistics="smollm2-135m-statistics",
    title="SmolLM2-135M", positions="added_positions",
    structure="Llama-style decoder: RMSNorm gains only (no bias, no centring); rotary "
              "positions, so FPT trains a NEW zero-initialised input table (added_positions)"))
MINILM_BACKBONE = FPT_BACKBONES.register("minilm")(Backbone(
    name="minilm", checkpoint="all-minilm-l6-v2", statistics="all-minilm-l6-v2-statistics",
    title="MiniLM-L6", positions="positions",
    structure="BERT encoder (all-MiniLM-L6-v2): LayerNorm with gain and bias, as GPT-2's; "
              "its OWN 512 learned positions train from their pretrained values, as the "
              "authors train GPT-2's wpe"))

# The paper's own backbones (GPT-2, Lu et al. 2021) and the other rows of its slides, read from
# a local Hugging Face folder or cache (model/hf.py; the paper scale).
_GPT2 = ("LayerNorm with gain and bias; its own 1024 learned positions train from their "
         "pretrained values (wpe), as the authors train them")
for _name, _title, _layers in (("gpt2", "GPT-2 small", 12), ("gpt2-medium", "GPT-2 medium", 24),
                               ("gpt2-large", "GPT-2 large", 36)):
    FPT_BACKBONES.register(_name)(Backbone(
        name=_name, checkpoint=_name, statistics=f"{_name}-statistics", title=_title,
        positions="positions",
        structure=f"the paper's backbone ({_title}, {_layers} layers): {_GPT2}"))
BERT_BACKBONE = FPT_BACKBONES.register("bert")(Backbone(
    name="bert", checkpoint="bert-base-uncased", statistics="bert-base-uncased-statistics",
    title="BERT-base", positions="positions",
    structure="bert-base-uncased (the slides' BERT row): a post-LN encoder, its own 512 learned "
              "positions train from their pretrained values"))
LONGFORMER_BACKBONE = FPT_BACKBONES.register("longformer")(Backbone(
    name="longformer", checkpoint="longformer-base-4096",
    statistics="statistics:longformer-base-4096", title="Longformer-base", positions="positions",
    structure="longformer-base-4096 (the slides' Longformer row): RoBERTa's layers with a "
              "512-token sliding window, full attention on sequences within it (257 tokens)"))
VIT_BACKBONE = FPT_BACKBONES.register("vit")(Backbone(
    name="vit", checkpoint="vit-base-patch16-224", statistics="statistics:vit-base-patch16-224",
    title="ViT-B/16", positions="positions",
    structure="vit-base-patch16-224 (the slides' ViT row): a pre-LN encoder pretrained on "
              "images; as the authors, a fresh zero-initialised position table that trains"))


def folder_backbone(spec: str) -> Backbone:
    """A Backbone from any pretrained source (`hf:FOLDER`, `hf:HUB_NAME`, a PRETRAINED name):
    its positions group from its architecture (a learned table, or a rotary backbone's added
    one)."""
    from reasonlab.model.pretrained import checkpoint

    arch = checkpoint(spec).architecture
    rotary = arch.get("positions") == "rotary"
    return Backbone(name=spec, checkpoint=spec, statistics=f"statistics:{spec}", title=spec,
                    positions="added_positions" if rotary else "positions",
                    structure=f"{spec}: " + ("rotary positions, so FPT trains a new "
                                             "zero-initialised table" if rotary else
                                             "its own learned positions train"))
