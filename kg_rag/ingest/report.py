"""What an ingestion run did and did not manage: persisted with the index, shown by ``kg-rag stats``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


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

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] += n

    def fail(self, chunk_id: str, error: BaseException | str) -> None:
        self.failures[chunk_id] = error if isinstance(error, str) else f"{type(error).__name__}: {error}"

    def merge(self, other: IngestReport) -> IngestReport:
        self.skipped.update(other.skipped)
        self.warnings.update(other.warnings)
        self.added.update(other.added)
        self.failures.update(other.failures)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "skipped": dict(sorted(self.skipped.items())),
            "failures": dict(sorted(self.failures.items())),
            "warnings": dict(sorted(self.warnings.items())),
            "added": dict(sorted(self.added.items())),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IngestReport:
        return cls(
            skipped=Counter({str(k): int(v) for k, v in (data.get("skipped") or {}).items()}),
            failures={str(k): str(v) for k, v in (data.get("failures") or {}).items()},
            warnings=Counter({str(k): int(v) for k, v in (data.get("warnings") or {}).items()}),
            added=Counter({str(k): int(v) for k, v in (data.get("added") or {}).items()}),
        )
