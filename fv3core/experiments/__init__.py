"""Experiments: test cases run end to end (decomposition, time loop, diagnostics) and the driver."""
