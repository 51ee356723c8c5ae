"""FPT training step: reasonlab's FPT model vs the same computation around `transformers`'
LlamaModel / BertModel, and the FPT step vs a full-training step (docs/papers.md §4).

Two backbones, random weights (speed does not depend on their values):
  smollm2  the FPT studies' cpu backbone: SmolLM2's architecture, its first CPU_LAYERS layers
           (d_model 576, 9 query / 3 key-value heads, SwiGLU 1536, RMSNorm, rotary), beside
           LlamaModel;
  minilm   all-MiniLM-L6-v2's architecture (6 post-LN layers, d_model 384, 12 heads, GELU
           1536, learned positions), beside BertModel.
One step: a linear patch input layer (16 -> d_model) plus trained positions, the frozen layers
with trained norms, the read-out at the last token (10 classes), cross-entropy, backward, Adam
with clipping 1 -- batch 8 x 49 patches (a Fashion-MNIST image in 4x4 patches). HF gets the
same parameters (copied, then checked equal on a forward pass) with the same groups frozen,
through `inputs_embeds`. Timed blocks alternate between the models in one process (the machine
is shared); medians and ratios are printed.

Frozen weights must not cost weight-gradient time: the FPT / full-training step ratio shows
what freezing saves (full training = every parameter trained, same model).

Run: `python benchmarks/bench_fpt.py [--threads 2] [--quick | --smoke]
[--backbone smollm2 minilm]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from reasonlab.model import ModelConfig
from reasonlab.model.fpt import FPT
from reasonlab.model.freeze import apply_groups, resolve_groups
from reasonlab.model.gguf import SMOLLM2_ARCH
from reasonlab.model.pretrained import MINILM
from reasonlab.studies.fpt._support.backbone import CPU_LAYERS
from reasonlab.train.config import OptimConfig
from reasonlab.train.optim import make_optimizer

B, T, D_IN, C = 8, 49, 16, 10
ADAM = OptimConfig(lr=1e-3, weight_decay=0.0, schedule="constant")
ARCH = {"smollm2": {**SMOLLM2_ARCH, "n_layers": CPU_LAYERS}, "minilm": MINILM.architecture}
Step = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def ours(backbone: str, train: str) -> tuple[FPT, Step]:
    cfg = ModelConfig.build({**ARCH[backbone], "arch": "fpt", "vocab_size": 2, "n_classes": C,
                             "max_seq_len": T, "d_input": D_IN})
    model = FPT(cfg, torch.Generator().manual_seed(0)).train()
    apply_groups(model, resolve_groups(train))
    opt = make_optimizer(model, ADAM)
    tokens = torch.ones(B, T, dtype=torch.long)
    pos = torch.full((B, 1), T - 1)

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = model(tokens, pos, features=x)[:, 0]  # [B, C]
        return _update(model, opt, F.cross_entropy(logits, y))
    return model, step


def llama(src: FPT, attn: str) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    """LlamaModel with `src`'s backbone weights (our names -> HF's)."""
    from transformers import LlamaConfig, LlamaModel

    cfg = src.config
    model = LlamaModel(LlamaConfig(
        vocab_size=2, hidden_size=cfg.d_model, intermediate_size=cfg.d_mlp,
        num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_kv_heads_, rms_norm_eps=cfg.ln_eps,
        rope_theta=cfg.rotary_base, max_position_embeddings=T, attention_bias=False,
        mlp_bias=False, hidden_act="silu", bos_token_id=None, eos_token_id=None,
        pad_token_id=None, attn_implementation=attn))
    d_q, d_kv = cfg.d_model, cfg.n_kv_heads_ * cfg.d_head_
    sd = {"norm.weight": src.backbone.ln_final.weight, "embed_tokens.weight": src.backbone.W_E}
    for l, layer in enumerate(src.backbone.layers):
        q, k, v = layer.attn.qkv.weight.split([d_q, d_kv, d_kv])
        p = f"layers.{l}."
        sd |= {p + "self_attn.q_proj.weight": q, p + "self_attn.k_proj.weight": k,
               p + "self_attn.v_proj.weight": v,
               p + "self_attn.o_proj.weight": layer.attn.out.weight,
               p + "input_layernorm.weight": layer.ln1.weight,
               p + "post_attention_layernorm.weight": layer.ln2.weight,
               p + "mlp.up_proj.weight": layer.mlp.fc_in.weight,
               p + "mlp.gate_proj.weight": layer.mlp.fc_gate.weight,
               p + "mlp.down_proj.weight": layer.mlp.fc_out.weight}
    return model, sd


def bert(src: FPT, attn: str) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    """BertModel with `src`'s backbone weights (model/pretrained.py convert_bert, inverted):
    token type 0 is zero, so `inputs_embeds` + positions is exactly our input + W_pos."""
    from transformers import BertConfig, BertModel

    cfg, bb = src.config, src.backbone
    model = BertModel(BertConfig(
        vocab_size=2, hidden_size=cfg.d_model, num_hidden_layers=cfg.n_layers,
        num_attention_heads=cfg.n_heads, intermediate_size=cfg.d_mlp, hidden_act="gelu",
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=T,
        layer_norm_eps=cfg.ln_eps, attn_implementation=attn), add_pooling_layer=False)
    e = "embeddings."
    sd = {e + "word_embeddings.weight": bb.W_E, e + "position_embeddings.weight": bb.W_pos,
          e + "token_type_embeddings.weight": torch.zeros(2, cfg.d_model),
          e + "LayerNorm.weight": bb.ln_embed.weight, e + "LayerNorm.bias": bb.ln_embed.bias}
    for l, layer in enumerate(bb.layers):
        p = f"encoder.layer.{l}."
        for suffix in ("weight", "bias"):
            for m, w in zip(("query", "key", "value"),
                            getattr(layer.attn.qkv, suffix).chunk(3)):
                sd[f"{p}attention.self.{m}.{suffix}"] = w
            sd |= {f"{p}attention.output.dense.{suffix}": getattr(layer.attn.out, suffix),
                   f"{p}attention.output.LayerNorm.{suffix}": getattr(layer.ln1, suffix),
                   f"{p}intermediate.dense.{suffix}": getattr(layer.mlp.fc_in, suffix),
                   f"{p}output.dense.{suffix}": getattr(layer.mlp.fc_out, suffix),
                   f"{p}output.LayerNorm.{suffix}": getattr(layer.ln2, suffix)}
    return model, sd


HF = {"smollm2": llama, "minilm": bert}
TRAINED = {"smollm2": ("norm",), "minilm": ("LayerNorm", "position_embeddings")}
"""Name parts of the HF backbone's parameters that FPT trains (norms; BERT's position table)."""


def hf(backbone: str, src: FPT, attn: str) -> tuple[torch.nn.Module, Step]:
    """The HF backbone holding `src`'s weights, input layer, positions and read-out."""
    model, sd = HF[backbone](src, attn)
    model.load_state_dict({k: v.detach().clone() for k, v in sd.items()}, strict=True)
    wrapper = torch.nn.ModuleDict({"backbone": model, "proj": _copy(src.input.proj),
                                   "head": _copy(src.readout.head)})
    own_positions = src.W_pos is not None  # rotary backbone: FPT's table, added at the input
    if own_positions:
        wrapper.W_pos = torch.nn.Parameter(src.W_pos.detach().clone())
    for name, p in wrapper.named_parameters():  # FPT: norms, input, positions, read-out train
        p.requires_grad_(not name.startswith("backbone.")
                         or any(part in name for part in TRAINED[backbone]))
    wrapper.train()
    opt = make_optimizer(wrapper, ADAM)

    def forward(x: torch.Tensor) -> torch.Tensor:
        h = wrapper["proj"](x) + (wrapper.W_pos[:T] if own_positions else 0)
        return wrapper["head"](model(inputs_embeds=h).last_hidden_state[:, -1])  # [B, C]

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _update(wrapper, opt, F.cross_entropy(forward(x), y))
    wrapper.forward_logits = forward  # type: ignore[attr-defined]
    return wrapper, step


def _copy(layer: torch.nn.Linear) -> torch.nn.Linear:
    out = torch.nn.Linear(layer.in_features, layer.out_features)
    out.load_state_dict(layer.state_dict())
    return out


def _update(model: torch.nn.Module, opt: torch.optim.Optimizer, loss: torch.Tensor
            ) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
    opt.step()
    return loss.detach()


def bench(backbone: str = "smollm2", threads: int = 2, quick: bool = False,
          smoke: bool = False) -> dict[str, float]:
    torch.set_num_threads(threads)
    block, rounds, warm = (1, 1, 0) if smoke else (2, 3, 1) if quick else (4, 7, 2)
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(B, T, D_IN, generator=g) for _ in range(block)]
    ys = [torch.randint(0, C, (B,), generator=g) for _ in range(block)]
    fpt, fpt_step = ours(backbone, "fpt")
    steps = {"ours FPT": fpt_step}
    for attn in ("eager", "sdpa"):
        model, step = hf(backbone, fpt, attn)
        with torch.no_grad():  # the same computation: same logits before any step
            fpt.eval(), model.eval()
            tokens, pos = torch.ones(B, T, dtype=torch.long), torch.full((B, 1), T - 1)
            diff = (fpt(tokens, pos, features=xs[0])[:, 0] - model.forward_logits(xs[0]))
            assert diff.abs().max() < 1e-4, f"HF {attn} disagrees: {diff.abs().max():.2e}"
            fpt.train(), model.train()
        steps[f"HF {attn} FPT"] = step
    steps["ours full"] = ours(backbone, "full")[1]
    for step in steps.values():
        for i in range(warm):
            step(xs[i % block], ys[i % block])
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            t0 = time.perf_counter()
            for i in range(block):
                step(xs[i], ys[i])
            times[name].append((time.perf_counter() - t0) / block)
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = min(med["HF eager FPT"], med["HF sdpa FPT"])
    return {**med, "speedup_vs_hf": ref / med["ours FPT"],
            "full_over_fpt": med["ours full"] / med["ours FPT"]}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backbone", nargs="+", choices=list(ARCH), default=list(ARCH))
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    for name in args.backbone:
        r = bench(name, args.threads, args.quick, args.smoke)
        arch = ARCH[name]
        print(f"FPT step, {name} architecture ({arch['n_layers']} layers, d_model "
              f"{arch['d_model']}), batch {B} x {T} patches, {args.threads} threads "
              "(median s/step):")
        for k in ("ours FPT", "HF eager FPT", "HF sdpa FPT", "ours full"):
            print(f"  {k:14s} {r[k] * 1000:8.1f} ms")
        print(f"ours vs the faster HF: {r['speedup_vs_hf']:.2f}x (target >= 1.0x)")
        print(f"full-training step / FPT step (ours): {r['full_over_fpt']:.2f}x "
              "(> 1: frozen weights cost no weight gradients)")
