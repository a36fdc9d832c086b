"""The ``openai-api`` kind against real HTTP servers on 127.0.0.1 (nothing leaves the machine).

- A chat-completions server written here (``ChatServer``, the standard library's HTTP server)
  that answers 429/5xx on a schedule, can refuse keys and models, can stall: retries lose no
  request and send none twice, a run killed with SIGKILL resumes from the response cache with
  identical scores, and each bad endpoint, key, model or answer gives one line and exit 2.
- ``transformers serve`` with a tiny random LLaVA: the generation path gives the local
  generative kind's greedy answer for every sentence (``transformers serve`` returns no
  log-probabilities, so the kind falls back to generation and says so).

The log-probability path against llama.cpp's server is in ``test_openai_api_llama.py``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from bla_eval.api.answers import from_logprobs, from_text
from bla_eval.api.cache import CACHE_FOLDER
from bla_eval.api.client import retry_after
from bla_eval.api.messages import api_messages, data_url
from bla_eval.api.settings import public_url, resolve_endpoint
from bla_eval.cli import main as bla_eval
from bla_eval.config import RunConfig
from bla_eval.run import evaluate
from bla_eval.runs import RESULTS_FILE, SCORES_FILE
from bla_eval.scorers import KIND_INFO, detect_kind

MODEL = "scripted-vlm"
KEY = "sk-test-0123456789abcdef-SECRET"
KEY_ENV = "BLA_TEST_API_KEY"


def p_yes_of(body: bytes) -> float:
    """The server's P(yes) for a request: a fixed function of its bytes."""
    return 0.05 + 0.9 * int(hashlib.sha256(body).hexdigest()[:8], 16) / 2**32


class ChatServer:
    """A chat-completions endpoint on 127.0.0.1 that logs every request it answers.

    ``failures``: statuses to answer, in order, to the first attempts of a request (by the
    position of its first arrival: ``failures[n % len(failures)]``); ``retry_after`` is sent with
    them. ``stall_after``: after that many successful answers, further requests wait for
    ``release`` and are then dropped unanswered. ``answer``: ``logprobs`` (Yes/No/The top list)
    or ``empty`` (no text, no log-probabilities). ``key``: required bearer token. ``port``: 0 for
    a free one (a later server on the same port is the same endpoint for the response cache).
    """

    def __init__(
        self,
        failures: list[list[int]] | None = None,
        retry_after: str | None = "0",
        stall_after: int | None = None,
        answer: str = "logprobs",
        key: str | None = None,
        port: int = 0,
    ) -> None:
        self.failures = failures or [[]]
        self.retry_after = retry_after
        self.stall_after = stall_after
        self.answer = answer
        self.key = key
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.order: dict[str, int] = {}
        self.attempts: dict[str, list[tuple[float, int]]] = {}
        self.answered: dict[str, int] = {}
        self.stalled = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self.send(200, {"object": "list", "data": [{"id": MODEL}]})
                else:
                    self.send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status, doc = server.respond(self.path, self.headers, body)
                if status == 0:  # stalled, then dropped unanswered
                    self.close_connection = True
                    return
                self.send(status, doc)

            def send(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status in (429, 500, 502, 503) and server.retry_after is not None:
                    self.send_header("Retry-After", server.retry_after)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def respond(self, path: str, headers: Any, body: bytes) -> tuple[int, dict[str, Any]]:
        """The status and document for one request (0: stall and drop)."""
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        sent_key = (headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.key is not None and sent_key != self.key:
            return 401, {"error": {"message": f"Incorrect API key provided: {sent_key}"}}
        request = json.loads(body)
        if request["model"] != MODEL:
            return 404, {"error": {"message": f"The model `{request['model']}` does not exist."}}
        digest = hashlib.sha256(body).hexdigest()
        with self.lock:
            n = self.order.setdefault(digest, len(self.order))
            tries = self.attempts.setdefault(digest, [])
            plan = self.failures[n % len(self.failures)]
            status = plan[len(tries)] if len(tries) < len(plan) else 200
            stall = (
                status == 200
                and self.stall_after is not None
                and sum(self.answered.values()) >= self.stall_after
            )
            tries.append((time.monotonic(), 0 if stall else status))
            if stall:
                self.stalled += 1
            elif status == 200:
                self.answered[digest] = self.answered.get(digest, 0) + 1
        if stall:
            self.release.wait()
            return 0, {}
        if status != 200:
            return status, {"error": {"message": f"scheduled {status}"}}
        return 200, self.completion(request, body)

    def completion(self, request: dict[str, Any], body: bytes) -> dict[str, Any]:
        p = p_yes_of(body)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
        if self.answer == "empty":
            choice["message"] = {"role": "assistant", "content": None}
        else:
            top = [
                {"token": "Yes", "logprob": math.log(0.9 * p)},
                {"token": "No", "logprob": math.log(0.9 * (1 - p))},
                {"token": "The", "logprob": math.log(0.1)},
            ]
            text = "Yes" if p >= 0.5 else "No"
            choice["message"] = {"role": "assistant", "content": text}
            if request.get("logprobs"):
                first = {"token": text, "logprob": top[0 if p >= 0.5 else 1]["logprob"]}
                choice["logprobs"] = {"content": [{**first, "top_logprobs": top}]}
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": f"{MODEL}-0001",
            "system_fingerprint": "fp_test",
            "choices": [choice],
            "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
        }


def read_scores(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / SCORES_FILE).read_text().splitlines()]


def api_config(url: str, out: Path, data: Path, **changes: Any) -> RunConfig:
    settings = dict(
        model=MODEL, output_dir=out, data=str(data), tasks=("ap",), limit=3, endpoint=url
    )
    return RunConfig(**(settings | changes))


# ----------------------------------------------------------------------------- scoring rules


def test_p_yes_sums_spellings_and_counts_a_missing_side():
    top = [
        {"token": "Yes", "logprob": math.log(0.3)},
        {"token": " yes", "logprob": math.log(0.1)},
        {"token": "No", "logprob": math.log(0.2)},
        {"token": "The", "logprob": math.log(0.4)},
    ]
    both = from_logprobs(top, "Yes")
    assert both.outcome == "both" and both.score == pytest.approx(0.4 / 0.6)
    no_missing = from_logprobs(top[:2] + top[3:], "Yes")
    assert (no_missing.score, no_missing.outcome) == (1.0, "no_missing")
    yes_missing = from_logprobs(top[2:], "No")
    assert (yes_missing.score, yes_missing.outcome) == (0.0, "yes_missing")
    neither = from_logprobs(top[3:], "The")
    assert (neither.score, neither.outcome) == (0.5, "neither")


def test_generated_answers_follow_the_authors_rules():
    assert [from_text(t).score for t in ("Yes.", "no", "It is not", "appropriate", "")] == [
        1.0,
        0.0,
        0.0,
        1.0,
        0.5,
    ]
    assert from_text("maybe").outcome == "unparsed"


def test_messages_match_the_chat_path_and_carry_the_original_bytes(tmp_path):
    jpeg = b"\xff\xd8\xff\xe0" + b"0" * 20
    url = data_url(jpeg)
    assert url.startswith("data:image/jpeg;base64,")
    messages = api_messages("A dog runs.", (("A cat sits.", "yes"), ("A cat flies.", "no")), url)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"][0] == {"type": "image_url", "image_url": {"url": url}}
    assert "A cat sits." in messages[0]["content"][1]["text"]
    assert messages[1]["content"] == "yes" and "A dog runs." in messages[4]["content"]
    assert api_messages("A dog runs.")[0]["content"].startswith("Question: Is the sentence")


def test_endpoints_shortcuts_and_retry_after():
    assert resolve_endpoint("http://h:1/v1/chat/completions/")[0] == "http://h:1/v1"
    assert resolve_endpoint("gemini")[1] == "GEMINI_API_KEY"
    assert public_url("https://user:secret@h/v1?key=secret") == "https://h/v1"
    assert retry_after({"Retry-After": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({}) is None


def test_the_kind_is_chosen_by_an_endpoint_only(tmp_path):
    assert KIND_INFO["openai-api"].remote
    assert detect_kind("any/name", endpoint="http://127.0.0.1:1/v1") == "openai-api"
    from bla_space.runner import kind_examples, kind_menu

    assert "openai-api" not in [value for _, value in kind_menu()]
    assert "openai-api" not in [kind for _, kind in kind_examples()]


# ----------------------------------------------------------------------------- retries, cache


def test_retries_lose_no_request_and_send_none_twice(built_dataset, tmp_path):
    failures = [[429], [], [500, 503], [], [502]]
    with ChatServer(failures=failures) as server:
        out = tmp_path / "run"
        results = evaluate(api_config(server.url, out, built_dataset, concurrency=4))
        records, port = read_scores(out), server.port
    assert len(records) == 3
    assert sorted(server.answered.values()) == [1] * 12  # 12 sentences, each answered once
    failed = sum(1 for tries in server.attempts.values() for _, s in tries if s != 200)
    assert failed > 0
    api = results["protocol"]["api"]
    assert api["retries"] == failed and api["requests_sent"] == 12
    assert results["protocol"]["scoring_path"] == "logprobs"
    assert api["server_models"] == {f"{MODEL}-0001": 13} and "fp_test" in api["system_fingerprints"]
    assert api["answers"] == {"both": 12}
    # a re-run into the same folder (--overwrite) sends nothing: every response is cached
    with ChatServer(port=port) as server:
        again = evaluate(api_config(server.url, out, built_dataset).with_(overwrite=True))
    assert server.attempts == {}
    assert read_scores(out) == records and again["tasks"] == results["tasks"]


def test_retry_after_is_honoured(built_dataset, tmp_path):
    with ChatServer(failures=[[429]], retry_after="1") as server:
        evaluate(api_config(server.url, tmp_path / "run", built_dataset, limit=1))
    waits = [tries[1][0] - tries[0][0] for tries in server.attempts.values()]
    assert len(waits) == 4 and min(waits) >= 0.95


def test_the_last_retry_fails_with_one_line(built_dataset, tmp_path, capsys):
    with ChatServer(failures=[[503] * 10]) as server:
        args = cli_args(server.url, tmp_path / "out", built_dataset, "--max-retries", "2")
        line = error_of(args, capsys)
    assert "HTTP 503 after 3 attempt(s)" in line and server.url in line
    assert all(len(tries) == 3 for tries in server.attempts.values())
    assert not (tmp_path / "out").exists()


def cli_args(url: str, out: Path, data: Path, *more: str) -> list[str]:
    return [
        *("--model", MODEL, "--endpoint", url, "--output", str(out)),
        *("--data", str(data), "--tasks", "ap", "--limit", "2", *more),
    ]


@pytest.mark.slow
def test_sigkill_then_resume_gives_identical_scores_from_the_cache(built_dataset, tmp_path):
    reference = tmp_path / "reference"
    with ChatServer() as server:
        evaluate(api_config(server.url, reference, built_dataset, limit=4))
    out = tmp_path / "killed"
    args = cli_args("URL", out, built_dataset, "--images-per-batch", "1", "--concurrency", "2")
    args[args.index("--limit") + 1] = "4"
    with ChatServer(stall_after=6, failures=[[], [429]]) as server:
        args[args.index("URL")] = server.url
        proc = subprocess.Popen([sys.executable, "-m", "bla_eval", *args])
        deadline = time.monotonic() + 120
        while server.stalled < 2 or not _has_lines(out / SCORES_FILE):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never stalled"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first, port = dict(server.answered), server.port
    assert len(read_scores(out)) == 1  # the first image's item; the second's answers are cached
    cached = list((out / CACHE_FOLDER).rglob("*.json"))
    assert len(cached) == 6
    with ChatServer(port=port) as server:
        evaluate(api_config(server.url, out, built_dataset, limit=4, resume=True))
        second = dict(server.answered)
    assert not set(first) & set(second)  # nothing answered before was asked again
    assert sorted({**first, **second}.values()) == [1] * 16
    assert read_scores(out) == read_scores(reference)


def _has_lines(path: Path) -> bool:
    return path.exists() and path.read_bytes().endswith(b"\n")


# ----------------------------------------------------------------------------- errors


def error_of(args: list[str], capsys) -> str:
    """The error line of a failed ``bla-eval`` (progress bars may come before it)."""
    code = bla_eval(args)
    captured = capsys.readouterr()
    assert code == 2, captured
    lines = captured.err.strip().splitlines()
    errors = [line for line in lines if "error" in line.lower()]
    assert errors == lines[-1:] and lines[-1].startswith("bla-eval: error: "), captured.err
    assert "Traceback" not in captured.err and KEY not in captured.out + captured.err
    return lines[-1]


def test_bad_endpoints_give_one_line(built_dataset, tmp_path, capsys, monkeypatch, free_port):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "out"
    closed = f"http://127.0.0.1:{free_port()}/v1"
    assert "cannot reach endpoint" in error_of(cli_args(closed, out, built_dataset), capsys)
    assert "not an http(s) URL" in error_of(cli_args("127.0.0.1:8000", out, built_dataset), capsys)
    line = error_of(cli_args("http://user:" + KEY + "@127.0.0.1:1/v1", out, built_dataset), capsys)
    assert "'http://127.0.0.1:1/v1' must not carry credentials" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("server", "model", "expected"),
    [
        (dict(key=KEY), MODEL, "refused the API key (HTTP 401"),
        (dict(), "not-served", "does not serve model 'not-served' (it serves: scripted-vlm)"),
        (dict(answer="empty"), MODEL, "returned neither log-probabilities nor text"),
    ],
    ids=["refused-key", "unknown-model", "no-logprobs-no-text"],
)
def test_refusals_give_one_line(
    server, model, expected, built_dataset, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY[:-1] + "X")  # a wrong key: it must not be shown either
    out = tmp_path / "out"
    with ChatServer(**server) as chat:
        args = cli_args(chat.url, out, built_dataset, "--api-key-env", KEY_ENV)
        args[args.index("--model") + 1] = model
        line = error_of(args, capsys)
    assert expected in line and chat.url in line
    assert KEY[:-1] not in line
    assert not out.exists()


def test_the_key_is_written_nowhere(built_dataset, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    out = tmp_path / "out"
    with ChatServer(key=KEY) as server:
        assert bla_eval(cli_args(server.url, out, built_dataset, "--api-key-env", KEY_ENV)) == 0
    captured = capsys.readouterr()
    assert KEY not in captured.out + captured.err
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    results = json.loads((out / RESULTS_FILE).read_text())
    assert results["protocol"]["api"]["key_env"] == KEY_ENV


@pytest.mark.slow
def test_an_endpoint_needs_the_remote_kind_and_back(built_dataset, tmp_path, capsys):
    args = cli_args("http://127.0.0.1:1/v1", tmp_path / "o", built_dataset, "--kind", "text")
    assert "--endpoint is for model kind 'openai-api'" in error_of(args, capsys)
    args = [*cli_args("http://x/v1", tmp_path / "o", built_dataset, "--kind", "openai-api")]
    del args[args.index("--endpoint") : args.index("--endpoint") + 2]
    assert "needs --endpoint URL" in error_of(args, capsys)


# ----------------------------------------------------------------------------- transformers serve


@pytest.mark.slow
@pytest.mark.parametrize(
    ("protocol", "tasks"), [("zero-shot", ("ap", "co", "rc")), ("icl-sd", ("ap",))]
)
def test_generation_path_gives_the_local_greedy_answers(
    protocol, tasks, transformers_serve, tiny_llava, built_dataset, tmp_path
):
    common = dict(data=str(built_dataset), tasks=tasks, limit=2, protocol=protocol)
    model = str(tiny_llava)
    evaluate(RunConfig(model, tmp_path / "local", kind="generative", device="cpu", **common))
    results = evaluate(RunConfig(model, tmp_path / "served", endpoint=transformers_serve, **common))
    assert results["kind"] == "openai-api"
    assert results["protocol"]["scoring_path"] == "generation"
    assert "no log-probabilities" in results["protocol"]["scoring_path_reason"]
    assert results["protocol"]["api"]["server_models"]
    expected = {(r["task"], r["id"]): r["answers"] for r in read_scores(tmp_path / "local")}
    answers = {(r["task"], r["id"]): r["answers"] for r in read_scores(tmp_path / "served")}
    assert len(answers) == 2 * len(tasks) and answers.keys() == expected.keys()
    assert len({t for texts in answers.values() for t in texts}) > 2  # the answers vary
    for key, texts in answers.items():
        assert [t.strip() for t in texts] == [t.strip() for t in expected[key]], key
