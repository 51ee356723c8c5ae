"""LEGO (Zhang et al. 2022, "Unveiling Transformers with LEGO"): recipes, analyses, verdict rules
and the studies that reproduce its claims."""
