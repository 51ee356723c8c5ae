"""Pretrained weights from a local Hugging Face folder, offline (docs/design.md §9 Offline
assets): the papers' own backbones (GPT-2 for FPT, Lu et al. 2021; bert-base-uncased for LEGO
§4.2) wherever a researcher's machine keeps them.

A source is written `hf:FOLDER` (a folder holding config.json and *.safetensors, as
`save_pretrained(..., safe_serialization=True)` writes it) or `hf:NAME` (a Hub name, found in
the local Hugging Face cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub;
`models--ORG--NAME/snapshots/<commit>`, the one `refs/main` names). Nothing is ever downloaded
(HF_HUB_OFFLINE=1 semantics): an absent source is one `error:` line naming where it looked and
how to put the weights there. Pickled weights (`pytorch_model.bin`) are refused: loading a
pickle runs code.

Each family's config reading and tensor mapping is a HF_FAMILIES entry (model/hf_families.py),
chosen by config.json's `model_type`. Registry entries for the papers' backbones
(model/pretrained.py: "gpt2", "bert-base-uncased", ...) are `HubCheckpoint`s: their
architecture is written down, so run configs build on machines without the weights, and is
checked against config.json when the weights load.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from reasonlab.errors import AssetError, ConfigError

PREFIX = "hf:"
GET_WEIGHTS = ("on a machine with internet: `hf download {name}` (huggingface_hub's CLI; "
               "`huggingface-cli download` in versions before 0.34), or "
               "`AutoModel.from_pretrained('{name}').save_pretrained(DIR, "
               "safe_serialization=True)`, then copy the cache folder or DIR here")


def hub_cache() -> Path:
    """The Hugging Face Hub cache folder, as huggingface_hub resolves it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path(
        os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface"
    return Path(home).expanduser() / "hub"


def cached_snapshot(repo_id: str, kind: str = "models") -> Path | None:
    """The snapshot folder of `repo_id` in the Hub cache (the commit `refs/main` names, else the
    newest snapshot), or None."""
    repo = hub_cache() / f"{kind}--{repo_id.replace('/', '--')}"
    ref = repo / "refs" / "main"
    if ref.is_file():
        snap = repo / "snapshots" / ref.read_text().strip()
        if snap.is_dir():
            return snap
    snaps = sorted((repo / "snapshots").glob("*"), key=lambda p: p.stat().st_mtime)
    return snaps[-1] if snaps else None


def is_folder_spec(spec: str) -> bool:
    """`hf:...` names a folder (a path) rather than a Hub name."""
    s = spec.removeprefix(PREFIX)
    return s.startswith(("/", "~", ".")) or Path(s).expanduser().is_dir()


def locate(spec: str, aliases: tuple[str, ...] = ()) -> Path:
    """The folder of a source: `hf:FOLDER` itself, or a Hub name (or one of its `aliases`, the
    names the Hub gave the same repository) in the cache. AssetError saying where it looked."""
    s = spec.removeprefix(PREFIX)
    if is_folder_spec(spec):
        folder = Path(s).expanduser()
        if not folder.is_dir():
            raise AssetError(f"pretrained {spec!r}: no folder {folder}; give a folder holding "
                             "config.json and *.safetensors")
        return folder
    for name in (s, *aliases):
        snap = cached_snapshot(name)
        if snap is not None:
            return snap
    looked = ", ".join(str(hub_cache() / f"models--{n.replace('/', '--')}") for n in (s, *aliases))
    raise AssetError(f"pretrained {s!r} is not in the local Hugging Face cache (looked in "
                     f"{looked}); nothing is downloaded at run time: "
                     + GET_WEIGHTS.format(name=aliases[0] if aliases else s)
                     + ", or give the folder as hf:/path/to/folder")


def read_config(folder: Path, name: str) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        raise AssetError(f"pretrained {name!r}: {path} is missing; a Hugging Face folder holds "
                         "config.json beside its *.safetensors")
    return json.loads(path.read_text())


def weight_files(folder: Path, name: str) -> list[Path]:
    """The folder's safetensors files (one, or the shards an index lists); pickles refused."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        return [folder / s for s in shards]
    files = sorted(folder.glob("*.safetensors"))
    if files:
        return files
    pickles = sorted(p.name for p in folder.glob("*.bin")) + sorted(
        p.name for p in folder.glob("*.pt*"))
    if pickles:
        raise ConfigError(f"pretrained {name!r}: {folder} holds only pickled weights "
                          f"({', '.join(pickles)}), which reasonlab never loads (unpickling runs "
                          "code); convert them once: python -c \"from transformers import "
                          f"AutoModel; AutoModel.from_pretrained('{folder}').save_pretrained("
                          f"'{folder}', safe_serialization=True)\"")
    raise AssetError(f"pretrained {name!r}: no *.safetensors in {folder}")


def read_tensors(folder: Path, name: str) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    out: dict[str, torch.Tensor] = {}
    for f in weight_files(folder, name):
        out.update(load_file(str(f)))
    return out


def read_vocab(folder: Path, name: str) -> list[str]:
    """Token strings in id order, from the tokenizer files (vocab.txt: WordPiece; vocab.json:
    byte-level BPE, GPT-2 and RoBERTa; tokenizer.json: any fast tokenizer, Llama's)."""
    if (folder / "vocab.txt").is_file():
        return (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    table: dict[str, int] | None = None
    if (folder / "vocab.json").is_file():
        table = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    elif (folder / "tokenizer.json").is_file():
        tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        vocab = tok.get("model", {}).get("vocab")
        table = dict(vocab) if isinstance(vocab, dict) else (
            {t: i for i, (t, _) in enumerate(vocab)} if isinstance(vocab, list) else None)
        for added in tok.get("added_tokens", []):
            table = {**(table or {}), added["content"]: added["id"]}
    if table is None:
        raise AssetError(f"pretrained {name!r}: the task maps its tokens onto the checkpoint's "
                         f"vocabulary, but {folder} has no tokenizer files (vocab.txt, "
                         "vocab.json or tokenizer.json); copy them beside the weights")
    words = [""] * (max(table.values()) + 1)
    for t, i in table.items():
        words[i] = t
    return words


@dataclass(frozen=True)
class HFCheckpoint:
    """A Hugging Face folder as a pretrained source (the PRETRAINED entries' interface:
    architecture, max_positions, check, vocab, convert, available, install_hint)."""

    name: str
    """The source as written: `hf:FOLDER` or `hf:HUB_NAME`, or a registry name."""
    hub: str = ""
    """For a registry entry: the Hub name to find in the cache (`name` otherwise)."""
    aliases: tuple[str, ...] = ()
    """Other Hub names of the same repository (the Hub moved gpt2 to openai-community/gpt2)."""
    fixed: dict[str, Any] = field(default_factory=dict)
    """For a registry entry: the ModelConfig fields written down (configs build without the
    weights); checked against config.json when loading. Empty: read from config.json."""
    fixed_positions: int = 0
    """For a registry entry: its max_positions, written down likewise."""

    @property
    def spec(self) -> str:
        return self.hub or self.name

    def path(self) -> Path:
        return locate(self.spec if self.hub else self.name, self.aliases)

    def available(self) -> bool:
        try:
            self.path()
        except (AssetError, ConfigError):
            return False
        return True

    @property
    def install_hint(self) -> str:
        if is_folder_spec(self.name) and not self.hub:
            return f"give a folder holding config.json and *.safetensors ({self.name})"
        return (f"put {self.spec!r} in the Hugging Face cache ({hub_cache()}): "
                + GET_WEIGHTS.format(name=self.spec))

    def where(self) -> str:
        """One line for a pre-flight listing: found where, or where it was looked for."""
        try:
            return f"found: {self.path()}"
        except (AssetError, ConfigError) as e:
            return f"NOT FOUND ({e})"

    @cached_property
    def config(self) -> dict[str, Any]:
        return read_config(self.path(), self.name)

    @property
    def family(self) -> Any:
        from reasonlab.model.hf_families import family_of

        return family_of(self.config, self.name)

    @property
    def architecture(self) -> dict[str, Any]:
        if self.fixed:
            return dict(self.fixed)
        return self.family.fields(self.config)

    @property
    def max_positions(self) -> int:
        if self.fixed_positions:
            return self.fixed_positions
        return self.family.max_positions(self.config)

    @property
    def reads_tokens(self) -> bool:
        """Whether the checkpoint has a token table to map a task's tokens onto (ViT has none)."""
        return self.family.reads_tokens

    def check(self) -> None:
        """The folder's config agrees with the written-down architecture (registry entries)."""
        if not self.fixed:
            return
        got = self.family.fields(self.config)
        bad = {k: (v, got.get(k)) for k, v in self.fixed.items() if got.get(k) != v}
        if bad:
            raise ConfigError(f"pretrained {self.spec!r}: config.json in {self.path()} "
                              f"disagrees with the registry entry (field: (entry, file)) {bad}")

    def vocab(self) -> list[str]:
        return read_vocab(self.path(), self.name)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The checkpoint's tensors under the family's own names (its model prefix removed)."""
        return self.family.strip(read_tensors(self.path(), self.name))

    def convert(self, n_layers: int, max_seq_len: int, token_ids: list[int] | None
                ) -> dict[str, torch.Tensor]:
        """Our state dict (all but `head.*`) for the first n_layers layers."""
        if max_seq_len > self.max_positions:
            raise ConfigError(f"max_seq_len={max_seq_len} exceeds {self.spec!r}'s "
                              f"{self.max_positions} positions; use shorter sequences")
        sd = self.family.to_ours(self.state_dict(), self.config, n_layers, max_seq_len)
        if "W_E" in sd and token_ids is not None:
            sd["W_E"] = sd["W_E"][torch.as_tensor(token_ids, device=sd["W_E"].device)]
        return {k: v.detach().clone().float().contiguous() for k, v in sd.items()}


def folder_checkpoint(spec: str) -> HFCheckpoint:
    """The source `hf:...` as a checkpoint (model/pretrained.py `checkpoint`)."""
    if not spec.startswith(PREFIX) or spec == PREFIX:
        raise ConfigError(f"pretrained source {spec!r}: write hf:FOLDER or hf:HUB_NAME")
    return HFCheckpoint(spec)
