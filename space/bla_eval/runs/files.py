"""The names of the files of a ``bla-eval`` run folder."""

from __future__ import annotations

import re

SCORES_FILE = "scores.jsonl"
RESULTS_FILE = "results.json"
RUN_FILE = "run.json"
LOCK_FILE = ".bla-eval.lock"
PART_PATTERN = "scores.part-{rank}-of-{world}.jsonl"
PART_RE = re.compile(r"^scores\.part-(\d+)-of-(\d+)\.jsonl$")
RUN_COMMAND = "bla-eval"
"""The command named in the marker of a run folder (it writes into its own folders only)."""
RUN_FILES = (RUN_FILE, SCORES_FILE, RESULTS_FILE)
"""The files the marker of a run folder lists (the run also keeps its lock, the parts of a
multi-process run and the endpoint's cache there)."""
