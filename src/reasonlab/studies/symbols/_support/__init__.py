"""The abstract-symbols family's support code beside its fixed modules (common, analysis,
verdicts, calibration): what `symbols-kernel`, which trains nothing, computes per scale and
which overrides it takes (kernel_recipe)."""
