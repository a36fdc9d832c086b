"""BLA-specific learning (paper §6): fine-tuning on the learning configs (``bla-finetune``) and the
learning report (``bla-eval learning-report``). In-context learning is a protocol of the engine
(``bla_eval.protocols``, ``bla-eval --protocol icl-sd|icl-dd``).
"""

from typing import Any

__all__ = ["METRICS", "FinetuneConfig", "finetune"]


def __getattr__(name: str) -> Any:
    """``METRICS``, ``FinetuneConfig`` and ``finetune`` from ``train`` (torch), imported on use."""
    if name in __all__:
        from . import train

        return getattr(train, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
