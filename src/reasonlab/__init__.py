"""reasonlab: controlled experiments on how transformers learn to reason."""

__version__ = "0.1.0"
