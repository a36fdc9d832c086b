"""A real sweep folder for the Space's tests: ``bla-eval sweep`` on two tiny random-weight CLIPs x
BLA (AP) and VALSE (existence) x zero-shot and a shuffled-image control (eight cells, four of
each model, two of them BLA cells of one model)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LIMIT = 3
MODELS = ("tiny-clip", "clip2")


def make_sweep(tiny_clip: Path, tiny_model, built_dataset: Path, root: Path) -> Path:
    """The sweep folder ``root / "sweep"`` made by ``bla-eval sweep`` (its leaderboards too)."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.cli import main
    from bla_eval.testing.dual_encoders import build_clip

    from builders import valse

    valse_repo = root / "valse"
    valse.build_valse(SHARED / "valse", [SHARED / "BLA_Benchmark" / "images"], valse_repo)
    texts = sorted({c for p in load_bla(str(built_dataset)) for c in p.captions})
    clip2 = tiny_model("clip", texts, build_clip)
    plan = root / "plan.yaml"
    plan.write_text(
        f"""
models:
  - {{model: {tiny_clip}, name: tiny-clip}}
  - {{model: {clip2}, name: clip2}}
benchmarks:
  - {{benchmark: bla, data: {built_dataset}, tasks: [ap]}}
  - {{benchmark: valse, data: {valse_repo}, tasks: [existence]}}
protocols:
  - zero-shot
  - {{name: shuffled, control: shuffled}}
options: {{limit: {LIMIT}, device: cpu, batch_size: 16}}
""",
        encoding="utf-8",
    )
    out = root / "sweep"
    argv = ["sweep", str(plan), "--output", str(out), "--quiet", "--resamples", "50"]
    assert main(argv) == 0
    return out


def cell_ids(benchmark: str | None = None) -> set[str]:
    """The ids of the sweep's cells (of one benchmark)."""
    return {
        f"{bench}/{protocol}/{model}"
        for bench in ("bla", "valse")
        for protocol in ("zero-shot", "shuffled")
        for model in MODELS
        if benchmark in (None, bench)
    }
