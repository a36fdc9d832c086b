"""The ``vllm`` kind and a vLLM server, real, on 127.0.0.1, against the transformers generative
kind: a tiny random LLaVA (head size 64, which vLLM's CPU attention takes) in float32; and the
``vllm`` kind on a text-only Llama of the same shape against the transformers text kind.

vLLM runs in its own environment (``.ci/envs/vllm.txt``, built by ``.ci/build-env vllm``): one
process runs every ``vllm`` kind run on one engine (``vllm_runs.py``), one serves the model
(``vllm.entrypoints.openai.api_server``); both start at once, with the bad-input commands beside
them, and are stopped at the module's end. The transformers runs and the endpoint kind run here.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval

from tests.bla_eval.commands import call, eval_args
from tests.harness_envs import REPO_ROOT, harness_python
from tests.servers import started, stop, wait_for

pytestmark = pytest.mark.slow

TASK, LIMIT = "ap", 2
TOLERANCE = 1e-5
"""|P(yes) vLLM - P(yes) transformers| in float32 (measured: below 1e-7)."""
LOG_PROB_TOLERANCE = 1e-4
"""|mean token log-probability vLLM - transformers| in float32 (measured: below 1e-6)."""
SERVED = "tiny-llava"
SERVER_START_S = 600
"""An engine start takes 1-2.5 minutes on 2 busy cores; the server has room for more."""
RUNS_TIMEOUT_S = 900


def vllm_env() -> dict[str, str]:
    """The environment of a process of the vLLM environment: the project's code on its path."""
    path = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "space")])
    return {**os.environ, "PYTHONPATH": path, "VLLM_LOGGING_LEVEL": "WARNING"}


def scores(run: Path) -> dict[str, dict]:
    """Datapoint id -> its score record."""
    lines = (run / "scores.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.fixture(scope="module")
def release_sentences(built_dataset: Path) -> list[str]:
    from bla_eval.benchmarks.bla import load_bla

    return [c for p in load_bla(str(built_dataset)) for c in p.captions]


# The two models are built once for the sessions (``tiny_model``, keyed by their builder's source
# and texts). Every engine here runs eagerly (``--enforce-eager``): vLLM's CPU default traces and
# compiles the model with inductor at each start (~4 s of CPU more per start, from its cache).
@pytest.fixture(scope="module")
def tiny_llava(release_sentences: list[str], tiny_model) -> Path:
    from bla_eval.testing.generative import build_llava_vllm

    return tiny_model("llava-vllm", release_sentences, build_llava_vllm)


@pytest.fixture(scope="module")
def tiny_llama(release_sentences: list[str], tiny_model) -> Path:
    from bla_eval.testing.generative import build_llama_vllm

    return tiny_model("llama-vllm", release_sentences, build_llama_vllm)


@pytest.fixture(scope="module")
def unservable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config of an image-text-to-text architecture that vLLM does not implement."""
    import transformers as tf

    out = tmp_path_factory.mktemp("vipllava") / "vipllava"
    config = tf.VipLlavaConfig(text_config=tf.LlamaConfig(hidden_size=64, num_hidden_layers=1))
    config.architectures = ["VipLlavaForConditionalGeneration"]
    config.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def vllm(
    tiny_llava: Path,
    tiny_llama: Path,
    unservable: Path,
    built_dataset: Path,
    tmp_path_factory,
    free_port,
) -> Iterator[dict]:
    """Start the server, the runs of the ``vllm`` kind and the bad-input commands at once; yield
    the server's URL, the runs' summary and the commands' results once all are done."""
    python = str(harness_python("vllm"))
    out = tmp_path_factory.mktemp("vllm")
    port = free_port()
    server = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_llava)]
    server += ["--served-model-name", SERVED, "--host", "127.0.0.1", "--port", str(port)]
    server += ["--dtype", "float32", "--max-model-len", "160", "--gpu-memory-utilization", "0.1"]
    server += ["--enforce-eager"]
    common = [python, "-m", "bla_eval", "--data", str(built_dataset), "--tasks", TASK]
    bad = {
        "architecture": [*common, "--model", str(unservable), "--kind", "vllm"],
        "kv-cache": [*common, "--model", str(tiny_llava), "--kind", "vllm"]
        + ["--gpu-memory-utilization", "0.01", "--enforce-eager"],
    }
    log = out / "server.log"
    with started(server, log, env=vllm_env()) as served:
        procs = {
            name: subprocess.Popen(
                [*argv, "--limit", "1", "--output", str(out / name)],
                env=vllm_env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name, argv in bad.items()
        }
        script = Path(__file__).with_name("vllm_runs.py")
        runs = subprocess.Popen(
            [python, str(script), str(tiny_llava), str(built_dataset), str(out), str(tiny_llama)],
            env=vllm_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            runs_err = runs.communicate(timeout=RUNS_TIMEOUT_S)[1]
            assert runs.returncode == 0, runs_err[-4000:]
            results = {
                name: (p.wait(timeout=RUNS_TIMEOUT_S), p.stderr.read()) for name, p in procs.items()
            }
            url = f"http://127.0.0.1:{port}/v1"
            wait_for(f"{url}/models", served, log, SERVER_START_S)
            summary = json.loads((out / "summary.json").read_text())
            yield {"url": url, "summary": summary, "bad": results, "out": out}
        finally:
            for proc in (runs, *procs.values()):
                stop(proc)


@pytest.fixture(scope="module")
def transformers_runs(tiny_llava: Path, built_dataset: Path, tmp_path_factory) -> dict[str, Path]:
    """The generative kind's zero-shot, paper and likelihood runs of the same datapoints."""
    out = tmp_path_factory.mktemp("transformers")
    runs = {}
    asked = {
        "zero-shot": [],
        "paper": ["--protocol", "paper"],
        "caption": ["--score", "caption"],
        "caption-pmi": ["--score", "caption-pmi", "--pmi-alpha", "1"],
    }
    for name, extra in asked.items():
        argv = eval_args(tiny_llava, built_dataset, out / name, "--tasks", TASK)
        assert bla_eval([*argv, "--limit", str(LIMIT), "--kind", "generative", *extra]) == 0
        runs[name] = out / name
    return runs


@pytest.mark.parametrize(
    ("name", "extra", "tolerance"),
    [("text", [], LOG_PROB_TOLERANCE), ("text-prompt", ["--prompt", "bla"], TOLERANCE)],
)
def test_a_text_only_model_scores_as_the_text_kind(
    vllm, tiny_llama, built_dataset, tmp_path, name, extra, tolerance
):
    assert vllm["summary"][name] == {"code": 0, "errors": [], "traceback": False}
    argv = eval_args(tiny_llama, built_dataset, tmp_path / name, "--tasks", TASK, *extra)
    assert bla_eval([*argv, "--limit", str(LIMIT), "--kind", "text"]) == 0
    ours, theirs = scores(vllm["out"] / name), scores(tmp_path / name)
    assert ours.keys() == theirs.keys() and len(ours) == LIMIT
    for key, record in ours.items():
        for a, b in zip(record["scores"], theirs[key]["scores"], strict=True):
            assert abs(a - b) <= tolerance, (key, a, b)
    results = json.loads((vllm["out"] / name / "results.json").read_text())
    assert results["kind"] == "vllm" and results["protocol"]["text_only"] is True
    # the text kind's binary view: log-probabilities ranked (the top two sentences are taken as
    # true), P(yes) of a template's question thresholded at 0.5
    assert results["protocol"]["binary_view"] == ("threshold 0.5" if extra else "top-k")


def test_p_yes_equals_the_transformers_generative_kind(vllm, transformers_runs):
    assert vllm["summary"]["zero-shot"] == {"code": 0, "errors": [], "traceback": False}
    ours, theirs = scores(vllm["out"] / "zero-shot"), scores(transformers_runs["zero-shot"])
    assert ours.keys() == theirs.keys() and len(ours) == LIMIT
    for key, record in ours.items():
        for a, b in zip(record["scores"], theirs[key]["scores"], strict=True):
            assert abs(a - b) <= TOLERANCE, (key, a, b)
            assert (a >= 0.5) == (b >= 0.5)  # the binary answers agree
    results = json.loads((vllm["out"] / "zero-shot" / "results.json").read_text())
    engine = results["protocol"]["vllm"]
    assert engine["version"] and engine["dtype"] == "float32" and engine["max_model_len"] == 160
    assert engine["enforce_eager"] is True
    assert results["kind"] == "vllm" and results["protocol"]["device"] == "vllm (cpu)"


@pytest.mark.parametrize("name", ["caption", "caption-pmi"])
def test_likelihood_scores_equal_the_transformers_generative_kind(vllm, transformers_runs, name):
    """Sums of prompt log-probabilities (prefix caching off) against the prefix cache of
    transformers, per sentence and per term."""
    assert vllm["summary"][name] == {"code": 0, "errors": [], "traceback": False}
    ours, theirs = scores(vllm["out"] / name), scores(transformers_runs[name])
    assert ours.keys() == theirs.keys() and len(ours) == LIMIT
    terms = ["scores", "log_p_image", "tokens"] + (["log_p_prior"] if name != "caption" else [])
    for key, record in ours.items():
        for term in terms:
            for a, b in zip(record[term], theirs[key][term], strict=True):
                assert abs(a - b) <= LOG_PROB_TOLERANCE * max(1, abs(b)), (key, term, a, b)
    results = json.loads((vllm["out"] / name / "results.json").read_text())
    assert results["protocol"]["score"] == name
    assert results["protocol"]["vllm"]["enable_prefix_caching"] is False


def test_the_papers_protocol_generates_the_greedy_answers_of_transformers(vllm, transformers_runs):
    assert vllm["summary"]["paper"]["code"] == 0
    ours, theirs = scores(vllm["out"] / "paper"), scores(transformers_runs["paper"])
    assert {k: r["answers"] for k, r in ours.items()} == {
        k: r["answers"] for k, r in theirs.items()
    }
    assert {k: r["scores"] for k, r in ours.items()} == {k: r["scores"] for k, r in theirs.items()}
    generation = json.loads((vllm["out"] / "paper" / "results.json").read_text())["protocol"]
    assert generation["generation"]["max_tokens"] == 5


def test_a_yes_or_no_token_outside_the_top_20_is_still_scored_exactly(vllm, transformers_runs):
    top = vllm["summary"]["top20"]
    asked = {*top["yes_ids"], *top["no_ids"]}
    outside = [p for p in top["prompts"] if not asked <= set(p["top"])]
    assert outside, "every yes/no token is among the top 20 of every prompt"
    ours, theirs = scores(vllm["out"] / "zero-shot"), scores(transformers_runs["zero-shot"])
    for prompt in outside:
        a = ours[prompt["id"]]["scores"][prompt["caption"]]
        b = theirs[prompt["id"]]["scores"][prompt["caption"]]
        assert 0 < a < 1 and math.isclose(a, b, abs_tol=TOLERANCE)


def test_the_endpoint_kind_asks_a_vllm_server_for_the_exact_yes_no_tokens(
    vllm, built_dataset, tmp_path, capsys
):
    out = tmp_path / "endpoint"
    argv = ["--model", SERVED, "--endpoint", vllm["url"], "--data", built_dataset]
    code, err = call(bla_eval, [*argv, "--tasks", TASK, "--limit", LIMIT, "--output", out], capsys)
    assert code == 0, err
    served, offline = scores(out), scores(vllm["out"] / "zero-shot")
    for key, record in served.items():
        for a, b in zip(record["scores"], offline[key]["scores"], strict=True):
            assert abs(a - b) <= TOLERANCE, (key, a, b)
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["logprobs_source"] == "token ids (vLLM logprob_token_ids)"
    # every yes/no token of these prompts lies outside the top 20 (see the test above), and
    # every answer still had both sides
    assert protocol["api"]["answers"] == {"both": sum(len(r["scores"]) for r in served.values())}


@pytest.mark.parametrize("name", ["caption", "caption-pmi"])
def test_the_endpoint_kind_reads_the_likelihood_from_the_servers_prompt_log_probabilities(
    vllm, transformers_runs, built_dataset, tmp_path, capsys, name
):
    """The chat endpoint's prompt log-probabilities (the sentence as the assistant's message,
    continued) against the prefix cache of transformers, per sentence and per term."""
    out = tmp_path / name
    argv = ["--model", SERVED, "--endpoint", vllm["url"], "--data", built_dataset]
    extra = ["--score", name] + (["--pmi-alpha", "1"] if name == "caption-pmi" else [])
    argv += ["--tasks", TASK, "--limit", LIMIT, "--output", out, *extra]
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    ours, theirs = scores(out), scores(transformers_runs[name])
    assert ours.keys() == theirs.keys() and len(ours) == LIMIT
    terms = ["scores", "log_p_image", "tokens"] + (["log_p_prior"] if name != "caption" else [])
    for key, record in ours.items():
        for term in terms:
            for a, b in zip(record[term], theirs[key][term], strict=True):
                assert abs(a - b) <= LOG_PROB_TOLERANCE * max(1, abs(b)), (key, term, a, b)
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["score"] == name and "prompt log-probabilities" in protocol["forward_path"]
    # each distinct sentence once without the image, each (image, sentence) once with it
    sentences = sum(len(r["scores"]) for r in ours.values())
    assert protocol["api"]["requests_sent"] == 1 + 2 * sentences


def test_the_endpoint_kind_chooses_alpha_on_the_learning_split(
    vllm, built_dataset, tmp_path, capsys
):
    out = tmp_path / "chosen"
    argv = ["--model", SERVED, "--endpoint", vllm["url"], "--data", built_dataset]
    argv += ["--tasks", TASK, "--limit", 1, "--output", out, "--score", "caption-pmi"]
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["pmi_alpha_source"].startswith("chosen on active_passive_learning/validation")
    record = scores(out).popitem()[1]
    for score, image, prior in zip(
        record["scores"], record["log_p_image"], record["log_p_prior"], strict=True
    ):
        assert math.isclose(score, image - protocol["pmi_alpha"] * prior, abs_tol=1e-9)


@pytest.mark.parametrize(
    ("name", "fragments"),
    [
        ("architecture", ["cannot serve model", "VipLlavaForConditionalGeneration"]),
        ("kv-cache", ["cannot start model", "--gpu-memory-utilization"]),
        ("too-long", ["cannot score model", "maximum context length is 160 tokens"]),
    ],
)
def test_bad_input_is_one_line_naming_the_model(vllm, name, fragments):
    if name in vllm["bad"]:
        code, err = vllm["bad"][name]
        errors = [line for line in err.splitlines() if ": error: " in line]
        traceback = "Traceback" in err
    else:
        run = vllm["summary"][name]
        code, errors, traceback = run["code"], run["errors"], run["traceback"]
    assert code == 2 and len(errors) == 1 and not traceback, errors
    assert errors[0].startswith("bla-eval: error: ")
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert not (vllm["out"] / name / "scores.jsonl").exists() or name == "too-long"


def test_a_missing_vllm_names_the_extra(tiny_llava, built_dataset, tmp_path):
    code = (
        "import sys; sys.modules['vllm'] = None; from bla_eval.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    argv = eval_args(tiny_llava, built_dataset, tmp_path / "run", "--kind", "vllm", "--limit", "1")
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        'bla-eval: error: vllm is missing: pip install "bla-benchmark[vllm]"'
    )
