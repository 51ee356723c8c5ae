"""KEY=VALUE overrides (config.py): parsed from the command line, and written back into the
report of a study trained with them."""

import pytest

from reasonlab.config import override_lines, parse_overrides
from reasonlab.errors import ConfigError


def test_parse_nests_dotted_keys_and_reads_json_values():
    got = parse_overrides(["model.d_model=8", "steps=2", "task.name=lego", "optim.betas=[0.9,0.95]",
                           "init_from.n_train=64"])
    assert got == {"model": {"d_model": 8}, "steps": 2, "task": {"name": "lego"},
                   "optim": {"betas": [0.9, 0.95]}, "init_from": {"n_train": 64}}


@pytest.mark.parametrize("items", [
    ["model.d_model=8", "steps=2"],
    ['task.name="lego"', "optim.betas=[0.9, 0.95]", "trainable={\"prefixes\": [\"head.\"]}"],
    ["mimic.steps=3", "model.attention.name=\"identity\"", "dtype=null"],
])
def test_override_lines_invert_parse_overrides(items):
    """override_lines writes what parse_overrides reads: parsing its lines gives the same
    overrides (strings come back JSON-quoted, so that `steps="2"` stays a string)."""
    parsed = parse_overrides(items)
    assert parse_overrides(override_lines(parsed)) == parsed


def test_bad_overrides_are_one_line_errors():
    with pytest.raises(ConfigError, match="not key=value"):
        parse_overrides(["steps"])
    with pytest.raises(ConfigError, match="conflicts"):
        parse_overrides(["model=3", "model.d_model=8"])
