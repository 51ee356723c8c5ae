"""LEGO's support code that is neither a study nor one of the family's fixed modules (common,
analysis, verdicts, calibration): the recipes, arms and rules of the §5 studies (masked_lm:
lego-hardcoded-attention; programs: lego-conv-qkv-programs)."""
