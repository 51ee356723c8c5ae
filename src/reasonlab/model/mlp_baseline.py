"""MLP baseline of the abstract-symbols paper (Boix-Adsera et al., ICLR 2024, §3; docs/papers.md
§2 Abstract symbols): the MODELS entry "mlp_baseline" (named apart from the MLPS registry of a
Transformer layer's feed-forward blocks; older configs wrote "mlp", converted on load).

The input string x_1 .. x_T (padded to max_seq_len) becomes one vector, fed to a ReLU/GELU MLP
with n_layers hidden layers of width d_mlp. How the string becomes a vector is the option
`input` (MLP_INPUTS), and it decides whether the paper's impossibility result applies:

  - "one_hot" (the theorem's setting, §3 and Appendix I; the authors'
    `TemplateMatchingMLP`, eboix/relational-reasoning experiments/models.py lines 17-38): the
    concatenated one-hot vectors e_{x_1} .. e_{x_T} (length T * vocab) into a Linear layer, so
    every (position, symbol) pair has its own column of first-layer weights. Two positions holding
    the same unseen symbol share nothing, a symbol never seen in training keeps its initial
    columns, and SGD is symmetric under permuting the symbols: no better than chance.
  - "shared_embedding" (the default, so that run ids from before this option keep their
    meaning; our earlier reading, and the authors' other baseline,
    `TemplateMatchingMLPSharedEmbedding`, models.py lines 71-91, with table width hidden_dim
    where ours is d_model): one table W_E for every position, [W_E[x_1] .. W_E[x_T]] into the
    first Linear. Two equal symbols give the same (random) vector twice, so a first layer with
    opposite weights on two slots can detect equality even for unseen symbols (our finding,
    study `symbols-mlp-vs-transformer`).

Option `equality` also feeds the flattened T x T equality matrix X X^T: for one-hot input
exactly [x_i == x_j] (X X^T of one-hot rows, the authors' `TemplateMatchingMLPWithXXT` with
xxt_scaling 1, models.py lines 42-67); for the shared table the Gram matrix of the LayerNormed
embeddings over d_model (our reading, equal to it up to O(1/sqrt(d_model))).

Same call signature as the Transformer, so the training loop serves both: it reads the label
at one slot per sequence (the template tasks' [OUT] token), which for the MLP is the whole
string.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.transformer import ACTIVATIONS
from reasonlab.model.variants import INITS, MODELS, NORMS, VariantConfig


class SharedEmbeddingInput(nn.Module):
    """tokens [batch, T] -> first-layer pre-activations [batch, d_out]: one embedding table for
    every position, the T embeddings concatenated into a Linear."""

    def __init__(self, config: ModelConfig, equality: bool, d_out: int):
        super().__init__()
        d, T = config.d_model, config.max_seq_len
        self.W_E = nn.Parameter(torch.empty(config.vocab_size, d))  # [vocab, d_model]
        self.ln = NORMS[config.norm_layer.name](d, config) if equality else None
        self.linear = nn.Linear(T * d + (T * T if equality else 0), d_out)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        X = F.embedding(tokens, self.W_E)  # [batch, T, d_model]
        feats = [X.flatten(1)]  # [batch, T * d_model]
        if self.ln is not None:
            Xn = self.ln(X)
            feats.append((Xn @ Xn.transpose(1, 2) / X.shape[-1]).flatten(1))  # [batch, T*T]
        return self.linear(torch.cat(feats, dim=1))

    def embedding_numel(self) -> int:
        return self.W_E.numel()


class OneHotInput(nn.Module):
    """tokens [batch, T] -> first-layer pre-activations [batch, d_out]: a Linear on the
    concatenated one-hot string, weight [d_out, T * vocab (+ T * T)], column t * vocab + s
    being position t's weights for symbol s.

    The product with the one-hot vector is computed as a gather of the T columns the string
    selects (exactly the same sum; at the paper's 100k symbols the one-hot batch alone would
    take gigabytes). The gather's backward writes only those columns, so the gradient of every
    other column is exactly zero, as for the matrix product.
    """

    def __init__(self, config: ModelConfig, equality: bool, d_out: int):
        super().__init__()
        T, V = config.max_seq_len, config.vocab_size
        self.n_onehot = T * V
        self.equality = equality
        self.linear = nn.Linear(T * V + (T * T if equality else 0), d_out)
        self.register_buffer("offsets", torch.arange(T) * V, persistent=False)  # [T]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        W = self.linear.weight  # [d_out, T * vocab (+ T * T)]
        cols = F.embedding(tokens + self.offsets, W.T)  # [batch, T, d_out]: W e_(t, x_t)
        h = cols.sum(1) + self.linear.bias
        if self.equality:
            eq = (tokens[:, :, None] == tokens[:, None, :]).flatten(1).to(W.dtype)  # [batch, T*T]
            h = h + eq @ W[:, self.n_onehot:].T
        return h

    def embedding_numel(self) -> int:
        return self.n_onehot * self.linear.out_features


MLP_INPUTS: dict[str, type[nn.Module]] = {"one_hot": OneHotInput,
                                          "shared_embedding": SharedEmbeddingInput}
"""MLPBaseline.Config.input -> the input stage (tokens -> first-layer pre-activations)."""


@MODELS.register("mlp_baseline")
class MLPBaseline(nn.Module):
    """tokens [batch, seq] -> logits [batch, 1, n_classes]."""

    class Config(VariantConfig):
        input: Literal["shared_embedding", "one_hot"] = "shared_embedding"
        """How the string enters the first layer (MLP_INPUTS; the module docstring)."""
        equality: bool = False
        """Also feed the flattened equality matrix X X^T."""

        def check(self, model: ModelConfig) -> None:
            if model.attention.name != "softmax" or model.tie_head:
                raise ValueError("arch='mlp_baseline' has no attention and no tied head; "
                                 "remove attention and tie_head")

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        opts = config.arch
        assert isinstance(opts, MLPBaseline.Config)  # ModelConfig resolved it
        act = ACTIVATIONS[config.act]()
        self.input = MLP_INPUTS[opts.input](config, opts.equality, config.d_mlp)
        layers: list[nn.Module] = [act]  # the input stage is the first hidden layer's Linear
        for _ in range(config.n_layers - 1):
            layers += [nn.Linear(config.d_mlp, config.d_mlp), act]
        layers.append(nn.Linear(config.d_mlp, config.n_classes))
        self.net = nn.Sequential(*layers)
        INITS[config.init.name].apply(self, config, generator)
        self.register_load_state_dict_pre_hook(_old_layout)

    def forward(self, tokens: torch.Tensor, label_pos: torch.Tensor | None = None,
                pad_mask: torch.Tensor | None = None, depth: int | None = None) -> torch.Tensor:
        B, T = tokens.shape
        if label_pos is None or label_pos.shape[1] != 1:
            raise ConfigError("arch='mlp_baseline' reads one label per sequence; use a task "
                              "with one labelled slot (e.g. templates)")
        tokens = F.pad(tokens, (0, self.config.max_seq_len - T))  # [batch, max_seq_len], PAD=0
        return self.net(self.input(tokens))[:, None]  # [batch, 1, n_classes]

    def num_params(self, non_embedding: bool = False) -> int:
        """Parameters; non_embedding leaves out the per-token weights (W_E, or the one-hot
        columns of the first layer)."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.input.embedding_numel() if non_embedding else n


def _old_layout(module: nn.Module, state_dict: dict[str, torch.Tensor], prefix: str,
                *args: object) -> None:
    """Checkpoints of the first layout (before the `input` option, so shared embeddings only)
    load into this one, in place: W_E and ln moved into `input`, and the first hidden layer's
    Linear (then net.0, followed by its activation) became input.linear, so net.k (k >= 2)
    is now net.(k - 1). The parameters were created in the same order in both layouts, so an
    old run's id (unchanged) and its weights still match. Detected by net.0 holding weights:
    net.0 is the activation now."""
    if prefix + "net.0.weight" not in state_dict:
        return
    for key in [k for k in state_dict if k.startswith(prefix)]:
        name = key.removeprefix(prefix)
        if name == "W_E" or name.startswith("ln."):
            new = "input." + name
        elif name.startswith("net.0."):
            new = "input.linear." + name.removeprefix("net.0.")
        else:
            index, rest = name.removeprefix("net.").split(".", 1)
            new = f"net.{int(index) - 1}.{rest}"
        state_dict[prefix + new] = state_dict.pop(key)
