"""Abstract symbols (Boix-Adsera et al. 2024, "When can transformers reason with abstract
symbols?"): recipes, analyses, verdict rules and the studies that reproduce its claims."""
