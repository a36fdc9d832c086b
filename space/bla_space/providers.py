"""Runs on Inference Providers: a Hub model served by the Hugging Face router (an
OpenAI-compatible chat-completions API), scored by the engine's ``openai-api`` kind with the
signed-in visitor's token, billed to the visitor's account.

No Gradio here. The token is used for one run only: it is registered with the project's secret
masking (``bla_eval.redact``) before anything else, put in the environment variable the run reads
its key from (:data:`KEY_ENV`) for the run's duration under a lock (one provider run at a time in
a process), and removed after; it is never an argument of a recorded setting, so it reaches no
``run.json``, ``results.json``, cache entry, log line or page.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bla_eval.api.settings import MAX_PRICE_USD
from bla_eval.cli_common import check_range
from bla_eval.config import MAX_LIMIT, RunConfig
from bla_eval.redact import register

ROUTER = "https://router.huggingface.co/v1"
"""The Hugging Face router's OpenAI-compatible API (``BLA_INFERENCE_ROUTER`` replaces it)."""
KEY_ENV = "BLA_VISITOR_HF_TOKEN"
"""Where a provider run reads the visitor's token (never the Space's own ``HF_TOKEN``)."""
AUTO = "auto"
"""The router's own choice of provider (the model id without a ``:provider`` suffix)."""
TASK = "image-text-to-text"
TOP_LOGPROBS = 5
"""The most alternatives per token the router's providers return."""
CONCURRENCY = 4
"""Requests in flight at once for one visitor's run."""
MAX_RETRIES = 5
"""Retries of a throttled or failed request, with the CLI client's backoff (``Retry-After``)."""
PROMPT_TOKENS = 60
IMAGE_TOKENS = 800
"""Rough prompt tokens of one request: the question, and one image (model-dependent)."""
SECONDS_PER_REQUEST = 2.0
"""Rough seconds one request takes at a provider."""
MODELS_BYTES = 8 * 2**20
"""The most bytes of the router's model list read (a longer answer states no price)."""
NO_CAPTION = (
    "Sentence likelihood (--score caption) is not offered here: it reads the prompt's "
    "log-probabilities, which the router does not return (only the answer's top 5)."
)
SCORING_WORDS = {
    "logprobs": "P(yes) from the first answer token's top log-probabilities",
    "generation": "the generated answer classified as yes / no (the provider returns no "
    "log-probabilities)",
}

_RUN_LOCK = threading.Lock()


class Stopped(RuntimeError):
    """The visitor stopped the run; what was scored is kept for a resume."""


def model_id(model: str, provider: str) -> str:
    """The name the router knows: ``org/name`` (auto) or ``org/name:provider``."""
    return model if provider in ("", AUTO) else f"{model}:{provider}"


def provider_models(limit: int = 200) -> list[str]:
    """Hub models with an inference provider for image-text-to-text, most liked first
    (``huggingface_hub.HfApi.list_models``)."""
    from huggingface_hub import HfApi

    listed = HfApi().list_models(
        pipeline_tag=TASK, inference_provider="all", sort="likes", limit=limit
    )
    return [m.id for m in listed]


def providers_of(model: str) -> list[str]:
    """The providers serving ``model`` for image-text-to-text (live ones), from the Hub."""
    from huggingface_hub import HfApi

    info = HfApi().model_info(model, expand=["inferenceProviderMapping"])
    mapping = info.inference_provider_mapping or []
    return [
        m.provider for m in mapping if m.task in (TASK, "conversational") and m.status == "live"
    ]


def prices(router: str, model: str, token: str | None) -> dict[str, tuple[float, float]]:
    """Provider -> (US dollars per million input tokens, per million output tokens) where the
    router's model list (``GET <router>/models``) states them; {} when it states none. What the
    router says is checked where it enters: the answer read up to :data:`MODELS_BYTES` and
    parsed by ``bla_eval.outputs.parse_json`` (depth and numbers bounded), every list and
    object of the expected type, every price a number from 0 to ``MAX_PRICE_USD`` (an offer
    with any other price states none)."""
    out = {}
    for entry in _listed(router_models(router, token), "data"):
        if not isinstance(entry, dict) or entry.get("id") != model:
            continue
        for offer in _listed(entry, "providers"):
            price = _offer_price(offer)
            if price is not None:
                out[offer["provider"]] = price
    return out


def router_models(router: str, token: str | None) -> Any:
    """The router's model list as parsed JSON, or None when it cannot be read (unreachable,
    an error status, more than :data:`MODELS_BYTES`, no bounded JSON)."""
    import httpx
    from bla_eval.outputs import parse_json

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = bytearray()
    try:
        with httpx.stream(
            "GET", f"{router.rstrip('/')}/models", headers=headers, timeout=10
        ) as response:
            if response.status_code != 200:
                return None
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MODELS_BYTES:
                    return None
        return parse_json(data.decode("utf-8"))
    except (httpx.HTTPError, ValueError):  # UnicodeDecodeError is a ValueError
        return None


def _listed(document: Any, key: str) -> list:
    """``document[key]`` when ``document`` is an object and that is a list, else []."""
    value = document.get(key) if isinstance(document, dict) else None
    return value if isinstance(value, list) else []


def _offer_price(offer: Any) -> tuple[float, float] | None:
    """(input, output) of one provider offer whose name is a string and whose two prices are
    valid (:func:`valid_price`); else None."""
    if not isinstance(offer, dict) or not isinstance(offer.get("provider"), str):
        return None
    pricing = offer.get("pricing")
    if not isinstance(pricing, dict):
        return None
    pair = (valid_price(pricing.get("input")), valid_price(pricing.get("output")))
    return None if None in pair else pair


def valid_price(value: Any) -> float | None:
    """``value`` as a price (US dollars per million tokens) when it is a finite number from 0
    to ``MAX_PRICE_USD`` (the engine's bound of ``--price-input``), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond a float
        return None
    return number if math.isfinite(number) and 0 <= number <= MAX_PRICE_USD else None


@dataclass(frozen=True)
class Estimate:
    """What a provider run will ask for, said before it starts."""

    datapoints: int
    requests: int
    prompt_tokens: int
    output_tokens: int
    seconds: float
    price: tuple[float, float] | None
    """(input, output) US dollars per million tokens, where the router states them."""

    @property
    def dollars(self) -> float | None:
        if self.price is None:
            return None
        return (self.prompt_tokens * self.price[0] + self.output_tokens * self.price[1]) / 1e6

    def text(self) -> str:
        """The estimate in one paragraph of Markdown."""
        cost = (
            f"about **${self.dollars:.4f}** at the provider's ${self.price[0]:g} / "
            f"${self.price[1]:g} per million input / output tokens"
            if self.price is not None
            else "no price stated on the Hub for this provider (see your billing page)"
        )
        return (
            f"**Before it starts**: {self.datapoints} datapoints x 4 sentences = "
            f"**{self.requests} requests** ({CONCURRENCY} at a time, each retried up to "
            f"{MAX_RETRIES} times when throttled), about {self.prompt_tokens:,} prompt and "
            f"{self.output_tokens:,} answer tokens, about {self.seconds / 60:.0f} min; {cost}. "
            "Billed to your Hugging Face account. Lower the datapoints per task to spend less."
        )


def estimate(datapoints: int, price: tuple[float, float] | None) -> Estimate:
    """The requests, tokens, time and cost of scoring ``datapoints`` BLA datapoints (four
    sentences each, one request per sentence, and the first query asked once more to choose
    the scoring path); ValueError for datapoints that are no whole number from 0 to the most a
    run may ask for, or a price that is not two valid prices (:func:`valid_price`)."""
    check_range("datapoints", datapoints, 0, 4 * MAX_LIMIT)
    if price is not None and (
        not isinstance(price, tuple) or len(price) != 2 or None in map(valid_price, price)
    ):
        raise ValueError(f"a price must be two numbers from 0 to {MAX_PRICE_USD:g}, got {price!r}")
    requests = 4 * datapoints + 1
    return Estimate(
        datapoints=datapoints,
        requests=requests,
        prompt_tokens=requests * (PROMPT_TOKENS + IMAGE_TOKENS),
        output_tokens=requests,
        seconds=requests / CONCURRENCY * SECONDS_PER_REQUEST,
        price=price,
    )


def run_folder(results_dir: Path, settings: dict[str, Any]) -> Path:
    """The run folder of a provider run with ``settings``: the same settings, the same folder,
    so a stopped run is resumed where it stopped (``RunConfig(resume=True)``)."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(settings["model"])).strip("_")[:80]
    return Path(results_dir) / f"api-{slug}-{digest}"


@dataclass(frozen=True)
class ProviderRequest:
    """A provider run the page asks for: the model as typed (a Hub id), the provider
    (:data:`AUTO`: the router's choice), the tasks and the datapoints per task (checked by the
    caller before :meth:`run_config`)."""

    model: str
    provider: str | None = AUTO
    tasks: Sequence[str] = ()
    limit: int | None = None

    def run_config(self, router: str, data: str, results_dir: Path) -> RunConfig:
        """The ``openai-api`` run against ``router``: what ``bla-eval --endpoint ROUTER --model
        MODEL[:PROVIDER] --api-key-env BLA_VISITOR_HF_TOKEN --top-logprobs 5 --concurrency 4``
        runs, in the folder of its settings (:func:`run_folder`: the same request resumes)."""
        name = model_id(self.model, self.provider or AUTO)
        settings = {"model": name, "tasks": sorted(self.tasks), "limit": self.limit, "data": data}
        return RunConfig(
            name,
            run_folder(results_dir, settings),
            data=data,
            tasks=tuple(self.tasks),
            limit=self.limit,
            endpoint=router,
            api_key_env=KEY_ENV,
            top_logprobs=TOP_LOGPROBS,
            concurrency=CONCURRENCY,
            max_retries=MAX_RETRIES,
            resume=True,
        )


def evaluate_with_token(
    config: RunConfig,
    token: str,
    progress: Callable[[int, int, str], None] | None = None,
    stop: threading.Event | None = None,
) -> dict:
    """``bla_eval.run.evaluate(config)`` with ``token`` as the run's key; ``stop`` set ends it
    at the next batch (:class:`Stopped`; the scored datapoints stay in the run folder)."""
    from bla_eval.run import evaluate

    if not token:
        raise ValueError("Sign in with Hugging Face to run on Inference Providers.")
    register(token)

    def report(done: int, total: int, desc: str) -> None:
        if stop is not None and stop.is_set():
            raise Stopped(f"stopped after {done} of {total} datapoints; run again to resume")
        if progress is not None:
            progress(done, total, desc)

    with _RUN_LOCK:
        os.environ[KEY_ENV] = token
        try:
            return evaluate(config, progress=report)
        finally:
            os.environ.pop(KEY_ENV, None)


def scoring_of(results: dict) -> str:
    """How an endpoint run was scored, in words: its ``results.json`` protocol record's
    ``scoring_path`` (written by the ``openai-api`` kind); '' for other runs."""
    protocol = results.get("protocol")
    path = protocol.get("scoring_path") if isinstance(protocol, dict) else None
    return SCORING_WORDS.get(str(path), "")
