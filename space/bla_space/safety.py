"""Checks run before any model loads: a well-formed id, an allowed source, a size under the cap."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

from bla_eval.bundled import BUNDLED_MODELS
from bla_eval.bundled import resolve_model as bundled_path

HUB_PREFIX = "hf-hub:"
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"^{_PART}/{_PART}$")
"""A Hub model id ``org/name`` (letters, digits, ``-_.``; no ``--``/``..``; at most 96 per part)."""

WEIGHT_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".gguf")
BYTES_PER_PARAM_GUESS = 2
"""Weight files without a header are counted as 16-bit: an upper bound for fp32 checkpoints."""


class ModelRejected(ValueError):
    """A model id the Space refuses to load; the message is shown to the visitor."""


def validate_model_id(text: str, *, allow_local: bool = False) -> str:
    """The cleaned model id (Hub ``org/name``, optionally ``hf-hub:``, a bundled short name such
    as ``smollm2``, or a local folder).

    Raises ``ModelRejected`` naming the input when it is none of these.
    """
    model = (text or "").strip()
    if not model:
        raise ModelRejected("Enter a model id such as openai/clip-vit-base-patch32.")
    if model in BUNDLED_MODELS and not Path(model).exists():  # a folder of that name wins
        return model
    hub_name = model.removeprefix(HUB_PREFIX)
    if HUB_ID.match(hub_name) and "--" not in hub_name and ".." not in hub_name:
        if Path(model).exists():  # from_pretrained would read the local folder instead
            if allow_local and Path(model).is_dir():
                return str(Path(model).resolve())
            raise ModelRejected(f"{model!r} names a local path; this Space loads Hub models only.")
        return model
    local = Path(model).expanduser()
    if allow_local and local.is_dir():
        return str(local.resolve())
    if model.startswith(("/", ".", "~")) or "\\" in model:
        if allow_local:
            raise ModelRejected(f"{model!r} is not a folder.")
        raise ModelRejected(f"{model!r} is a local path; this Space loads Hub models only.")
    raise ModelRejected(
        f"{model!r} is not a valid Hub model id: expected 'organisation/name' "
        "(letters, digits, '-', '_', '.'), e.g. openai/clip-vit-base-patch32."
    )


def count_parameters(model: str) -> tuple[int | None, str]:
    """The number of parameters of ``model`` without loading it, and how it was counted.

    Local folders: the safetensors headers (or weight file sizes). A bundled short name: its GGUF
    file's tensors. Hub ids: the safetensors metadata from ``huggingface_hub`` (or weight file
    sizes). ``(None, reason)`` when it cannot be told.
    """
    if model in BUNDLED_MODELS and not Path(model).exists():
        try:
            return gguf_parameter_count(Path(bundled_path(model))), "GGUF tensors"
        except ValueError as err:  # its package is not installed
            return None, str(err)
    path = Path(model)
    if path.is_dir():
        return _count_local(path)
    return _count_hub(model.removeprefix(HUB_PREFIX))


def check_model_size(model: str, max_params: float) -> int | None:
    """The parameter count of ``model``; raises ``ModelRejected`` when it is over ``max_params``."""
    count, how = count_parameters(model)
    if count is None:
        raise ModelRejected(f"Cannot check the size of {model!r} ({how}), so it is not loaded.")
    if count > max_params:
        raise ModelRejected(
            f"{model!r} has {human_count(count)} parameters ({how}); this Space accepts models "
            f"up to {human_count(max_params)}. Run larger models with the bla-eval CLI."
        )
    return count


def human_count(n: float) -> str:
    """``1234567`` -> ``'1.2M'``."""
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(int(n))


def safetensors_parameter_count(file: Path) -> int:
    """Parameters stored in one ``.safetensors`` file, read from its JSON header only."""
    with file.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    total = 0
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        count = 1
        for dim in tensor["shape"]:
            count *= dim
        total += count
    return total


def gguf_parameter_count(file: Path) -> int:
    """Parameters stored in one GGUF file, from its tensor descriptions (memory-mapped)."""
    from gguf import GGUFReader

    return sum(int(tensor.n_elements) for tensor in GGUFReader(file).tensors)


def _count_local(path: Path) -> tuple[int | None, str]:
    """Parameters of a local model folder."""
    tensors = sorted(path.rglob("*.safetensors"))
    if tensors:
        return sum(safetensors_parameter_count(f) for f in tensors), "safetensors headers"
    weights = [f for f in path.rglob("*") if f.suffix in WEIGHT_SUFFIXES]
    if weights:
        size = sum(f.stat().st_size for f in weights)
        return size // BYTES_PER_PARAM_GUESS, "estimated from weight file sizes"
    return None, "no weight files in the folder"


def _count_hub(repo_id: str) -> tuple[int | None, str]:
    """Parameters of a Hub model, from metadata only (no weights are downloaded)."""
    from huggingface_hub import HfApi, get_safetensors_metadata
    from huggingface_hub.errors import (
        GatedRepoError,
        NotASafetensorsRepoError,
        RepositoryNotFoundError,
    )

    try:
        meta = get_safetensors_metadata(repo_id)
        return sum(meta.parameter_count.values()), "safetensors metadata"
    except NotASafetensorsRepoError:
        pass
    except GatedRepoError:
        raise ModelRejected(f"{repo_id!r} is gated on the Hub; the Space cannot load it.") from None
    except RepositoryNotFoundError:
        raise ModelRejected(f"{repo_id!r} was not found on the Hub.") from None
    except Exception as err:  # network and server errors: report, do not crash the app
        raise ModelRejected(f"Could not reach the Hub to check {repo_id!r}: {err}") from None
    info = HfApi().model_info(repo_id, files_metadata=True)
    sizes = [s.size or 0 for s in info.siblings or [] if s.rfilename.endswith(WEIGHT_SUFFIXES)]
    if not sizes:
        return None, "no weight files in the repo"
    return sum(sizes) // BYTES_PER_PARAM_GUESS, "estimated from weight file sizes"
