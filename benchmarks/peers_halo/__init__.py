"""Peers of the halo benchmark: pace-util's HaloUpdater, run in a venv of its own.

``pace_worker.py`` is a script for that venv (pace-util 0.9.0 needs numpy<2); ``pace_venv``
creates the venv and runs the worker from the halo benchmark; ``report`` turns the measurements
into ratios, the weak-scaling table and the Markdown page.
"""
