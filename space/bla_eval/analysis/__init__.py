"""Analyses of a finished bla-eval run (thesis ch. 7), paired comparison of two runs, Hub export.

``bla-eval analyze RUN_DIR`` (:mod:`.analyze`), ``bla-eval compare RUN_A RUN_B`` (:mod:`.compare`)
and ``bla-eval export RUN_DIR`` (:mod:`.export`); the command-line entry points are in :mod:`.cli`.
The metrics come from ``bla_metric`` (``formulas``, ``significance``); the word-order cues of a
ranking are in :mod:`.orders` and the thesis' chapter-7 numbers in :mod:`.thesis_tables`.
"""
