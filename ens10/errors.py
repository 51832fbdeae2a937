"""The one exception of the ens10 package."""

from __future__ import annotations


class ENS10DataError(ValueError):
    """ENS-10 data is missing, incomplete or corrupt, or an argument names data that does not
    exist; the message names the file, variable, level or date and what to do."""
