"""Analytic initial conditions and reference solutions (Williamson et al. 1992)."""
