"""Two verdict preconditions checked on their status, on numbers where the rule without its
precondition reads "reproduced" (issue 57: mutants dropping them died only on the `why` text,
since the numbers of their tests read inconclusive either way)."""

from __future__ import annotations

from reasonlab.studies.artificial._support import paper_table_verdicts as sv
from reasonlab.studies.kit.core import Claim
from reasonlab.studies.lego.verdicts import closed_verdict
from tests.unit.studies.artificial.test_paper_table_verdicts import draw
from tests.unit.studies.lego.test_verdicts import mimic_finals

C = Claim("k", "claim", "source")


def test_a_gap_too_small_to_close_is_never_read_closed():
    """Mimicking matches pretrained exactly (share closed 1.0, tight), but the gap pretrained -
    random is 0.02, confidently below the minimum gain: the gap is not reproduced, so its
    share is inconclusive; without the precondition it reads reproduced."""
    v = closed_verdict(C, mimic_finals(40, 0.55, 0.57, 0.57, sd=0.002), slice(4, 7), "x")
    assert v.effect is not None and v.effect.lo > 0.5  # the share alone would pass
    assert v.status == "inconclusive", v.evidence
    assert v.why.startswith("precondition not met (the gap to close is not reproduced")


def test_no_pair_task_gain_leaves_nothing_for_pair_minus_single_to_locate():
    """Every corpus hurts the single-sentence tasks (-0.06) and leaves the pair tasks as
    scratch: pair - single is confidently positive, yet there is no pair-task gain."""
    gains = {i: (0.0, -0.06) for i in sv.SEED_INITS}
    v = sv.sentence_pair(C, draw(gains, 4, sd=0.003))
    assert v.status == "inconclusive", v.evidence
    assert "no pair-task gain to locate" in v.why
