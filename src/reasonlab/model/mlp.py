"""MLP baseline of the abstract-symbols paper (Boix-Adsera et al., ICLR 2024, §3; docs/papers.md
§2 Abstract symbols): the MODELS entry "mlp".

The input string's token embeddings are concatenated (position = slot in the concatenation)
and fed to a ReLU/GELU MLP with n_layers hidden layers of width d_mlp. The paper proves that
such a network trained by SGD cannot generalise to unseen symbols (its permutation symmetry
over the symbol alphabet); option `equality` also feeds the flattened equality matrix X X^T / d
(X = LayerNorm of the embeddings), which carries which positions hold equal symbols, whatever
the symbols are.

Same call signature as the Transformer, so the training loop serves both: it reads the label
at one slot per sequence (the template tasks' [OUT] token), which for the MLP is the whole
string.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.variants import INITS, MODELS, NORMS, VariantConfig


@MODELS.register("mlp")
class MLPBaseline(nn.Module):
    """tokens [batch, seq] -> logits [batch, 1, n_classes]."""

    class Config(VariantConfig):
        equality: bool = False
        """Also feed the flattened equality matrix X X^T / d_model (X = the normalized
        embeddings)."""

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        opts = config.arch
        assert isinstance(opts, MLPBaseline.Config)  # ModelConfig resolved it
        d, T = config.d_model, config.max_seq_len
        self.W_E = nn.Parameter(torch.empty(config.vocab_size, d))  # [vocab, d_model]
        self.equality = opts.equality
        self.ln = NORMS[config.normalization.name](d, config) if self.equality else None
        width = T * d + (T * T if self.equality else 0)
        act = nn.GELU() if config.act == "gelu" else nn.ReLU()
        layers: list[nn.Module] = []
        for _ in range(config.n_layers):
            layers += [nn.Linear(width, config.d_mlp), act]
            width = config.d_mlp
        layers.append(nn.Linear(width, config.n_classes))
        self.net = nn.Sequential(*layers)
        INITS[config.init.name].apply(self, config, generator)

    def forward(self, tokens: torch.Tensor, label_pos: torch.Tensor | None = None,
                pad_mask: torch.Tensor | None = None, depth: int | None = None) -> torch.Tensor:
        B, T = tokens.shape
        if label_pos is None or label_pos.shape[1] != 1:
            raise ConfigError("arch='mlp' reads one label per sequence; use a task with one "
                              "labelled slot (e.g. templates)")
        tokens = F.pad(tokens, (0, self.config.max_seq_len - T))  # [batch, max_seq_len], PAD=0
        X = F.embedding(tokens, self.W_E)  # [batch, T, d_model]
        feats = [X.flatten(1)]  # [batch, T * d_model]
        if self.ln is not None:
            Xn = self.ln(X)
            feats.append((Xn @ Xn.transpose(1, 2) / X.shape[-1]).flatten(1))  # [batch, T*T]
        return self.net(torch.cat(feats, dim=1))[:, None]  # [batch, 1, n_classes]

    def num_params(self, non_embedding: bool = False) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n - self.W_E.numel() if non_embedding else n
