"""Every verdict rule under its null: false "reproduced" at most MAX_FALSE at the per-seed noise
our runs show (kit/calibration.py; each family's cases in <family>/calibration.py, its noise
in <family>/noise.toml). A rule that judges a claim without a calibration case fails here."""

import pytest

from reasonlab.studies.kit.calibration import (MAX_FALSE, Case, Exempt, families_cases,
                                               noise_entries, rule_functions, run_case)

ALL = [(f, c) for f, cases in families_cases() for c in cases]
CASES = [(f, c) for f, c in ALL if isinstance(c, Case)]


def test_every_rule_that_judges_a_claim_has_a_calibration_case():
    covered = {c.name for _, c in ALL}
    missing = sorted(set(rule_functions()) - covered)
    assert not missing, f"rules without a calibration case (or an Exempt with why): {missing}"
    assert all(c.why for _, c in ALL if isinstance(c, Exempt))


def test_every_case_draws_with_measured_noise():
    for family, case in CASES:
        entries = noise_entries(family)
        assert case.noise in entries, (family, case.name, case.noise)
        assert entries[case.noise]["sd"] > 0 and entries[case.noise]["source"]
        assert case.units >= 1


@pytest.mark.parametrize("family,case", CASES,
                         ids=[f"{f}:{c.rule.__qualname__}:{c.label}" for f, c in CASES])
def test_rule_reads_reproduced_at_most_five_percent_under_its_null(family, case):
    out = run_case(case)
    assert out.false_rate <= MAX_FALSE, (
        f"{case.name} ({case.label or 'default'}): false 'reproduced' {out.false_rate:.3f} "
        f"under its null at {case.units} units per arm; statuses {out.statuses}")
