"""The tiny random checkpoints the smoke scale of FPT's other backbones runs on
(model/tiny_hf.py): each folder is one `transformers` loads as its family, with the hidden
states our converter reads from it; and a run naming one has the same id wherever the cache
lies."""

from __future__ import annotations

import pytest
import torch

from reasonlab.model import run_with_cache
from reasonlab.model.pretrained import checkpoint, hf_transformer

transformers = pytest.importorskip("transformers", reason="transformers not installed")

UNUSED = {"gpt2": (), "bert": ("pooler.",),
          "longformer": ("pooler.", "_global."),  # FPT's inputs have no global tokens
          "vit": ("embeddings.", "pooler.")}  # FPT brings its own input layer
"""Tensors of transformers' model that a tiny folder leaves out, as our converter never reads
them (transformers initialises them fresh)."""


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("REASONLAB_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("family", list(UNUSED))
def test_transformers_loads_each_tiny_folder_as_its_family(family):
    folder = checkpoint(f"tiny-{family}").path()
    hf, info = transformers.AutoModel.from_pretrained(folder, output_loading_info=True,
                                                      attn_implementation="eager")
    assert hf.config.model_type == family
    assert all(k.startswith(UNUSED[family]) or any(u in k for u in UNUSED[family])
               for k in info["missing_keys"]), info["missing_keys"]
    assert all(k.startswith("classifier.") for k in info["unexpected_keys"])
    hf.eval()
    if family == "vit":  # no token table: compare the encoder stack on random patches
        ckpt = checkpoint("tiny-vit")
        from reasonlab.model.config import ModelConfig
        from reasonlab.model.pretrained import load_pretrained
        from reasonlab.model.transformer import Transformer

        ours = Transformer(ModelConfig.build({**ckpt.architecture, "vocab_size": 1,
                                              "n_classes": 2, "max_seq_len": 5}))
        load_pretrained(ours, "tiny-vit", None)
        h = torch.randn(2, 5, hf.config.hidden_size, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            ref = h
            for layer in hf.encoder.layer if hasattr(hf, "encoder") else hf.layers:
                ref = layer(ref)
                ref = ref[0] if isinstance(ref, tuple) else ref
            ref = hf.layernorm(ref)
            got = ours.eval().run_layers(h, None, ours.config.n_layers)
        assert (got - ref).abs().max().item() < 2e-5
        return
    ours = hf_transformer(f"tiny-{family}", max_seq_len=6)
    x = torch.randint(3, 32, (2, 6), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True).hidden_states
        _, cache = run_with_cache(ours, x)
    for l in range(ours.config.n_layers):
        assert (cache[f"blocks.{l}.hook_resid_pre"] - ref[l][:, :6]).abs().max() < 2e-5


def test_a_run_on_a_tiny_checkpoint_has_one_id_wherever_the_cache_lies(tmp_path, monkeypatch):
    from reasonlab.runs import config_id
    from reasonlab.studies import STUDIES

    ids = []
    for where in ("a", "b"):
        monkeypatch.setenv("REASONLAB_CACHE", str(tmp_path / where))
        study = STUDIES["fpt-backbones"]()
        study.configure({})
        specs = study.runs("smoke", 1)
        assert {s.config.init_from for s in specs} == {"tiny-gpt2", "tiny-bert",
                                                       "tiny-longformer"}
        ids.append(sorted(config_id(s.config) for s in specs))
        checkpoint("tiny-bert").state_dict()  # what a run reads: written here on first use
        assert (tmp_path / where / "tiny-hf" / "bert-v1" / "model.safetensors").is_file()
    assert ids[0] == ids[1]
