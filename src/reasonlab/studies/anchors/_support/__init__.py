"""The anchor family's support code beside its fixed modules (common, analysis, verdicts,
calibration): the exact comparison of two shares of runs (shares) its verdict rules read."""
