"""The ``vllm`` kind's runs of ``test_vllm.py``, in one process of the vLLM test environment, so
that they share one engine: ``python vllm_runs.py MODEL DATA OUT TEXT_MODEL``.

Runs ``bla-eval`` (zero-shot, the authors' protocol, and an in-context run whose prompts are
longer than ``--max-model-len``) into ``OUT/<name>``, then asks the same engine for the top 20
log-probabilities of the zero-shot prompts; stops that engine, runs the likelihood scores
(``--score caption``, ``caption-pmi``) on one without prefix caching, then the text-only model
(``TEXT_RUNS``: the sentences' own log-probabilities, and P(yes) of a question); and writes
``OUT/summary.json``: each run's exit code and error lines, the ids of the yes/no tokens and
the top 20 token ids of each prompt.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

TASK, LIMIT = "ap", 2
ENGINE = ["--max-model-len", "160", "--gpu-memory-utilization", "0.1", "--enforce-eager"]
"""Zero-shot prompts of the tiny LLaVA take at most ~110 tokens, in-context ones over 200; an
eager engine starts seconds sooner than one compiled by inductor (vLLM's CPU default)."""
RUNS = {"zero-shot": [], "paper": ["--protocol", "paper"], "too-long": ["--protocol", "icl-sd"]}
TEXT_RUNS = {"text": [], "text-prompt": ["--prompt", "bla"]}
CAPTION_RUNS = {
    "caption": ["--score", "caption"],
    "caption-pmi": ["--score", "caption-pmi", "--pmi-alpha", "1"],
}
"""The likelihood scores, on an engine without prefix caching (started after the first)."""


def run_all(model: str, data: str, out: Path, text_model: str) -> dict:
    from bla_eval.scorers.vllm_engine import shutdown_engines

    summary = {name: run(model, data, out / name, extra) for name, extra in RUNS.items()}
    summary["top20"] = top_twenty(model, data)
    shutdown_engines()  # one engine at a time in this process
    # vLLM's CPU worker sizes the KV cache as the memory fraction less this process's resident
    # memory, which the first engine left high (freed memory stays resident): a fixed 1 GiB
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = "1"
    for name, extra in CAPTION_RUNS.items():
        summary[name] = run(model, data, out / name, extra)
    shutdown_engines()
    for name, extra in TEXT_RUNS.items():
        summary[name] = run(text_model, data, out / name, extra)
    return summary


def run(model: str, data: str, out: Path, extra: list[str]) -> dict:
    """One ``--kind vllm`` run of ``model``: its exit code and error lines."""
    from bla_eval.cli import main as bla_eval

    common = ["--model", model, "--kind", "vllm", "--data", data, "--tasks", TASK]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = bla_eval([*common, "--limit", str(LIMIT), *ENGINE, *extra, "--output", str(out)])
    errors = [line for line in err.getvalue().splitlines() if ": error: " in line]
    return {"code": code, "errors": errors, "traceback": "Traceback" in err.getvalue()}


def top_twenty(model: str, data: str) -> dict:
    """The yes/no token ids and, per zero-shot prompt of the runs, the ids of its 20 most
    likely first answer tokens (from the engine the runs made)."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.items import decode_image
    from bla_eval.scorers import LoadOptions, Query, load_scorer
    from vllm import SamplingParams

    options = LoadOptions(max_model_len=160, gpu_memory_utilization=0.1, enforce_eager=True)
    scorer = load_scorer(model, "vllm", options=options)
    items = load_bla(data, [TASK], limit=LIMIT)
    images = [decode_image(item, item.images[0]) for item in items]
    queries = [[Query(c) for c in item.captions] for item in items]
    params = SamplingParams(max_tokens=1, temperature=0, logprobs=20)
    outputs = scorer.llm.generate(scorer.requests(images, queries), params, use_tqdm=False)
    tops = [[i for i, lp in o.outputs[0].logprobs[0].items() if lp.rank <= 20] for o in outputs]
    pairs = [(item.id, j) for item in items for j in range(len(item.captions))]
    return {
        "yes_ids": scorer.yes_ids,
        "no_ids": scorer.no_ids,
        "prompts": [
            {"id": i, "caption": j, "top": top} for (i, j), top in zip(pairs, tops, strict=True)
        ],
    }


def main(model: str, data: str, out: str, text_model: str) -> None:
    from bla_eval.scorers.vllm_engine import shutdown_engines

    try:
        summary = run_all(model, data, Path(out), text_model)
    finally:
        shutdown_engines()
    (Path(out) / "summary.json").write_text(json.dumps(summary))


if __name__ == "__main__":  # the engine may start worker processes, which import this file
    main(*sys.argv[1:5])
