"""The ``openai-api`` kind against a hostile chat-completions server on 127.0.0.1: a server that
drips its answer a byte at a time, sends a body larger than the limit, asks to wait for a day,
or answers with anything at all (a table of known cases and a hypothesis fuzz). Every run ends
with exit 0 and results that follow from its scores, or with exit 2 and one line; the key is
never in any output and no file outside the run's own folder changes."""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from bla_eval.api.client import MAX_RESPONSE_BYTES
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RunFolder
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.bla_eval.commands import call, refused, snapshot, user_folder

MODEL = "hostile-vlm"
KEY = "sk-hostile-0123456789abcdef-SECRET"
KEY_ENV = "BLA_TEST_HOSTILE_KEY"

Behaviour = Callable[[BaseHTTPRequestHandler], None]


def completion(**changes: Any) -> dict[str, Any]:
    """A well-formed chat completion with top log-probabilities, changed by ``changes``
    (``choice`` replaces keys of the first choice)."""
    top = [
        {"token": "Yes", "logprob": math.log(0.6)},
        {"token": "No", "logprob": math.log(0.3)},
    ]
    choice = {
        "index": 0,
        "finish_reason": "length",
        "message": {"role": "assistant", "content": "Yes"},
        "logprobs": {
            "content": [{"token": "Yes", "logprob": top[0]["logprob"], "top_logprobs": top}]
        },
    }
    choice |= changes.pop("choice", {})
    doc = {
        "id": "chatcmpl-hostile",
        "model": MODEL,
        "choices": [choice],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }
    return doc | changes


def send_json(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Behaviour:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    return behave


def drip(head: bytes, body: bytes = b"{" * 1000, every: float = 0.25) -> Behaviour:
    """Send ``head`` at once, then ``body`` one byte every ``every`` seconds; the seconds until
    the client hung up are appended to the behaviour's ``held``."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        start = time.monotonic()
        try:
            handler.wfile.write(head)
            handler.wfile.flush()
            for byte in body:
                time.sleep(every)
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
        finally:
            behave.held.append(time.monotonic() - start)

    behave.held = []
    return behave


def huge(declared: bool) -> Behaviour:
    """A valid completion padded past the limit (with or without Content-Length)."""
    padding = " " * (MAX_RESPONSE_BYTES + 1024)
    data = json.dumps(completion(padding=padding)).encode()

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.protocol_version = "HTTP/1.0"  # the body ends when the connection closes
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if declared:
            handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        for start in range(0, len(data), 1 << 20):
            handler.wfile.write(data[start : start + (1 << 20)])

    return behave


class HostileServer:
    """An endpoint on 127.0.0.1 that answers every chat request with ``behaviour``."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                send_json({"data": [{"id": MODEL}]})(self)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                server.requests += 1
                with contextlib.suppress(OSError):  # the client gave up
                    server.behaviour(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def run_args(url: str, out: Path, data: Path, *more: object) -> list[str]:
    argv = ["--model", MODEL, "--endpoint", url, "--output", out, "--data", data]
    argv += ["--tasks", "ap", "--limit", "1", "--api-key-env", KEY_ENV, "--max-retries", "0"]
    return [str(a) for a in [*argv, *more]]


def outcome(root: Path, argv: list[str], capsys) -> tuple[int, str]:
    """Run ``bla-eval argv``: exit 0 with a run that reads back, or exit 2 with one line and
    nothing under ``root`` changed; the key in no output either way."""
    before = snapshot(root)
    code, err = call(bla_eval, argv, capsys)
    assert KEY not in err and KEY not in capsys.readouterr().out
    assert "Traceback" not in err, err
    out = Path(argv[argv.index("--output") + 1])
    if code == 0:
        finished = RunFolder.open(out)
        scores = [s for r in finished.records["active_passive"] for s in r["scores"]]
        assert scores and all(0.0 <= s <= 1.0 for s in scores)
        inside = out.relative_to(root).as_posix() + "/"
        assert {k: v for k, v in snapshot(root).items() if not k.startswith(inside)} == before
        return code, ""
    lines = [line for line in err.strip().splitlines() if ": error: " in line]
    assert code == 2 and len(lines) == 1 and lines[0] == err.strip().splitlines()[-1], err
    assert snapshot(root) == before
    return code, lines[0]


@pytest.fixture
def root(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv(KEY_ENV, KEY)
    user_folder(tmp_path / "mine")
    return tmp_path


# ----------------------------------------------------------------------------- hangs, sizes, waits
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"


@pytest.mark.parametrize(
    "behaviour",
    [drip(HEAD), drip(b"", HEAD + b"{}")],
    ids=["body-one-byte-at-a-time", "headers-one-byte-at-a-time"],
)
def test_a_dripping_server_cannot_hold_a_request_past_its_deadline(
    behaviour, root, built_dataset, capsys
):
    with HostileServer(behaviour) as server:
        argv = run_args(server.url, root / "out", built_dataset, "--request-timeout", "1.5")
        _, line = outcome(root, argv, capsys)
        deadline = time.monotonic() + 10
        while not behaviour.held and time.monotonic() < deadline:  # the server notices
            time.sleep(0.05)
    assert "did not answer within 1.5 s" in line
    assert behaviour.held and behaviour.held[0] < 3.0, behaviour.held  # 1.5 s and one drip


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-closed"])
def test_a_body_over_the_limit_is_refused_and_not_cached(declared, root, built_dataset, capsys):
    good = root / "run"
    with HostileServer(send_json(completion())) as server:
        assert outcome(root, run_args(server.url, good, built_dataset), capsys)[0] == 0
        cached = sorted(p.name for p in (good / "api-cache").rglob("*.json"))
        server.behaviour = huge(declared)
        argv = run_args(server.url, good, built_dataset, "--top-logprobs", "5", "--overwrite")
        code, err = call(bla_eval, argv, capsys)
    line = err.strip().splitlines()[-1]
    assert code == 2 and KEY not in err and "Traceback" not in err, err
    assert "more than 16 MiB" in line and "nothing of it was used or cached" in line
    assert sorted(p.name for p in (good / "api-cache").rglob("*.json")) == cached


@pytest.mark.parametrize(
    "value", ["86400", "inf", "Wed, 21 Oct 2099 07:28:00 GMT"], ids=["a-day", "inf", "a-date"]
)
def test_a_retry_after_beyond_the_cap_is_a_named_error(value, root, built_dataset, capsys):
    behaviour = send_json({"error": {"message": "slow down"}}, 429, {"Retry-After": value})
    with HostileServer(behaviour) as server:
        argv = run_args(server.url, root / "out", built_dataset)
        argv[argv.index("--max-retries") + 1] = "3"
        start = time.monotonic()
        line = outcome(root, argv, capsys)[1]
    assert "before retrying (Retry-After), more than the 300 s" in line
    assert time.monotonic() - start < 60 and server.requests == 1  # not the 300 s cap


# ----------------------------------------------------------------------------- keys
def test_a_key_with_surrounding_whitespace_is_stripped(root, built_dataset, capsys, monkeypatch):
    seen: list[str] = []

    def check_key(handler: BaseHTTPRequestHandler) -> None:
        seen.append(handler.headers.get("Authorization", ""))
        send_json(completion())(handler)

    monkeypatch.setenv(KEY_ENV, f"  {KEY}\n")
    with HostileServer(check_key) as server:
        assert outcome(root, run_args(server.url, root / "out", built_dataset), capsys)[0] == 0
    assert seen and set(seen) == {f"Bearer {KEY}"}


@pytest.mark.parametrize("inner", [" ", "\n", "\x01", "\x7f", "é"])
def test_a_key_with_inner_whitespace_or_control_characters_is_refused(
    inner, root, built_dataset, capsys, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, KEY[:10] + inner + KEY[10:])
    with HostileServer(send_json(completion())) as server:
        line = outcome(root, run_args(server.url, root / "out", built_dataset), capsys)[1]
    assert f"${KEY_ENV} holds whitespace" in line and server.requests == 0
    assert KEY[:10] not in line and KEY[10:] not in line


# ----------------------------------------------------------------------------- secrets
def leaked(root: Path, secrets: list[str], *texts: str) -> list[str]:
    """Where any of ``secrets`` (in any case, or URL-encoded) is in ``texts`` or a file under
    ``root``."""
    forms = {f.lower() for s in secrets for f in (s, quote(s, safe=""))}
    where = [f"text {i}" for i, t in enumerate(texts) for f in forms if f in t.lower()]
    for name, data in snapshot(root).items():
        text = data.decode("utf-8", "replace").lower()
        where += [name for f in forms if f in text]
    return where


def test_a_key_echoed_in_another_case_is_not_printed(root, built_dataset, capsys):
    echo = send_json({"error": {"message": f"Incorrect API key provided: {KEY.upper()}"}}, 401)
    with HostileServer(echo) as server:
        line = outcome(root, run_args(server.url, root / "out", built_dataset), capsys)[1]
    assert "refused the API key" in line and not leaked(root, [KEY], line), line


def test_a_key_in_the_servers_strings_is_not_kept(root, built_dataset, capsys):
    answer = f"Yes. Debug: {KEY.upper()} \x1b[2J"
    doc = completion(model=f"m-{KEY}", system_fingerprint=KEY.lower(), choice={"logprobs": None})
    doc["choices"][0]["message"]["content"] = answer
    out = root / "out"
    with HostileServer(send_json(doc)) as server:
        argv = run_args(server.url, out, built_dataset, "--api-scoring", "generation")
        code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    assert (out / "api-cache").is_dir() and (out / "scores.jsonl").is_file()
    assert not leaked(root, [KEY], err), leaked(root, [KEY], err)
    assert "\x1b" not in (out / "scores.jsonl").read_text()


def test_a_key_echoed_twelve_characters_per_response_leaves_no_piece_of_eight(
    root, built_dataset, capsys
):
    sent: list[int] = []

    def drip_key(handler: BaseHTTPRequestHandler) -> None:
        start = 12 * (len(sent) % 3)
        sent.append(start)
        piece = KEY[start : start + 12]
        doc = completion(model=piece, system_fingerprint=piece, choice={"logprobs": None})
        doc["choices"][0]["message"]["content"] = f"Yes {piece}"
        send_json(doc)(handler)

    out = root / "out"
    with HostileServer(drip_key) as server:
        argv = run_args(server.url, out, built_dataset, "--api-scoring", "generation")
        code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    assert len(sent) >= 3  # every piece of the key was sent
    pieces = {KEY[i : i + 8].lower() for i in range(len(KEY) - 7)}
    for name, data in {**snapshot(root), "stderr": err.encode()}.items():
        text = data.decode("utf-8", "replace").lower()
        assert not [p for p in pieces if p in text], name
    results = json.loads((out / "results.json").read_text())
    assert "***" in json.dumps(results) and "***" in (out / "scores.jsonl").read_text()


@pytest.mark.parametrize(
    ("endpoint", "secret"),
    [
        ("{url}?api_key=QSECRET123", "QSECRET123"),
        ("{url}?KEY=QSECRET123&route=a", "QSECRET123"),
        ("{url}?token=Q%2FSECRET", "Q/SECRET"),
    ],
)
def test_a_key_in_the_query_echoed_by_a_404_is_not_printed(
    endpoint, secret, root, built_dataset, capsys
):
    def echo(handler: BaseHTTPRequestHandler) -> None:
        send_json({"error": {"message": f"no route {handler.path}"}}, 404)(handler)

    with HostileServer(echo) as server:
        argv = run_args(endpoint.format(url=server.url), root / "out", built_dataset)
        line = outcome(root, argv, capsys)[1]
    assert "HTTP 404" in line and not leaked(root, [secret], line), line


@pytest.mark.parametrize("password", ["pa/ss#word", "pa#ss", "p@ss/w?rd", "12/34"])
def test_url_credentials_holding_separators_are_refused_unshown(
    password, root, built_dataset, capsys
):
    with HostileServer(send_json(completion())) as server:
        url = server.url.replace("http://", f"http://user:{password}@")
        line = outcome(root, run_args(url, root / "out", built_dataset), capsys)[1]
    assert "must not carry credentials" in line and server.requests == 0
    assert not leaked(root, [password], line), line


def test_the_cache_is_keyed_by_the_query_string(root, built_dataset, capsys):
    out = root / "out"
    with HostileServer(send_json(completion())) as server:
        for route, new_requests in [("a", True), ("a", False), ("b", True)]:
            before = server.requests
            argv = run_args(f"{server.url}?route={route}", out, built_dataset, "--overwrite")
            assert call(bla_eval, argv, capsys)[0] == 0
            assert (server.requests > before) == new_requests, route


# ----------------------------------------------------------------------------- responses
def _choice(**changes: Any) -> dict[str, Any]:
    return completion(choice=changes)


def _top(logprob: Any) -> dict[str, Any]:
    top = [{"token": "Yes", "logprob": logprob}, {"token": "No", "logprob": -1.0}]
    return _choice(logprobs={"content": [{"token": "Yes", "logprob": -0.5, "top_logprobs": top}]})


RESPONSES: dict[str, tuple[Any, str]] = {
    "a positive log-probability": (_top(0.5), "top_logprobs[0].logprob is 0.5"),
    "a huge log-probability": (_top(1e308), "not a log-probability"),
    "an infinite log-probability": (
        b'{"choices": [{"logprobs": {"content": [{"token": "Yes", "logprob": -Infinity}]}}]}',
        "not a log-probability",
    ),
    "a boolean log-probability": (_top(True), "logprob is True"),
    "a string log-probability": (_top("-0.1"), "not a log-probability"),
    "logprobs.content as an object": (_choice(logprobs={"content": {"a": 1}}), "not a list"),
    "message as a string": (_choice(message="Yes"), "message is a string, not an object"),
    "negative token counts": (
        completion(usage={"prompt_tokens": -100, "completion_tokens": 1}),
        "usage.prompt_tokens is -100",
    ),
    "boolean token counts": (completion(usage={"prompt_tokens": True}), "usage.prompt_tokens"),
    "no choices": (completion(choices=[]), "choices is a list, not a non-empty list"),
    "choices as an object": (completion(choices={"0": {}}), "choices is an object"),
    "a list body": ([completion()], "the body is a list"),
    "not JSON": (b"<html>hello</html>", "not a chat completion"),
    "a 5000-digit number": (b'{"choices": [' + b"9" * 5000 + b"]}", "not a chat completion"),
    "JSON nested 100000 deep": (b"[" * 100_000 + b"]" * 100_000, "not a chat completion"),
    "a model id that is a number": (completion(model=7), "model is a number"),
    "content parts with a numeric text": (
        _choice(message={"content": [{"type": "text", "text": 5}]}),
        "message.content[0].text is a number",
    ),
}


@pytest.mark.parametrize("case", list(RESPONSES))
def test_a_hostile_response_is_refused_in_one_line(case, root, built_dataset, capsys):
    doc, fragment = RESPONSES[case]
    with HostileServer(send_json(doc)) as server:
        line = outcome(root, run_args(server.url, root / "out", built_dataset), capsys)[1]
    assert fragment in line and server.url in line, line


CAPTION_RESPONSES: dict[str, tuple[Any, str]] = {
    "no prompt log-probabilities": (completion(), "returned no usable prompt log-probabilities"),
    "a positive prompt log-probability": (
        completion(prompt_token_ids=[1, 5], prompt_logprobs=[None, {"5": {"logprob": 0.5}}]),
        "prompt_logprobs[1]['5'].logprob is 0.5",
    ),
    "token ids that are not ids": (
        completion(prompt_token_ids=[1, -5], prompt_logprobs=None),
        "prompt_token_ids is [1, -5]",
    ),
    "one log-probability for two tokens": (
        completion(prompt_token_ids=[1, 5, 6], prompt_logprobs=[None, {"5": {"logprob": -1}}]),
        "one per prompt token",
    ),
}


@pytest.mark.parametrize("case", list(CAPTION_RESPONSES))
def test_a_likelihood_without_usable_prompt_log_probabilities_is_one_line(
    case, root, built_dataset, capsys
):
    doc, fragment = CAPTION_RESPONSES[case]
    with HostileServer(send_json(doc)) as server:
        argv = run_args(server.url, root / "out", built_dataset, "--score", "caption")
        line = outcome(root, argv, capsys)[1]
    assert fragment in line and server.url in line, line


def test_a_response_arriving_after_the_failure_is_not_cached(root, built_dataset, capsys):
    """The first sentence's answer fails the run while the other sentences' requests are in
    flight; they end before the run's folder is removed, so none writes a cache entry after it."""
    bad = send_json(CAPTION_RESPONSES["one log-probability for two tokens"][0])
    late = threading.Event()

    def behave(handler: BaseHTTPRequestHandler) -> None:
        if server.requests == 2:  # the model's head, then the first sentence: answered at once
            threading.Timer(1.0, late.set).start()  # the others, 1 s later (the run waits)
        elif server.requests > 2:
            late.wait(10)  # set 1 s after the first sentence, or once the run has ended
            time.sleep(0.2)
        bad(handler)

    with HostileServer(behave) as server:
        argv = run_args(server.url, root / "out", built_dataset, "--score", "caption")
        argv += ["--concurrency", "4"]
        before = snapshot(root)
        code, err = call(bla_eval, argv, capsys)
        late.set()
        time.sleep(1.0)  # what a request still in flight would now write
    assert code == 2 and "one per prompt token" in err, err
    assert server.requests > 2
    assert snapshot(root) == before


# ----------------------------------------------------------------------------- fuzz
NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**20), 10**20)
VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
PLACES = [
    ("choices",),
    ("choices", 0),
    ("choices", 0, "message"),
    ("choices", 0, "message", "content"),
    ("choices", 0, "logprobs"),
    ("choices", 0, "logprobs", "content"),
    ("choices", 0, "logprobs", "content", 0, "logprob"),
    ("choices", 0, "logprobs", "content", 0, "top_logprobs"),
    ("choices", 0, "logprobs", "content", 0, "top_logprobs", 0, "logprob"),
    ("choices", 0, "logprobs", "content", 0, "top_logprobs", 1, "token"),
    ("usage",),
    ("usage", "prompt_tokens"),
    ("usage", "completion_tokens"),
    ("model",),
]


def _replaced(doc: Any, place: tuple, value: Any) -> Any:
    if not place:
        return value
    head, rest = place[0], place[1:]
    copy = list(doc) if isinstance(doc, list) else dict(doc)
    copy[head] = _replaced(copy[head], rest, value)
    return copy


@pytest.mark.slow
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,  # the same 20 responses every run: CI's outcome does not depend on a draw
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    place=st.sampled_from(PLACES),
    value=VALUES | NUMBERS | st.lists(st.dictionaries(st.sampled_from(["type", "text"]), VALUES)),
)
def test_fuzzed_responses_score_consistently_or_are_refused(
    root, built_dataset, capsys, place, value
):
    doc = _replaced(completion(), place, value)
    where = Path(tempfile.mkdtemp(dir=root))
    with HostileServer(send_json(json.dumps(doc).encode())) as server:
        code, line = outcome(root, run_args(server.url, where / "out", built_dataset), capsys)
    event(f"exit {code}")
    if code == 2:
        assert server.url in line or "cannot" in line, line


@pytest.mark.parametrize("value", [1e300, float("inf"), float("nan"), 0, -1, True])
def test_a_request_timeout_beyond_its_bounds_is_named_in_python(value) -> None:
    """The settings object bounds what the parser bounds (``argument --request-timeout`` is
    in the hostile table of the commands)."""
    from bla_eval.config import RunConfig

    with pytest.raises(ValueError) as error:
        RunConfig("m", "out", endpoint="http://127.0.0.1:1/v1", request_timeout=value)
    assert str(error.value).startswith(
        "request_timeout must be a number from 0.001 to 86400, got "
    ), error.value


@pytest.mark.parametrize("option", ["--price-input", "--price-output"])
@pytest.mark.parametrize("value", ["1e308", "inf", "nan", "-1", "1000001"])
def test_a_price_that_would_make_the_cost_infinite_is_refused(option, value, tmp_path, capsys):
    from bla_eval.config import RunConfig

    argv = run_args("http://127.0.0.1:1/v1", tmp_path / "out", tmp_path, option, value)
    line = refused(bla_eval, argv, capsys, f"argument {option}: must be a number from 0 to 1e+06")
    assert value in line and not (tmp_path / "out").exists()
    name = option.removeprefix("--").replace("-", "_")
    with pytest.raises(ValueError, match=f"{name} must be a number from 0 to 1e"):
        RunConfig("m", "out", endpoint="http://127.0.0.1:1/v1", **{name: float(value)})
