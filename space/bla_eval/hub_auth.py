"""The token every command that writes to the Hugging Face Hub needs, checked before it starts.

Publishing the dataset, deploying the Space or the metric, ``bla-eval export --push`` and the
Space's results sync all write to the Hub: each asks :func:`require_token` first, so a missing
token is one line that names the variable to set instead of a 401 in the middle of the work.
"""

from __future__ import annotations

TOKEN_VARIABLE = "HF_TOKEN"


class MissingTokenError(ValueError):
    """No Hugging Face token is configured (neither ``HF_TOKEN`` nor a saved login)."""


def require_token(action: str) -> str:
    """The token ``huggingface_hub`` would send (``HF_TOKEN``, else the saved login); raises
    :class:`MissingTokenError` naming ``action`` and the variable to set when there is none."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise MissingTokenError(
            f"{action} writes to the Hugging Face Hub and needs a token with write access: "
            f"set {TOKEN_VARIABLE} (or run `hf auth login`)"
        )
    return token
