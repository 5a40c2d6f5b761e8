"""What an ingestion run did and did not manage: persisted with the index, shown by ``kg-rag stats``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kg_rag.model.names import clean_text, name_problem, shown_name
from kg_rag.model.resolution import Resolution

FILE_REASONS = {
    "unsupported_format": "unsupported format",
    "hidden": "hidden",
    "binary_file": "binary data",
    "empty_file": "no text",
    "unreadable": "unreadable",
    "too_large": "too large",
    "unpacks_too_large": "unpacks past the size limit",
    "long_line": "a line too long to split",
    "broken_link": "broken link",
    "link_outside_folder": "link out of the folder",
}
"""Why a file was not read (skip reasons recorded by :func:`~kg_rag.ingest.documents.load_documents`)."""
FILE_WARNINGS = {
    "guessed_encoding": "read with a guessed encoding (not UTF-8; --encoding forces one)",
    "pdf_without_text": "nothing to index (no text layer: a scanned PDF? run OCR first)",
}
"""What was read with a caveat (warnings recorded by :func:`~kg_rag.ingest.documents.load_documents`)."""


@dataclass
class IngestReport:
    """Counts of skipped input by reason, per-chunk extraction failures, and warnings.

    A failed chunk stays in the graph's chunk store, so it can be re-extracted later
    (:meth:`kg_rag.ingest.extract.LLMExtractor.reextract_failed`).
    """

    skipped: Counter = field(default_factory=Counter)
    failures: dict[str, str] = field(default_factory=dict)
    warnings: Counter = field(default_factory=Counter)
    added: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    """A few named examples per skip or warning reason (e.g. which names merged into a self-loop)."""
    usage: Counter = field(default_factory=Counter)
    """Chat calls and prompt/completion tokens spent on extraction (all runs of this index)."""
    resolution: Resolution = field(default_factory=Resolution)
    """The entities merged into others (automatically or by hand) and those kept apart by hand
    (:mod:`kg_rag.model.resolution`): kept with the index so that re-indexing and updates decide the same."""

    MAX_EXAMPLES = 20

    def skip(self, reason: str, n: int = 1, example: str | None = None) -> None:
        self.skipped[reason] += n
        if example is not None:
            self.example(reason, example)

    def warn(self, reason: str, n: int = 1, example: str | None = None) -> None:
        self.warnings[reason] += n
        if example is not None:
            self.example(reason, example)

    def refuses(self, kind: str, *names: str) -> bool:
        """Whether one of ``names`` cannot be an entity (:func:`~kg_rag.model.names.name_problem`: a
        placeholder such as "unknown", or a paragraph); if so it is counted as ``<problem>_<kind>``
        (``placeholder_entity``, ``long_name_member``) with the names as the example."""
        problem = next((found for found in map(name_problem, names) if found), None)
        if problem:
            self.skip(f"{problem}_{kind}", example=" -> ".join(shown_name(n) for n in names))
        return problem is not None

    def example(self, reason: str, text: str) -> None:
        text = clean_text(text)  # a file name may carry lone surrogates; the report is stored with the index
        bucket = self.examples.setdefault(reason, [])
        if len(bucket) < self.MAX_EXAMPLES and text not in bucket:
            bucket.append(text)

    def file_lines(self, limit: int = 10) -> list[str]:
        """One line per reason files were not read, or were read with a caveat (a guessed encoding, with the
        encoding used), counting and naming them (``limit`` names each; the report keeps at most
        :attr:`MAX_EXAMPLES`)."""
        lines = []
        for counts, labels, lead in ((self.skipped, FILE_REASONS, "not read "), (self.warnings, FILE_WARNINGS, "")):
            for reason, label in labels.items():
                n = counts.get(reason, 0)
                if not n:
                    continue
                names = self.examples.get(reason, [])[:limit]
                more = n - len(names)
                shown = ", ".join(names) + (f" ... and {more} more" if more > 0 and names else "")
                noun = ("entry", "entries") if reason == "hidden" else ("file", "files")  # hidden: folders too
                counted = f"{n} {noun[n != 1]}" + (f": {shown}" if shown else "")
                lines.append(f"{lead}({label}): {counted}" if lead else f"{label}: {counted}")
        return lines

    def add_usage(self, usage: dict[str, int]) -> None:
        self.usage.update({k: int(v) for k, v in usage.items()})

    def forget_chunks(self, chunk_ids: set[str]) -> None:
        """Drop what is recorded about chunks that no longer exist (a deleted document's failures, the mentions a
        merge recorded)."""
        self.failures = {c: e for c, e in self.failures.items() if c not in chunk_ids}
        self.resolution.forget_chunks(chunk_ids)

    def fail(self, chunk_id: str, error: BaseException | str) -> None:
        self.failures[chunk_id] = clean_text(error if isinstance(error, str) else f"{type(error).__name__}: {error}")

    def merge(self, other: IngestReport) -> IngestReport:
        self.skipped.update(other.skipped)
        self.warnings.update(other.warnings)
        self.added.update(other.added)
        self.failures.update(other.failures)
        self.usage.update(other.usage)
        for reason, texts in other.examples.items():
            for text in texts:
                self.example(reason, text)
        self.resolution.update(other.resolution)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "skipped": dict(sorted(self.skipped.items())),
            "failures": dict(sorted(self.failures.items())),
            "warnings": dict(sorted(self.warnings.items())),
            "added": dict(sorted(self.added.items())),
            "examples": {k: list(v) for k, v in sorted(self.examples.items())},
            "usage": dict(sorted(self.usage.items())),
            **({"resolution": self.resolution.to_dict()} if self.resolution else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IngestReport:
        return cls(
            skipped=Counter({str(k): int(v) for k, v in (data.get("skipped") or {}).items()}),
            failures={str(k): str(v) for k, v in (data.get("failures") or {}).items()},
            warnings=Counter({str(k): int(v) for k, v in (data.get("warnings") or {}).items()}),
            added=Counter({str(k): int(v) for k, v in (data.get("added") or {}).items()}),
            examples={str(k): [str(x) for x in v][: cls.MAX_EXAMPLES] for k, v in (data.get("examples") or {}).items()},
            usage=Counter({str(k): int(v) for k, v in (data.get("usage") or {}).items()}),
            resolution=Resolution.from_dict(data.get("resolution")),
        )
