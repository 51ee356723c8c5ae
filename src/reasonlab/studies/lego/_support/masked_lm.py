"""LEGO §5's masked-LM pretraining (Zhang et al. 2022, §5, Figs. 8-9; docs/papers.md §1.1): the
recipe per scale and the three arms of `lego-hardcoded-attention`, identical but for the
attention sublayer (model/hardcoded_attention.py). Task: masked LM on the WordNet glosses
(tasks/mlm.py), validation loss on held-out glosses.
"""

from __future__ import annotations

from typing import Any

from reasonlab.config import deep_merge
from reasonlab.sizes import meta_model
from reasonlab.studies.kit.base import Scale, grid
from reasonlab.tasks.words import CLS_ID, SEP_ID

BERT, HARDCODE, HYBRID = "BERT", "Hardcode", "Hybrid"
KERNEL = 21
"""§5: "We use convolutional kernel size 21"."""
# cpu: sized for 3 arms x 2 seeds on 2 cores in 15 minutes (3 seeds now take about 2, measured
# with today's code): windows of 32 tokens, 3 layers of width 64.
# Post-LN as BERT; a word vocabulary of 2000 (the glosses' most frequent words; 22% of the
# words read [UNK] and are never predicted).
RECIPES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(task=dict(name="mlm", words=200, seq_len=16),
                  model=dict(d_model=16, n_layers=2, n_heads=4, d_mlp=32),
                  optim=dict(lr=3e-3, warmup_steps=2), n_train=256, n_test=64,
                  batch_size=16, steps=12, eval_every=3, ckpt_every=6, threads=1),
    "cpu": dict(task=dict(name="mlm", words=2000, seq_len=32),
                model=dict(d_model=64, n_layers=3, n_heads=4, d_mlp=256),
                optim=dict(lr=2e-3, warmup_steps=30, weight_decay=0.01),
                n_train=32_000, n_test=500, batch_size=64, steps=500, eval_every=50,
                ckpt_every=100, threads=1),
    # BERT-base on the same corpus (Devlin et al. 2019, App. A.2: batch 256, Adam lr 1e-4,
    # 10k warm-up steps, weight decay 0.01, dropout 0.1; sequences of 128). The glosses hold
    # 1.7M words, ~2000x less than BERT's corpus: the model and optimiser are the paper's, the
    # data are not. 500k static-masked windows, 100k steps (~51 passes).
    "paper": dict(task=dict(name="mlm", words=30_000, seq_len=128),
                  model=dict(d_model=768, n_layers=12, n_heads=12, d_mlp=3072, dropout=0.1),
                  optim=dict(lr=1e-4, warmup_steps=10_000, weight_decay=0.01),
                  n_train=500_000, n_test=10_000, batch_size=256, steps=100_000,
                  eval_every=2_000, ckpt_every=10_000),
}
PAPER_TOKENS = RECIPES["paper"]["batch_size"] * RECIPES["paper"]["task"]["seq_len"]
"""Tokens per optimiser step of BERT-base's recipe (FLOPs per token in the paper's setting)."""


def arms(scale: Scale) -> dict[str, dict[str, Any]]:
    """BERT (softmax heads), Hardcode (the association / [CLS] / [SEP] maps + a depthwise
    temporal convolution, kernel 21, no learned query or key), Hybrid (the same + half of BERT's
    heads as softmax heads; the number is our reading)."""
    heads = RECIPES[scale]["model"]["n_heads"]
    fixed = {"cls_id": CLS_ID, "sep_id": SEP_ID, "kernel": KERNEL}
    return {BERT: {"model": {"attention": "softmax"}},
            HARDCODE: {"model": {"attention": {"name": "hardcoded", **fixed}}},
            HYBRID: {"model": {"attention": {"name": "hybrid", **fixed,
                                             "learned_heads": heads // 2}}}}


INFERENCE_SHAPE = (64, 512)
"""§5, Fig. 8 (right): "Flops are measured on a batch of 64 sequences of 512 tokens"."""


def inference_cost() -> dict[str, tuple[float, int]]:
    """Arm -> (forward FLOPs of one batch of INFERENCE_SHAPE, parameters) for the three arms at
    BERT-base's shape (the `paper` recipe's model with 512 positions), the quantities of §5,
    Fig. 8 (right). Counted on the meta device (sizes.py): `Transformer.flops_per_token` of a
    forward pass, which counts the masked-LM read-out at every position (the same in every arm),
    and every parameter, embeddings and the untied read-out included (BERT ties its read-out
    to the embeddings). Our vocabulary is the glosses' 30,000 words + 5 special tokens, not
    BERT's 30,522 word pieces."""
    batch, seq = INFERENCE_SHAPE
    recipe = deep_merge(RECIPES["paper"], {"task": {"seq_len": seq}})
    cost = {}
    for spec in grid(recipe, arms("paper")):
        model = meta_model(spec.config)
        flops = model.flops_per_token(seq, training=False) * seq * batch
        cost[spec.arm] = (flops, model.num_params())
    return cost
