"""The freeze slides' arms (Lu et al. 2021, slides: "Freezing more parameters" and "Successive
finetuning", each for the pretrained and the frozen random backbone): which parameter groups
each arm trains beside the output layer, and how the slides' columns map onto our arms.

The one-group arms are named as the slides' columns; the successive table's columns are our
cumulative arms (+ layernorm = output + layernorm, ...; + positions = FPT, all four groups).
"""

from __future__ import annotations

from reasonlab.studies.fpt.analysis import SlideLayout
from reasonlab.studies.fpt.paper import (FREEZE_MORE, FREEZE_MORE_RANDOM, ONE_GROUP,
                                         SUCCESSIVE, SUCCESSIVE_RANDOM, SUCCESSIVE_TABLE)

OUT, OUT_IN, OUT_POS, OUT_LN = ONE_GROUP
OUT_LN_IN, ALL = "output + layernorm + input", "FPT (all four)"
POLICIES = {OUT: "output_only", OUT_IN: "input_output", OUT_POS: "output_positions",
            OUT_LN: "output_norms", OUT_LN_IN: "input_output_norms", ALL: "fpt"}
"""Arm -> freeze preset (model/freeze.py)."""
ONE_GROUP_ARMS = dict(zip(ONE_GROUP, (OUT, OUT_IN, OUT_POS, OUT_LN), strict=True))
SUCCESSIVE_ARMS = dict(zip(SUCCESSIVE, (OUT, OUT_LN, OUT_LN_IN, ALL), strict=True))
"""The slides' column -> our arm, per table."""
INITS = {"pretrained": "pretrained", "frozen random": "random"}
"""The backbone's weights, a factor of every run (`init`) -> model/fpt.py Init."""
RANDOM_SUFFIX = " - frozen random"
"""The slides title each table of the frozen random backbone as the pretrained one's, so."""
LAYOUTS: dict[str, SlideLayout] = {
    "pretrained": {"Freezing more parameters": (ONE_GROUP_ARMS, FREEZE_MORE),
                   "Successive finetuning": (SUCCESSIVE_ARMS, SUCCESSIVE_TABLE)},
    "frozen random": {
        f"Freezing more parameters{RANDOM_SUFFIX}": (ONE_GROUP_ARMS, FREEZE_MORE_RANDOM),
        f"Successive finetuning{RANDOM_SUFFIX}": (SUCCESSIVE_ARMS, SUCCESSIVE_RANDOM)}}
"""Init label -> the slides the report prints for its runs, in the slides' layout."""
