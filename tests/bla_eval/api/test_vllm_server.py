"""A vLLM server behind the endpoint (a server on 127.0.0.1 that lists its model as vLLM's):
``/tokenize`` is asked within one ``--request-timeout`` in all, a slow one falls back to top-k in
one warning line, and one that gives a yes and a no spelling the same id is refused."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from bla_eval.api.client import ChatClient, EndpointError
from bla_eval.api.settings import api_settings
from bla_eval.api.vllm_server import yes_no_token_ids
from bla_eval.config import RunConfig
from bla_eval.protocols.templates import NO_WORDS, YES_WORDS

MODEL = "served-by-vllm"
Tokenize = Callable[[str], Any]


def distinct(word: str) -> Any:
    return {"tokens": [100 + (YES_WORDS + NO_WORDS).index(word)]}


@pytest.fixture
def server() -> Iterator[Callable[[Tokenize], str]]:
    started: list[ThreadingHTTPServer] = []

    def start(tokenize: Tokenize) -> str:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send({"data": [{"id": MODEL, "owned_by": "vllm"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with contextlib.suppress(OSError):  # the client gave up
                    self.send(tokenize(body["prompt"]))

            def send(self, doc: Any) -> None:
                data = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1"

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def client(url: str, timeout: float = 5.0) -> ChatClient:
    return ChatClient(
        api_settings(RunConfig(MODEL, "out", endpoint=url, request_timeout=timeout)), MODEL
    )


def test_the_yes_and_no_ids_of_a_vllm_server(server):
    yes, no = yes_no_token_ids(client(server(distinct)))
    assert yes and no and not set(yes) & set(no)


def test_a_slow_tokenize_is_bounded_by_one_request_timeout_and_said(server, caplog):
    def slow(word: str) -> Any:
        time.sleep(0.4)
        return distinct(word)

    start = time.monotonic()
    with caplog.at_level(logging.WARNING):
        assert yes_no_token_ids(client(server(slow), timeout=1.0)) is None
    assert time.monotonic() - start < 2.0  # not one timeout per spelling
    [record] = caplog.records
    assert "/tokenize gave no usable answer" in record.getMessage()
    assert "top log-probabilities" in record.getMessage() and "\n" not in record.getMessage()


def test_one_id_for_yes_and_no_is_refused(server):
    with pytest.raises(EndpointError, match="gives token id 7 for both a yes and a no") as err:
        yes_no_token_ids(client(server(lambda word: {"tokens": [7]})))
    assert "\n" not in str(err.value)
