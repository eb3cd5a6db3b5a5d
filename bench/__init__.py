"""Benchmarks and fillers: tools run from a checkout (``python -m bench.load``, ...),
never shipped in the wheel. docs/benchmarks.md says what each measures."""
