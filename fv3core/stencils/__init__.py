"""GTScript stencils and the classes that run them (one class per FV3 routine)."""
