"""Studies register themselves in STUDIES on import."""

from reasonlab.studies import lego_extrapolation  # noqa: F401
from reasonlab.studies import symbols_copy, symbols_data_efficiency, symbols_mlp  # noqa: F401
from reasonlab.studies.base import STUDIES, run_study

__all__ = ["STUDIES", "run_study"]
