"""The response cache: keyed by the full endpoint URL (query string included), capped in size."""

from __future__ import annotations

from pathlib import Path

from bla_eval.api.cache import ResponseCache, cache_key


def test_the_key_holds_the_query_string():
    body = b'{"model":"m"}'
    assert cache_key("http://h/v1?route=a", body) != cache_key("http://h/v1?route=b", body)


def test_a_full_cache_keeps_no_more(tmp_path: Path):
    doc = {"choices": [{"message": {"content": "x" * 100}}]}
    cache = ResponseCache(tmp_path, max_bytes=400)
    cache.put("aa1", "http://h/v1", doc)
    cache.put("aa2", "http://h/v1", doc)
    cache.put("aa3", "http://h/v1", doc)
    assert cache.get("aa1") == doc and cache.get("aa3") is None and cache.full
    assert len(list(tmp_path.rglob("*.json"))) == 2
    reopened = ResponseCache(tmp_path, max_bytes=400)  # what is on disk counts
    reopened.put("aa4", "http://h/v1", doc)
    assert reopened.get("aa4") is None and reopened.get("aa2") == doc


def test_an_entry_that_is_a_fifo_or_nested_too_deep_is_asked_again(tmp_path: Path):
    """Neither waits for a writer nor recurses: the entry reads as absent (fetched again)."""
    import os

    cache = ResponseCache(tmp_path)
    cache.path("aa1").parent.mkdir()
    os.mkfifo(cache.path("aa1"))
    cache.path("aa2").write_text('{"response": ' + "[" * 100_000 + "}", encoding="utf-8")
    assert cache.get("aa1") is None and cache.get("aa2") is None
