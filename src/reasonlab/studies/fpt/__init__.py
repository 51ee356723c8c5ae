"""Frozen pretrained transformers (Lu et al. 2021, "Pretrained Transformers as Universal
Computation Engines"): recipes, verdict rules and the studies that reproduce its claims."""
