"""The documented maxima of ``bla-finetune``'s counts (torch-free: the parser reads them)."""

from __future__ import annotations

MAX_SEEDS = 100
"""The most seeds one call trains (``--seeds``)."""
MAX_EPOCHS = 1000
"""The most epochs per seed (``--epochs``)."""
MAX_BATCH_SIZE = 1024
"""The most training rows per step (``--batch-size``)."""
MAX_SEED = 2**32 - 1
"""The largest seed numpy accepts (``--seed`` + ``--seeds`` - 1 must not pass it)."""
