"""Anchor functions (Zhang et al. 2024, "Initialization is critical to whether transformers fit
composite functions by reasoning or memorizing"): recipes, analyses, verdict rules and studies."""
