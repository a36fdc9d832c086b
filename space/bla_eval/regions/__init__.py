"""Region features: the detected boxes and their pooled features that region-based models read."""

from .features import RegionFeatures

__all__ = ["RegionFeatures"]
