"""Exception types. All derive from ``ValueError`` where the cause is bad input, so callers that
already catch ``ValueError`` keep working."""

from __future__ import annotations

from pathlib import Path


class KGRagError(Exception):
    """Base class for every error raised on purpose by kg-rag."""


class InputError(KGRagError, ValueError):
    """Bad input or configuration given to kg-rag: a setting out of range, a malformed record or file, an unknown
    name, a wrong kind of object. A ``ValueError`` too, as before."""


class UnknownNameError(KGRagError, KeyError):
    """A document, entity or record named that the graph or index does not hold. A ``KeyError`` too, as before;
    its message is the text given (not its ``repr``)."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class InputTypeError(KGRagError, TypeError):
    """A record of the wrong shape (an unknown field, a value of the wrong type). A ``TypeError`` too, as before."""


class InputNotFoundError(KGRagError, FileNotFoundError):
    """An input file or folder that does not exist. A ``FileNotFoundError`` too, as before."""


class OutputExistsError(KGRagError, FileExistsError):
    """An output that would overwrite something without ``overwrite=True``. A ``FileExistsError`` too, as before."""


class IndexFormatError(KGRagError, ValueError):
    """A saved index file is missing, corrupt, or of an unsupported schema version.

    The message always names the offending file so a user can act on it.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        """The offending file (for a database, ``location`` is the address as given)."""
        self.location = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")  # as given: a database URI is no file path


class IndexNotFoundError(IndexFormatError):
    """There is no kg-rag index at a location: a missing folder, a folder with no index pointer, an empty
    database or a mistyped ``kg_schema``. Every backend raises it for "nothing there", so callers can tell
    that apart from a damaged index; it is an :class:`IndexFormatError`, so code catching that still works."""


class ConfigurationError(KGRagError, ValueError):
    """Something the user must configure is missing (a chat model, an optional extra, ...)."""


class ExtractionError(KGRagError):
    """LLM extraction of one chunk failed after all retries."""


class EntityResolutionError(KGRagError, ValueError):
    """A merge or split of entities the index cannot make: an entity it does not hold, a merge it does not record."""


class StoreError(KGRagError):
    """A database store could not complete a read or write — its disk is full, the server went away — said in one
    line: what happened, and whether the write was rolled back. The database's own error is its ``__cause__``."""
