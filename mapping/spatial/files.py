"""Atomic file output of StencilFlow reports and generated code (see :mod:`stencils.atomic`)."""

from __future__ import annotations

from stencils.atomic import atomic_write_bytes, atomic_write_text

__all__ = ["atomic_write_bytes", "atomic_write_text"]
