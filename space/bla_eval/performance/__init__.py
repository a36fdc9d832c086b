"""Speed scripts: time the engine and the metric on this machine (random weights, no download).

- ``python -m bla_eval.performance.dual_encoder [--limit N]``: the engine against a per-datapoint
  loop (one image and its four sentences per forward pass, as the authors' script), with a
  full-size random CLIP ViT-B/32.
- ``python -m bla_eval.performance.generative [--images 8] [--threads N]``: the generative
  scorer's fast path (image encoded once, shared prompt prefix cached) against its plain per-pair
  path, with a random model of SmolVLM-256M's shape.
- ``python -m bla_eval.performance.metric [--n 100000]``: the metric's formulas on synthetic
  scores.
- ``python -m bla_eval.performance.endpoint --endpoint URL --model NAME``: the ``openai-api``
  kind's datapoints per second against a running server, at concurrency 1 and the default.

The random models come from ``bla_eval.testing``.
"""
