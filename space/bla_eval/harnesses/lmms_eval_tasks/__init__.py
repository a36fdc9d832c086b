"""BLA's lmms-eval task folder (``FOLDER``): ``lmms-eval --include_path FOLDER --tasks bla
--model llava_hf ...``.

One task per construction (``bla_active_passive``, ``bla_coordination``, ``bla_relative_clause``;
group ``bla``) on the dataset's per-sentence configs: the authors' question (the ``authors`` prompt
template of ``bla_eval.protocols.templates``, as ``bla-eval --protocol paper`` asks it), the image
in the same chat turn, a greedy answer classified by the authors' rule, and BLA's metrics computed
by the benchmark's ``summarise`` (``bla_metric``) over the four sentences of each datapoint
(``utils.py``).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
"""The folder to give ``lmms-eval --include_path``."""
