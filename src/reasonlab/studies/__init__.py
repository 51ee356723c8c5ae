"""Studies register themselves in STUDIES on import."""

from reasonlab.studies import lego_extrapolation  # noqa: F401
from reasonlab.studies import (  # noqa: F401
    anchors_embedding_norm,
    anchors_init_phase,
    anchors_lr_weight_decay,
    anchors_mechanism,
    artificial_pretraining,
    artificial_pretraining_lego,
    lego_conv_qkv_programs,
    lego_hardcoded_attention,
    fpt_convergence,
    fpt_freeze_ablation,
    fpt_universal,
    lego_mimicking,
    lego_mixed_lengths,
    lego_pretraining,
    lego_staircase,
    lego_probes,
    lego_shortcut,
    lego_stochastic_depth,
    symbols_copy,
    symbols_data_efficiency,
    symbols_kernel,
    symbols_lm,
    symbols_mlp,
    symbols_readout,
)
from reasonlab.studies.base import STUDIES, run_study

__all__ = ["STUDIES", "run_study"]
