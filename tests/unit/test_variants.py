"""Variants own their options (issue 12): every registry entry declares a Config, ModelConfig
resolves each sub-config by `name`, and the flat keys of older configs still validate."""

from __future__ import annotations

import pytest

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig
from reasonlab.model.identity_attention import IdentityAttention
from reasonlab.model.init import RateInit
from reasonlab.model.variants import REGISTRIES, VariantConfig, resolve
from reasonlab.runs import config_id
from reasonlab.train.config import TrainConfig

SIZES = dict(vocab_size=10, n_classes=5, max_seq_len=8, d_model=16, n_heads=2, d_mlp=32)

# The config.json of two runs written before issue 12 (main 1efbc85, smoke scale), as they are
# on disk: a full dump, null for every unset variant option. The LEGO run's id is its folder name.
OLD_LEGO = {
    "task": {"name": "lego", "group": "z2", "elements": None, "table": None, "n_clauses": 12,
             "n_train_vars": 6, "supervised": None, "shuffle": True, "n_vars": 26,
             "rename_ops": False, "rename_seed": 0, "root": "fixed"},
    "model": {"vocab_size": 35, "n_classes": 2, "max_seq_len": 62, "d_model": 32,
              "n_layers": 2, "n_heads": 2, "d_head": None, "d_mlp": 64, "causal": False,
              "norm": "pre", "positions": "rotary", "rotary_base": 10000.0, "tie_layers": False,
              "depth_range": None, "dropout": 0.0, "attention": "softmax", "act": "gelu",
              "init": "default", "init_std": 0.02, "init_gamma": None, "ln_eps": 1e-12,
              "mlp_bias": True, "ln_final_affine": True, "arch": "transformer",
              "attn_bias": True, "tie_head": False, "identity_terms": None,
              "identity_zero_diag": None, "mlp_equality": None},
    "optim": {"lr": 0.003, "weight_decay": 0.01, "weight_decay_on": "matrices",
              "betas": [0.9, 0.999], "eps": 1e-08, "warmup_steps": 5, "schedule": "cosine",
              "min_lr_ratio": 0.0, "grad_clip": 1.0},
    "seed": 0, "n_train": 512, "n_test": 256, "batch_size": 32, "steps": 20, "eval_every": 10,
    "ckpt_every": 10, "train_only": None, "eval_train": False, "eval_batch_size": 500,
    "device": "auto", "threads": 1, "dtype": "fp32"}
OLD_LEGO_ID = "021513460eda"
OLD_ANCHORS_MODEL = {
    "vocab_size": 85, "n_classes": 106, "max_seq_len": 9, "d_model": 16, "n_layers": 1,
    "n_heads": 1, "d_head": 8, "d_mlp": 32, "causal": True, "norm": "post_no_embed_ln",
    "positions": "learned", "rotary_base": 10000.0, "tie_layers": False, "depth_range": None,
    "dropout": 0.0, "attention": "softmax", "act": "relu", "init": "rate", "init_std": 0.02,
    "init_gamma": 0.3, "ln_eps": 1e-05, "mlp_bias": False, "ln_final_affine": True,
    "arch": "transformer", "attn_bias": False, "tie_head": False, "identity_terms": None,
    "identity_zero_diag": None, "mlp_equality": None}


def test_every_entry_declares_a_config():
    for field, registry in REGISTRIES.items():
        assert list(registry), field
        for name, entry in registry.items():
            assert issubclass(entry.Config, VariantConfig), (field, name)
            assert "name" in entry.Config.model_fields


@pytest.mark.parametrize("flat, nested", [
    (dict(attention="identity", identity_terms="b"),
     dict(attention={"name": "identity", "terms": "b"})),
    (dict(attention="identity", identity_zero_diag=True, identity_terms="a"),
     dict(attention={"name": "identity", "terms": "a", "zero_diag": True})),
    (dict(init="rate", init_gamma=0.3), dict(init={"name": "rate", "gamma": 0.3})),
    (dict(arch="mlp", mlp_equality=True), dict(arch={"name": "mlp_baseline", "equality": True})),
])
def test_old_flat_keys_validate_to_the_nested_form(flat, nested):
    old, new = ModelConfig.build(SIZES, **flat), ModelConfig.build(SIZES, **nested)
    assert old == new and old.model_dump() == new.model_dump()
    assert ModelConfig.build(old.model_dump(mode="json")) == old  # a dump reads back


def test_options_land_in_their_entrys_config():
    c = ModelConfig.build(SIZES, attention="identity", identity_terms="b",
                          init={"name": "rate", "gamma": 0.7})
    assert type(c.attention) is IdentityAttention.Config and c.attention.terms == "b"
    assert c.attention.zero_diag is False  # a real default, not None
    assert type(c.init) is RateInit.Config and c.init.gamma == 0.7
    dump = c.model_dump(mode="json", exclude_defaults=True)
    assert dump["attention"] == {"name": "identity", "terms": "b"}  # the name always dumped
    assert "init_gamma" not in c.model_dump() and "identity_terms" not in c.model_dump()


def test_old_run_configs_still_load_and_plain_runs_keep_their_ids():
    lego = TrainConfig.build(OLD_LEGO)
    assert config_id(lego) == OLD_LEGO_ID
    anchors = ModelConfig.build(OLD_ANCHORS_MODEL)
    assert anchors.init == RateInit.Config(name="rate", gamma=0.3)
    assert anchors.attention == VariantConfig(name="softmax")


def test_resolve_checks_the_instance_is_its_entrys_config():
    from reasonlab.model.variants import ATTENTION

    assert resolve(ATTENTION, "identity", "a") == IdentityAttention.Config(name="identity")
    with pytest.raises(ConfigError, match="is not the Config of attention variant 'identity'"):
        resolve(ATTENTION, VariantConfig(name="identity"), "model.attention")
    with pytest.raises(ConfigError, match="is not the Config"):
        ModelConfig(**SIZES, attention=VariantConfig(name="identity"))
    with pytest.raises(ConfigError, match="\"name\" key"):
        ModelConfig.build(SIZES, attention={"terms": "a"})


def test_the_worked_example_of_docs_model_md_runs():
    """docs/model.md §2's example variant registers, validates and does what it says."""
    import re
    from pathlib import Path

    import torch

    from reasonlab.model import Transformer, run_with_cache
    from reasonlab.model.variants import ATTENTION

    text = (Path(__file__).parents[2] / "docs" / "model.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    try:
        exec("import torch\n" + code, {})
        c = ModelConfig.build(SIZES, attention={"name": "previous_token", "heads": [1]})
        _, cache = run_with_cache(Transformer(c), torch.randint(0, 10, (2, 6)))
        with pytest.raises(ConfigError, match=r"attention.heads=\[2\]: the model has n_heads=2"):
            ModelConfig.build(SIZES, attention={"name": "previous_token", "heads": [2]})
    finally:
        ATTENTION._entries.pop("previous_token", None)
    pattern = cache["blocks.0.attn.hook_pattern"]  # [batch, n_heads, q_pos, k_pos]
    want = torch.diag(torch.ones(5), -1)
    want[0, 0] = 1
    torch.testing.assert_close(pattern[:, 1], want.expand(2, 6, 6))
    assert not torch.allclose(pattern[:, 0], want.expand(2, 6, 6))


@pytest.mark.parametrize("attention, arch, match", [
    ({"name": "hardcoded", "cls_id": 10, "sep_id": 1}, "transformer",
     r"attention.cls_id=10 is not a token id \(vocab_size=10\)"),
    ({"name": "hybrid", "cls_id": 0, "sep_id": 1, "learned_heads": 2}, "transformer",
     "attention.learned_heads=2 must be fewer than n_heads=2"),
    ("identity", "mlp_baseline", "arch='mlp_baseline' has no attention"),
])
def test_a_variant_checks_its_options_against_the_model(attention, arch, match):
    """The rules between a variant's options and the rest of the model are its Config's
    (`check`), run for every variant field: the hardcoded maps' token ids, Hybrid's head count,
    the MLP baseline's lack of attention."""
    with pytest.raises(ConfigError, match=match):
        ModelConfig.build(SIZES, attention=attention, arch=arch)


def test_model_config_names_no_variant_and_no_old_key():
    """ModelConfig's own rules name no variant entry and no old field name: the variants'
    rules are their Configs' (`check`), the old names config_compat's."""
    import inspect

    from reasonlab import config_compat
    from reasonlab.model import config

    source = inspect.getsource(config.ModelConfig._check)
    for name in ("hardcoded", "hybrid", "mlp_baseline", "identity", "cls_id", "learned_heads"):
        assert name not in source, name
    module = inspect.getsource(config)
    for old in (*config_compat.RENAMED_FIELDS, *config_compat.MOVED_OPTIONS, "kv_groups"):
        assert f'"{old}"' not in module, old
