"""Simulations of the statistics' guarantees (coverage, size, power of ``bla_metric.stats``):
``python -m bla_eval.simulations.coverage``, quoted in ``docs/robustness.md``."""
