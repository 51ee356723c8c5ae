"""Artificial pretraining corpora (Chiang & Lee, "On the Transferability of Pre-trained Language
Models: A Study from Artificial Datasets"): recipes, verdict rules and studies."""
