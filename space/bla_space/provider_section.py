"""The Evaluate tab's "Run on: Inference Providers" section: sign-in, a Hub model served by a
provider, the estimate said before the run, the run and its stop button (``providers.py``)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import gradio as gr

from . import providers
from .config import SpaceConfig
from .runner import count_datapoints, datapoint_limit

log = logging.getLogger(__name__)

NEEDS_SIGN_IN = (
    "Inference Providers run on your own Hugging Face account: **sign in with Hugging Face** "
    "above to use them (the run is billed to you; your token is used for that run only)."
)
NOT_OFFERED = (
    "Inference Providers need this Space on the Hub with sign-in (`hf_oauth`), or "
    "`BLA_INFERENCE_PROVIDERS=1` locally; here, run them with `bla-eval --endpoint "
    "https://router.huggingface.co/v1 --model ORG/NAME --api-key-env HF_TOKEN --top-logprobs 5`."
)
_STOPS: dict[str, threading.Event] = {}
"""Session -> the stop flag of that visitor's provider run."""


@dataclass
class ProviderSection:
    """The components the tab wires: the section, its run event and what it runs."""

    box: gr.Column
    model: gr.Dropdown
    provider: gr.Dropdown
    estimate: gr.Markdown
    button: gr.Button
    stop: gr.Button


def build(config: SpaceConfig) -> ProviderSection:
    """Lay out the section (hidden until "Inference Providers" is picked)."""
    with gr.Column(visible=False, elem_id="providers") as box:
        if config.providers:  # else the section is never shown (evaluate_tab says why once)
            gr.LoginButton(elem_id="login")
        with gr.Row():
            model = gr.Dropdown(
                [],
                label="Model served by a provider (image-text-to-text)",
                allow_custom_value=True,
                scale=3,
                elem_id="provider-model",
            )
            provider = gr.Dropdown(
                [providers.AUTO],
                value=providers.AUTO,
                label="Provider",
                info="auto: the router's choice",
                allow_custom_value=True,
                scale=1,
                elem_id="provider-name",
            )
        estimate = gr.Markdown(NEEDS_SIGN_IN, elem_id="provider-estimate")
        gr.Markdown(
            "Scored as `bla-eval --endpoint` scores it: P(yes) from the answer's top "
            "log-probabilities where the provider returns them, else the generated answer. "
            + providers.NO_CAPTION,
            elem_id="provider-scoring",
        )
        with gr.Row():
            button = gr.Button(
                "Evaluate on Inference Providers",
                variant="primary",
                interactive=config.providers,
                elem_id="provider-run",
            )
            stop = gr.Button("Stop (keeps what was scored)", elem_id="provider-stop")
    return ProviderSection(box, model, provider, estimate, button, stop)


def list_models(config: SpaceConfig, oauth_token: gr.OAuthToken | None):
    """The model menu from the Hub (empty with a warning when the Hub cannot be reached;
    unchanged where provider runs are not offered)."""
    if not config.providers:
        return gr.Dropdown()
    try:
        return gr.Dropdown(choices=providers.provider_models())
    except Exception as err:  # the page keeps serving; the visitor may type an id
        gr.Warning(f"Cannot list the Hub's provider models: {err}")
        return gr.Dropdown()


def list_providers(model: str):
    """The provider menu of ``model``: auto, then the providers serving it."""
    try:
        names = providers.providers_of(model) if model else []
    except Exception as err:  # unknown model or Hub unreachable: auto stays
        log.warning("providers of %r: %s", model, err)
        names = []
    return gr.Dropdown(choices=[providers.AUTO, *names], value=providers.AUTO)


def estimate_text(
    config: SpaceConfig, asked: providers.ProviderRequest, oauth_token: gr.OAuthToken | None
) -> str:
    """What the run ``asked`` will ask for and cost, or what the visitor needs first."""
    if not config.providers:
        return NOT_OFFERED
    if oauth_token is None:
        return NEEDS_SIGN_IN
    if not asked.model or not asked.tasks:
        return "Pick a model and at least one task to see what the run asks for."
    try:
        datapoints = count_datapoints(config, asked.tasks, datapoint_limit(asked.limit))
    except ValueError as err:  # a limit the run refuses too
        return f"**No estimate**: {err}."
    except Exception as err:  # the dataset unreachable: the run says so in full
        log.warning("estimate of %r: %s", asked.model, err)
        return f"**No estimate**: the dataset cannot be read ({type(err).__name__})."
    offers = providers.prices(config.router, str(asked.model), oauth_token.token)
    chosen = offers.get(asked.provider) if isinstance(asked.provider, str) else None
    price = chosen or (next(iter(offers.values())) if offers else None)
    return providers.estimate(datapoints, price).text()


def stop_run(request: gr.Request) -> str:
    """Set the stop flag of this visitor's provider run."""
    flag = _STOPS.get(_session(request))
    if flag is None:
        return "No provider run of yours is going on."
    flag.set()
    return "Stopping at the next batch; what was scored is kept (run again to resume)."


def _session(request: gr.Request | None) -> str:
    return (request.session_hash if request else None) or ""


def stop_flag(request: gr.Request | None) -> threading.Event:
    """A fresh stop flag for this visitor's run."""
    flag = threading.Event()
    _STOPS[_session(request)] = flag
    return flag


def forget(request: gr.Request | None) -> None:
    """Drop the stop flag of this visitor's finished run."""
    _STOPS.pop(_session(request), None)
