"""Runs on Inference Providers from the Evaluate tab, end to end: the Space in its own process
with Gradio's local sign-in, a stand-in Hub and router on 127.0.0.1 (``router.py``: images,
top log-probabilities for one model and none for the other, 429s), the page driven through
gradio_client with the visitor's session, then the same run by the ``bla-eval`` CLI, and the
visitor's token looked for in every file, log line and page output."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import httpx
import pytest
from bla_space import providers

from tests.bla_space.router import LOGPROBS_MODEL, TEXT_MODEL, TOKEN, Router
from tests.servers import serving

REPO_ROOT = Path(__file__).resolve().parents[2]
SHOT = REPO_ROOT / "test-artifacts" / "providers.png"
TASKS = ["active_passive"]
LIMIT = 2
SERVER = """
from pathlib import Path
from bla_space.config import SpaceConfig
from bla_space.ui import build_demo, launch_kwargs
config = SpaceConfig.from_env()
build_demo(config).launch(server_name="127.0.0.1", server_port={port}, quiet=True,
                          **launch_kwargs(config))
"""


@pytest.fixture(scope="module")
def router():
    stand_in = Router()
    yield stand_in
    stand_in.close()


@pytest.fixture(scope="module")
def space(router, built_dataset, free_port, tmp_path_factory):
    """(url, results folder, log file) of the Space signed in through Gradio's local mode."""
    root = tmp_path_factory.mktemp("providers-space")
    port, log = free_port(), root / "space.log"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "SPACE_ID")},
        "HF_ENDPOINT": router.url,
        "HF_TOKEN": "hf_machine_login_of_the_developer",
        "BLA_INFERENCE_PROVIDERS": "1",
        "BLA_INFERENCE_ROUTER": router.url + "/v1",
        "BLA_DATASET": str(built_dataset),
        "BLA_RESULTS_DIR": str(root / "runs"),
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    url = f"http://127.0.0.1:{port}/"
    with serving([sys.executable, "-c", SERVER.format(port=port)], url, log, 240, env=env):
        yield url, root / "runs", log


def session_cookie(url: str) -> str:
    """The visitor's session cookie after Gradio's local "Sign in with Hugging Face"."""
    with httpx.Client(base_url=url, follow_redirects=False) as http:
        step = http.get("/login/huggingface")
        callback = http.get(step.headers["location"])
    cookie = callback.headers["set-cookie"]
    return cookie.split(";")[0]


@pytest.mark.slow
def test_a_signed_in_visitor_scores_a_provider_model_as_the_cli_does(
    space, router, built_dataset, tmp_path
):
    from bla_eval.cli import main
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    url, runs, log = space
    args = (LOGPROBS_MODEL, "auto", TASKS, LIMIT, "ranking")
    anonymous = Client(url, verbose=False)
    with pytest.raises(AppError, match="sign in with Hugging Face"):
        anonymous.predict(*args, api_name="/evaluate_provider")

    visitor = Client(url, verbose=False, headers={"Cookie": session_cookie(url)})
    outputs = visitor.predict(*args, api_name="/evaluate_provider")
    results = json.loads(Path(outputs[5]).read_text())
    assert results["kind"] == "openai-api" and results["protocol"]["scoring_path"] == "logprobs"
    assert "top log-probabilities" in outputs[0] and router.throttled > 0
    assert results["protocol"]["api"]["top_logprobs"] == providers.TOP_LOGPROBS
    (space_run,) = runs.glob("api-org_vlm-logprobs-*")  # one folder per model and settings

    os.environ["STAND_IN_TOKEN"] = TOKEN
    try:
        argv = ["--endpoint", router.url + "/v1", "--model", LOGPROBS_MODEL]
        argv += ["--api-key-env", "STAND_IN_TOKEN", "--top-logprobs", "5"]
        argv += ["--data", str(built_dataset), "--tasks", "ap", "--limit", str(LIMIT)]
        assert main([*argv, "--output", str(tmp_path / "cli")]) == 0
    finally:
        del os.environ["STAND_IN_TOKEN"]
    cli_scores = (tmp_path / "cli" / "scores.jsonl").read_bytes()
    assert (space_run / "scores.jsonl").read_bytes() == cli_scores

    text = visitor.predict(
        TEXT_MODEL, "prov-b", TASKS, LIMIT, "ranking", api_name="/evaluate_provider"
    )
    answered = json.loads(Path(text[5]).read_text())
    assert answered["protocol"]["scoring_path"] == "generation"
    assert "generated answer" in text[0] and answered["model"] == f"{TEXT_MODEL}:prov-b"

    pages = json.dumps([outputs[0], text[0]])
    files = [p for p in runs.rglob("*") if p.is_file()]
    assert files and router.bad_auth == 0
    for path in [*files, log]:
        assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in pages


def test_the_estimate_before_a_run_and_the_stop_keep_what_was_scored(router, built_dataset):
    estimate = providers.estimate(60, (0.25, 1.0))
    assert estimate.requests == 241 and estimate.dollars == pytest.approx(
        (241 * 860 * 0.25 + 241 * 1.0) / 1e6
    )
    assert "241 requests" in estimate.text() and "$0.25" in estimate.text()
    assert "no price stated" in providers.estimate(1, None).text()
    assert providers.model_id("org/m", "auto") == "org/m"
    assert providers.model_id("org/m", "prov-a") == "org/m:prov-a"
    assert re.search(r"--score caption.*not offered", providers.NO_CAPTION)


def test_a_stopped_provider_run_keeps_its_datapoints_and_resumes(router, built_dataset, tmp_path):
    import threading

    asked = providers.ProviderRequest(LOGPROBS_MODEL, tasks=["coordination"], limit=6)
    config = asked.run_config(router.url + "/v1", str(built_dataset), tmp_path)
    out = config.output_dir
    stop = threading.Event()
    seen = []

    def progress(done: int, total: int, desc: str) -> None:
        seen.append(done)
        if done >= 1:
            stop.set()

    config = config.with_(batch_size=2, images_per_batch=2)
    with pytest.raises(providers.Stopped, match="run again to resume"):
        providers.evaluate_with_token(config, TOKEN, progress, stop)
    kept = (out / "scores.jsonl").read_text().splitlines()
    assert 0 < len(kept) < 6 and providers.KEY_ENV not in os.environ
    results = providers.evaluate_with_token(config, TOKEN)
    assert results["tasks"]["coordination"]["n"] == 6
    assert (out / "scores.jsonl").read_text().splitlines()[: len(kept)] == kept


@pytest.mark.slow
def test_the_provider_section_in_a_browser_before_and_after_sign_in(space, browser):
    """Screenshots ``test-artifacts/providers-*.png``: without sign-in the option says in one
    line what it needs; signed in, the estimate with the provider's price is shown before the
    run, and the run says how it was scored."""
    from playwright.sync_api import expect

    url, _, _ = space
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_selector("#run-on", timeout=60_000)
    page.locator("#run-on").get_by_text("Inference Providers").click()
    estimate = page.locator("#provider-estimate")
    expect(estimate).to_contain_text("sign in with Hugging Face", timeout=30_000)
    page.wait_for_timeout(1500)  # the pending event's timer gone
    lines = [line for line in estimate.inner_text().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    SHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOT.with_name("providers-signed-out.png")), full_page=True)

    # the session Gradio's local sign-in makes, handed to the browser (headless Chromium keeps
    # no Secure cookie of a plain-http page)
    name, _, value = session_cookie(url).partition("=")
    page.context.add_cookies([{"name": name, "value": value, "url": url}])
    page.goto(url)
    page.wait_for_selector("#run-on", timeout=60_000)
    page.locator("#run-on").get_by_text("Inference Providers").click()
    expect(page.locator("#login")).to_contain_text("visitor", timeout=60_000)  # signed in
    page.locator("#provider-model input").fill(LOGPROBS_MODEL)
    page.locator("#provider-model input").press("Enter")
    expect(estimate).to_contain_text("Before it starts", timeout=30_000)
    expect(estimate).to_contain_text("$0.25")
    page.click("#provider-run")
    expect(page.locator("#run-status")).to_contain_text("Scored from", timeout=120_000)
    for task in ("active_passive", "coordination", "relative_clause"):  # drawn before the shot
        plot = page.locator(f"#plot-{task}")
        plot.locator("canvas, svg").first.wait_for(timeout=30_000)
        assert "this run" in plot.inner_text()
    page.screenshot(path=str(SHOT.with_name("providers-signed-in.png")), full_page=True)
    assert TOKEN not in page.content()
    page.close()


DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def offer(pricing: object, provider: object = "prov-a") -> bytes:
    """The router's model list with one offer of LOGPROBS_MODEL (NaN and Infinity as JSON
    writers that allow them write them)."""
    entry = {"id": LOGPROBS_MODEL, "providers": [{"provider": provider, "pricing": pricing}]}
    return json.dumps({"data": [entry]}, allow_nan=True).encode()


@pytest.mark.parametrize(
    "body",
    [
        offer({"input": -0.0905, "output": 1.0}),
        offer({"input": float("nan"), "output": 1.0}),
        offer({"input": 0.25, "output": float("inf")}),
        offer({"input": 2e6, "output": 1.0}),
        offer({"input": True, "output": 1.0}),
        offer({"input": "0.25", "output": 1.0}),
        offer({"input": 0.25, "output": 1.0}, provider=["prov-a"]),
        offer("free"),
        offer({"input": 0.25, "output": 1.0}).replace(b"0.25", b"1" * 400),
        b'{"data": 5}',
        json.dumps({"data": [{"id": LOGPROBS_MODEL, "providers": 7}]}).encode(),
        b"[1, 2, 3]",
        b"not json",
        DEEP,
        b"\xff\xfe",
    ],
    ids=lambda b: b[:40].decode("utf-8", "replace"),
)
def test_a_price_the_router_states_is_checked_where_it_enters(router, body):
    """Every number of the router's model list is checked where it enters (finite, from 0 to
    the engine's ``--price-input`` bound, a number and not a boolean or text; the JSON within
    the project's depth and size bounds; each list and object of its type): a bad one states
    no price, and the estimate says so instead of "about $-0.0905", "$nan" or a crash."""
    router.models_body = body
    try:
        found = providers.prices(router.url + "/v1", LOGPROBS_MODEL, TOKEN)
    finally:
        router.models_body = None
    assert found == {}
    assert "no price stated" in providers.estimate(3, found.get("prov-a")).text()
    assert providers.prices(router.url + "/v1", LOGPROBS_MODEL, TOKEN) == {"prov-a": (0.25, 1.0)}


@pytest.mark.parametrize(
    "bad", [-19, float("nan"), 1.5, True, "7", 10**400], ids=lambda v: repr(v)[:12]
)
def test_an_estimate_of_a_datapoint_count_no_run_could_have_is_refused(bad):
    with pytest.raises(ValueError, match="datapoints must be"):
        providers.estimate(bad, None)
    if bad != 1.5:  # a price may have cents
        with pytest.raises(ValueError, match="a price must be two numbers"):
            providers.estimate(3, (bad, 1.0))
