"""The LSTM baseline of the FPT paper (Lu et al. 2021, docs/papers.md §4: 3 layers, width 768).

Same input layer and read-out as the FPT model (model/fpt.py), with the authors' stacked
unidirectional LayerNorm LSTM (`lnlstm`) in place of the transformer, so the comparison changes
only the sequence model. The hidden state at label_pos has read every token up to it (ListOps:
the last real token, so right padding is never read).
"""

from __future__ import annotations

import torch
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.model.fpt import InputLayer, ReadOut
from reasonlab.model.variants import MODELS, VariantConfig


class Recurrent(nn.Module):
    """FPT's input layer, a recurrent sequence model (`sequence`, each subclass's own), FPT's
    read-out: tokens [batch, seq] (or features [batch, seq, d_input]) -> logits
    [batch, P, n_classes]."""

    Config = VariantConfig  # no options: d_model is the width, n_layers the depth
    reads_features = True
    input: InputLayer
    readout: ReadOut

    def sequence(self, x: torch.Tensor) -> torch.Tensor:
        """x [batch, seq, d_model] -> hidden states [batch, seq, d_model]."""
        raise NotImplementedError

    def forward(self, tokens: torch.Tensor, label_pos: torch.Tensor | None = None,
                pad_mask: torch.Tensor | None = None, depth: int | None = None,
                features: torch.Tensor | None = None, label_sub: torch.Tensor | None = None
                ) -> torch.Tensor:
        x = self.input(tokens, features)  # [batch, seq, d_model]
        return self.readout(self.sequence(x), label_pos, label_sub)  # [batch, P, n_classes]

    def num_params(self, non_embedding: bool = False) -> int:
        return sum(p.numel() for p in self.parameters())


class LNLSTMCell(nn.Module):
    """One layer of the authors' LayerNormLSTM (kzl/universal-computation, models/lstm.py, from
    exe1023/LSTM_LN after Ba et al. 2016): LayerNorm on the input-to-hidden and the hidden-to-
    hidden pre-activations and on the cell state, dropout on the hidden state (the output and
    the next step's state, as their in-place dropout)."""

    def __init__(self, d_in: int, d: int, dropout: float, generator: torch.Generator | None):
        super().__init__()
        self.d = d
        self.i2h, self.h2h = nn.Linear(d_in, 4 * d), nn.Linear(d, 4 * d)
        # nn.LayerNorm with the authors' eps; their LayerNorm divides by the unbiased std
        # (torch.var), a factor (n - 1) / n on the variance that we do not copy
        self.ln_i2h, self.ln_h2h = nn.LayerNorm(4 * d, eps=1e-6), nn.LayerNorm(4 * d, eps=1e-6)
        self.ln_cell = nn.LayerNorm(d, eps=1e-6)
        self.dropout = nn.Dropout(dropout)
        with torch.no_grad():  # the authors' init: U(-1/sqrt(n), 1/sqrt(n)) for EVERY tensor,
            for mod, n in ((self.i2h, d), (self.h2h, d), (self.ln_i2h, 4 * d),  # the norms'
                           (self.ln_h2h, 4 * d), (self.ln_cell, d)):  # gains too
                for p in mod.parameters():
                    p.uniform_(-n ** -0.5, n ** -0.5, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [batch, seq, d_in] -> hidden states [batch, seq, d], from a zero state (the
        authors draw the first state at random on every call, even in evaluation; zero keeps
        evaluation deterministic)."""
        B, T, _ = x.shape
        pre_x = self.ln_i2h(self.i2h(x))  # [batch, seq, 4d]: per row, so all steps at once
        h = x.new_zeros(B, self.d)
        c = x.new_zeros(B, self.d)
        out = []
        for t in range(T):
            pre = pre_x[:, t] + self.ln_h2h(self.h2h(h))  # [batch, 4d]
            i, f, o = pre[:, : 3 * self.d].sigmoid().chunk(3, dim=-1)  # their gate order
            g = pre[:, 3 * self.d:].tanh()
            c = self.ln_cell(f * c + i * g)
            h = self.dropout(o * c.tanh())
            out.append(h)
        return torch.stack(out, dim=1)  # [batch, seq, d]


@MODELS.register("lnlstm")
class LNLSTM(Recurrent):
    """The LSTM of the FPT authors' code (kzl/universal-computation, fpt.py: model_name="lstm"):
    n_layers (their 3) LayerNorm LSTM layers of width d_model (their 768), unidirectional, no
    residual, dropout `config.dropout` (their 0.1), between FPT's input layer and read-out.

    Its parameters fall in freeze groups as the authors' freeze rule sorts their names: the
    norms' gains and biases are `norms` (trained under `trainable="fpt"`, which gives the
    "frozen random LSTM" of "Importance of architecture: random weights"), the recurrent maps
    `recurrent` (frozen there), `input` and `output` as in FPT."""

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        self.input = InputLayer(config, generator)
        d = config.d_model
        self.cells = nn.ModuleList(LNLSTMCell(d, d, config.dropout, generator)
                                   for _ in range(config.n_layers))
        self.readout = ReadOut(config, generator)

    def sequence(self, x: torch.Tensor) -> torch.Tensor:
        for cell in self.cells:
            x = cell(x)  # [batch, seq, d_model]
        return x

    def param_group(self, name: str) -> str:
        """The freeze-policy group of parameter `name` (model/freeze.py GROUPS)."""
        if name.startswith("input."):
            return "input"
        if name.startswith("readout."):
            return "output"
        if ".ln_" in name:
            return "norms"
        if ".i2h." in name or ".h2h." in name:
            return "recurrent"
        raise ValueError(f"parameter {name} belongs to no freeze group")
