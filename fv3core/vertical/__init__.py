"""FV3's vertical coordinate: the hybrid sigma-pressure levels (``ak``, ``bk``) and the
remapping of the Lagrangian layers back to them."""
