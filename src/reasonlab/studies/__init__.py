"""Studies register themselves in STUDIES on import."""

from reasonlab.studies import lego_extrapolation  # noqa: F401
from reasonlab.studies import (  # noqa: F401
    anchors_init_phase, anchors_lr_weight_decay, anchors_mechanism)
from reasonlab.studies.base import STUDIES, run_study

__all__ = ["STUDIES", "run_study"]
