"""The stencils package's error."""


class StencilError(ValueError):
    """A stencil cannot be built or run as asked; the message names the field and requirement."""


class InputFileError(ValueError):
    """An input file is missing, unreadable, binary, not UTF-8 or not the format expected; the
    message names the file, what was expected and what to do (:mod:`stencils.textfile`).
    ``reason``: the message without the file's name (for a caller that names it itself)."""

    reason: str = ""


class DatabaseIdentityError(ValueError):
    """An SQLite file is not the stratoflow database asked for (another application's, the
    other stratoflow database, or an incompatible schema version); the message names the file
    and what to do (:mod:`stencils.dbfile`)."""
