"""A stand-in for the Hugging Face Hub and its Inference Providers router on 127.0.0.1, speaking
real HTTP to the real clients (``huggingface_hub``, the engine's ``httpx`` client, Gradio's
local sign-in): ``/api/whoami-v2``, the model list and a model's provider mapping; the router's
``/v1/models`` (providers and prices) and ``/v1/chat/completions`` with images.

``org/vlm-logprobs`` answers with ``top_logprobs`` (at most 5; a request for more is refused
with 400, as the router's providers do); ``org/vlm-text`` answers text only. The first attempt
of every third distinct request is answered 429 with ``Retry-After: 0``. Every request must carry
``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOKEN = "mock-oauth-token-for-local-dev"
"""The token Gradio's local sign-in gives a visitor (``gradio.oauth``)."""
LOGPROBS_MODEL, TEXT_MODEL = "org/vlm-logprobs", "org/vlm-text"
PRICE = {"input": 0.25, "output": 1.0}


def p_yes(messages: Any) -> float:
    """The stand-in model's P(yes) for a conversation: a fixed function of it."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    return 0.05 + 0.9 * int(digest[:8], 16) / 2**32


class Router:
    """The stand-in, serving on a free port until :meth:`close`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}
        self.throttled = 0
        self.completions = 0
        self.bad_auth = 0
        self.models_body: bytes | None = None
        """When set, the raw body ``/v1/models`` answers (a router gone wrong)."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def get(self, path: str) -> tuple[int, Any]:
        route = urlsplit(path).path.rstrip("/")
        if route == "/api/whoami-v2":
            user = {"type": "user", "name": "visitor", "fullname": "A Visitor"}
            return 200, {**user, "avatarUrl": "", "auth": {"type": "access_token"}}
        if route == "/api/models":
            return 200, [{"id": m, "_id": m, "likes": 1} for m in (LOGPROBS_MODEL, TEXT_MODEL)]
        if route.startswith("/api/models/"):
            model = route.removeprefix("/api/models/")
            mapping = {"prov-a": {"status": "live", "providerId": model, "task": "conversational"}}
            return 200, {"id": model, "_id": model, "inferenceProviderMapping": mapping}
        if route == "/v1/models" and self.models_body is not None:
            return 200, self.models_body
        if route == "/v1/models":
            priced = {"provider": "prov-a", "status": "live", "pricing": PRICE}
            return 200, {
                "object": "list",
                "data": [
                    {"id": LOGPROBS_MODEL, "owned_by": "org", "providers": [priced]},
                    {"id": TEXT_MODEL, "owned_by": "org", "providers": [{"provider": "prov-b"}]},
                ],
            }
        return 404, {"error": f"no route {route}"}

    def post(self, path: str, headers: Any, body: bytes) -> tuple[int, Any]:
        if urlsplit(path).path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            with self.lock:
                self.bad_auth += 1
            return 401, {"error": {"message": "Invalid credentials in Authorization header"}}
        request = json.loads(body)
        model = str(request.get("model", "")).split(":")[0]
        if model not in (LOGPROBS_MODEL, TEXT_MODEL):
            return 404, {"error": {"message": f"model {model} not served"}}
        if int(request.get("top_logprobs") or 0) > 5:
            return 400, {"error": {"message": "top_logprobs must be at most 5"}}
        digest = hashlib.sha256(body).hexdigest()
        with self.lock:
            first = digest not in self.seen
            self.seen[digest] = self.seen.get(digest, len(self.seen))
            if first and self.seen[digest] % 3 == 0:
                self.throttled += 1
                return 429, {"error": {"message": "rate limited"}}
            self.completions += 1
        return 200, self.completion(request, model)

    def completion(self, request: dict, model: str) -> dict:
        p = p_yes(request["messages"])
        text = "Yes" if p >= 0.5 else "No"
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "length",
            "message": {"role": "assistant", "content": text},
        }
        if model == LOGPROBS_MODEL and request.get("logprobs"):
            top = [
                {"token": "Yes", "logprob": math.log(0.9 * p)},
                {"token": "No", "logprob": math.log(0.9 * (1 - p))},
                {"token": "The", "logprob": math.log(0.1)},
            ][: int(request.get("top_logprobs") or 0)]
            first = {"token": text, "logprob": math.log(0.9 * max(p, 1 - p))}
            choice["logprobs"] = {"content": [{**first, "top_logprobs": top}]}
        return {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": 900, "completion_tokens": 1, "total_tokens": 901},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        router = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send(*router.get(self.path))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send(*router.post(self.path, self.headers, body))

            def send(self, status: int, doc: Any) -> None:
                data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

        return Handler
