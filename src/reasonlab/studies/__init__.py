"""Studies register themselves in STUDIES on import."""

from reasonlab.studies import lego_extrapolation  # noqa: F401
from reasonlab.studies import lego_stochastic_depth  # noqa: F401
from reasonlab.studies import lego_probes  # noqa: F401
from reasonlab.studies import lego_pretraining  # noqa: F401
from reasonlab.studies import lego_mimicking  # noqa: F401
from reasonlab.studies import lego_shortcut  # noqa: F401
from reasonlab.studies import lego_mixed_lengths  # noqa: F401
from reasonlab.studies.base import STUDIES, run_study

__all__ = ["STUDIES", "run_study"]
