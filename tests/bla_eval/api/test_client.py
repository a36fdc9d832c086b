"""The endpoint client against a real socket server on 127.0.0.1 (no mocks of ``httpx``): a
connection the server accepts and then drops is retried with the backoff of a 5xx, before the
first answer too; a refused connection and a TLS failure end at once with one line."""

from __future__ import annotations

import json
import math
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from bla_eval.api import client as client_module
from bla_eval.api.client import ChatClient, EndpointError
from bla_eval.api.settings import api_settings
from bla_eval.config import RunConfig

MODEL = "dropping-vlm"


def completion() -> bytes:
    top = [{"token": "Yes", "logprob": math.log(0.6)}, {"token": "No", "logprob": math.log(0.3)}]
    doc = {
        "id": "chatcmpl-drop",
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": "Yes"},
                "logprobs": {"content": [{"token": "Yes", "logprob": -0.5, "top_logprobs": top}]},
            }
        ],
    }
    return json.dumps(doc).encode()


class DroppingServer:
    """Accepts connections on 127.0.0.1; the first ``drops`` are closed after reading the request
    (``how``: ``close`` before any answer, ``partial`` after half a response), the rest answered
    with a chat completion."""

    def __init__(self, drops: int, how: str = "close") -> None:
        self.drops = drops
        self.how = how
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                self.connections += 1
                conn.settimeout(2)
                if not self.read_request(conn) or self.connections <= self.drops:
                    if self.how == "partial":
                        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"id"')
                    continue  # closed by the with block
                answer = completion()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )

    @staticmethod
    def read_request(conn: socket.socket) -> bool:
        """Read one HTTP request (False: not one, such as a TLS handshake)."""
        data = conn.recv(65536)
        if not data.startswith(b"POST"):
            return False
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += conn.recv(65536)
        return True

    def __enter__(self) -> DroppingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.running = False
        self.thread.join(5)
        self.sock.close()


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff of milliseconds (the schedule itself is unchanged)."""
    monkeypatch.setattr(client_module, "BACKOFF_BASE_S", 0.01)


@pytest.fixture
def make_client() -> Iterator[Any]:
    made: list[ChatClient] = []

    def make(url: str, retries: int = 3) -> ChatClient:
        config = RunConfig(MODEL, "out", endpoint=url, max_retries=retries, request_timeout=5.0)
        made.append(ChatClient(api_settings(config), MODEL))
        return made[-1]

    yield make
    for client in made:
        client.close()


BODY = json.dumps({"model": MODEL, "messages": []}).encode()


@pytest.mark.parametrize("how", ["close", "partial"])
def test_dropped_connections_before_the_first_answer_are_retried(make_client: Any, how: str):
    with DroppingServer(drops=2, how=how) as server:
        client = make_client(server.url)
        doc = client.post(BODY)
    assert doc["model"] == MODEL
    assert server.connections == 3
    assert client.retries == 2


def test_connections_dropped_every_time_end_with_one_line(make_client: Any):
    with DroppingServer(drops=100) as server:
        client = make_client(server.url, retries=2)
        with pytest.raises(EndpointError, match="cannot reach endpoint") as err:
            client.post(BODY)
    assert server.connections == 3
    assert "\n" not in str(err.value)


def test_a_refused_connection_fails_at_once(make_client: Any):
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    client = make_client(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(EndpointError, match=f"cannot reach endpoint http://127.0.0.1:{port}/v1"):
        client.post(BODY)
    assert client.retries == 0


def test_a_tls_failure_fails_at_once(make_client: Any):
    with DroppingServer(drops=100) as server:
        client = make_client(server.url.replace("http:", "https:"))
        with pytest.raises(EndpointError, match="cannot reach endpoint") as err:
            client.post(BODY)
    assert client.retries == 0
    assert server.connections == 1
    assert "\n" not in str(err.value)
