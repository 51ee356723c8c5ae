"""The LSTM baseline of the FPT paper (Lu et al. 2021, docs/papers.md §4: 3 layers, width 768).

Same input layer and read-out as the FPT model (model/fpt.py), with a stacked unidirectional
LSTM (torch's nn.LSTM, hidden size d_model, n_layers layers) in place of the transformer, so
the comparison changes only the sequence model. The hidden state at label_pos has read every
token up to it (ListOps: the last real token, so right padding is never read).
"""

from __future__ import annotations

import torch
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.model.fpt import InputLayer, ReadOut
from reasonlab.model.variants import MODELS, VariantConfig


@MODELS.register("lstm")
class LSTMBaseline(nn.Module):
    """tokens [batch, seq] (or features [batch, seq, d_input]) -> logits [batch, P, n_classes]."""

    Config = VariantConfig  # no options: d_model is the width, n_layers the depth
    reads_features = True

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        self.input = InputLayer(config, generator)
        self.lstm = nn.LSTM(config.d_model, config.d_model, config.n_layers, batch_first=True)
        # nn.LSTM's own init, U(-1/sqrt(d), 1/sqrt(d)), drawn from our generator
        bound = config.d_model ** -0.5
        with torch.no_grad():
            for p in self.lstm.parameters():
                p.uniform_(-bound, bound, generator=generator)
        self.readout = ReadOut(config, generator)

    def forward(self, tokens: torch.Tensor, label_pos: torch.Tensor | None = None,
                pad_mask: torch.Tensor | None = None, depth: int | None = None,
                features: torch.Tensor | None = None, label_sub: torch.Tensor | None = None
                ) -> torch.Tensor:
        x = self.input(tokens, features)  # [batch, seq, d_model]
        x, _ = self.lstm(x)  # [batch, seq, d_model]
        return self.readout(x, label_pos, label_sub)  # [batch, P, n_classes]

    def num_params(self, non_embedding: bool = False) -> int:
        return sum(p.numel() for p in self.parameters())
