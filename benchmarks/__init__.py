"""Benchmarks: each module measures one capability and writes JSON + a Markdown table.

Run them as ``stratoflow bench <name>`` (or ``python -m benchmarks.<module>``).
"""
