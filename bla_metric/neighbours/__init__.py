"""The metrics and published numbers of BLA's neighbouring benchmarks."""
