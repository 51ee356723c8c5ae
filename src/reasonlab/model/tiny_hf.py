"""Tiny random checkpoints in the Hugging Face folder layout, one per family that FPT's other
backbones compare (Lu et al. 2021, slides "Model - differences with GPT" and the ViT row of
"Importance of language pre-training"; studies/fpt/backbones.py, vit.py), so that their smoke
scale runs the whole path -- folder, config.json, safetensors, converter -- offline and in
seconds.

Each is a PRETRAINED entry (`tiny-gpt2`, `tiny-bert`, `tiny-longformer`, `tiny-vit`;
model/pretrained.py), so a run names it the same on every machine and its id does not depend
on where the files lie. The folder is written on first use under $REASONLAB_CACHE (else
~/.cache/reasonlab)/tiny-hf/: by the lab's own exporter (model/export.py: GPT-2, BERT), renamed
where a family only renames BERT's tensors (Longformer: RoBERTa's names, positions from row
pad + 1 = 2), and for ViT in transformers' layout. The weights are a seeded random init, so
every machine writes the same files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from reasonlab.model.gguf import cache_dir
from reasonlab.model.hf import HFCheckpoint

SHAPE = dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32)
VOCAB, POSITIONS = 32, 64
VERSION = 1
"""Part of the folder's name: bump it when a writer changes, so no stale folder is read."""

Tensors = dict[str, torch.Tensor]


def _model(**fields: Any) -> Any:
    from reasonlab.model.config import ModelConfig
    from reasonlab.model.transformer import Transformer

    cfg = ModelConfig.build({**SHAPE, "vocab_size": VOCAB, "n_classes": 2,
                             "max_seq_len": POSITIONS, **fields})
    return Transformer(cfg, generator=torch.Generator().manual_seed(0))


def _gpt2() -> tuple[dict[str, Any], Tensors]:
    from reasonlab.model.export import hf_state

    return hf_state(_model(causal=True, norm_position="pre", act="gelu_tanh", ln_eps=1e-5))


def _bert() -> tuple[dict[str, Any], Tensors]:
    from reasonlab.model.export import hf_state

    return hf_state(_model())


def _longformer() -> tuple[dict[str, Any], Tensors]:
    config, sd = _bert()
    out = {k.replace("bert.", "longformer.", 1): v for k, v in sd.items()}
    pos = "longformer.embeddings.position_embeddings.weight"
    out[pos] = torch.cat([out[pos].new_zeros(2, SHAPE["d_model"]), out[pos]])  # from pad + 1
    config = {**config, "model_type": "longformer", "pad_token_id": 1,
              "max_position_embeddings": POSITIONS + 2, "attention_window": 2 * POSITIONS,
              "architectures": ["LongformerForTokenClassification"]}
    return config, out


def _vit() -> tuple[dict[str, Any], Tensors]:
    model = _model(norm_position="pre")
    d = SHAPE["d_model"]
    sd: Tensors = {"layernorm.weight": model.ln_final.weight,
                   "layernorm.bias": model.ln_final.bias}
    for l, layer in enumerate(model.layers):
        h = f"layers.{l}."
        for m, w, b in zip("qkv", layer.attn.qkv.weight.split(d), layer.attn.qkv.bias.split(d),
                           strict=True):
            sd[h + f"attention.{m}_proj.weight"], sd[h + f"attention.{m}_proj.bias"] = w, b
        for ours, theirs in (("attn.out", "attention.o_proj"), ("mlp.fc_in", "mlp.fc1"),
                             ("mlp.fc_out", "mlp.fc2"), ("ln1", "layernorm_before"),
                             ("ln2", "layernorm_after")):
            mod = layer.get_submodule(ours)
            sd[h + theirs + ".weight"], sd[h + theirs + ".bias"] = mod.weight, mod.bias
    config = dict(model_type="vit", hidden_size=d, num_hidden_layers=SHAPE["n_layers"],
                  num_attention_heads=SHAPE["n_heads"], intermediate_size=SHAPE["d_mlp"],
                  hidden_act="gelu", layer_norm_eps=1e-12, qkv_bias=True, image_size=8,
                  patch_size=4, architectures=["ViTModel"])
    return config, sd


WRITERS = {"gpt2": _gpt2, "bert": _bert, "longformer": _longformer, "vit": _vit}
"""Family -> its tiny checkpoint (config.json's fields, tensors under transformers' names)."""


def tiny_folder(family: str) -> Path:
    """The folder of the family's tiny checkpoint, written on first use (every file through a
    temporary name: a folder holding model.safetensors is complete)."""
    from safetensors.torch import save_file

    folder = cache_dir() / "tiny-hf" / f"{family}-v{VERSION}"
    if (folder / "model.safetensors").is_file():
        return folder
    config, tensors = WRITERS[family]()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = f".tmp{os.getpid()}"
    (folder / f"config.json{tmp}").write_text(json.dumps(config, indent=2) + "\n")
    os.replace(folder / f"config.json{tmp}", folder / "config.json")
    save_file({k: v.detach().float().contiguous() for k, v in tensors.items()},
              str(folder / f"model.safetensors{tmp}"))
    os.replace(folder / f"model.safetensors{tmp}", folder / "model.safetensors")
    return folder


@dataclass(frozen=True)
class TinyCheckpoint(HFCheckpoint):
    """A tiny random checkpoint as a pretrained source: always available (written here)."""

    family_name: str = ""

    def path(self) -> Path:
        return tiny_folder(self.family_name)

    @property
    def install_hint(self) -> str:
        return "written on first use; nothing to install"
