"""Exception types. All derive from ``ValueError`` where the cause is bad input, so callers that
already catch ``ValueError`` keep working."""

from __future__ import annotations

from pathlib import Path


class KGRagError(Exception):
    """Base class for every error raised on purpose by kg-rag."""


class IndexFormatError(KGRagError, ValueError):
    """A saved index file is missing, corrupt, or of an unsupported schema version.

    The message always names the offending file so a user can act on it.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class IndexNotFoundError(KGRagError, ValueError):
    """There is no kg-rag index at a location (an empty database, or a mistyped ``kg_schema``)."""


class ConfigurationError(KGRagError, ValueError):
    """Something the user must configure is missing (a chat model, an optional extra, ...)."""


class ExtractionError(KGRagError):
    """LLM extraction of one chunk failed after all retries."""
