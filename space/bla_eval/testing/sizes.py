"""Sizes of the tiny transformers (text and vision towers)."""

TINY_LAYERS = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
"""Sizes of a one-layer tiny transformer (text or vision tower)."""
TWO_LAYERS = dict(TINY_LAYERS, num_hidden_layers=2)
"""The same with two layers (the scorer tests: a cache or a cross-attention spans layers)."""
TINY_VISION = dict(TWO_LAYERS, image_size=32, patch_size=8)
"""A two-layer vision tower on 32 px images (16 patches)."""
