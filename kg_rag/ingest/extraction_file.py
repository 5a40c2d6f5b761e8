"""Import of a saved extraction file: documents plus what an LLM extracted from each.

Format (``"format": "kg-rag-extractions"``)::

    {"documents": [{"id", "title", "text", "extraction": {"entities": [...], "relations": [...]}}]}

``extraction`` follows :class:`~kg_rag.ingest.extract.ExtractionResult`. The demo corpus ships in this
format so the demo runs with no LLM; it is also how an extraction run can be kept and replayed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kg_rag.graph import Chunk, KnowledgeGraph
from kg_rag.ingest.extract import ExtractionResult, apply_extraction
from kg_rag.ingest.openie import read_json
from kg_rag.ingest.report import IngestReport
from kg_rag.schema import RelationTypeNormalizer
from kg_rag.tokens import count_tokens

FORMAT = "kg-rag-extractions"


def import_extraction_file(
    kg: KnowledgeGraph,
    data: str | Path | dict[str, Any],
    *,
    normalizer: RelationTypeNormalizer | None = None,
    report: IngestReport | None = None,
) -> IngestReport:
    """Add each document as one chunk (id = document id) and merge its extraction."""
    normalizer = normalizer or RelationTypeNormalizer(keep_unknown=True)
    report = report if report is not None else IngestReport()
    name = str(data) if isinstance(data, (str, Path)) else "extractions"
    payload = read_json(data) if isinstance(data, (str, Path)) else data
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise ValueError(f'{name}: expected {{"documents": [...]}} in the {FORMAT} format')
    for n, doc in enumerate(payload["documents"]):
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not doc.get("id"):
            report.skip("bad_document")
            continue
        doc_id = str(doc["id"])
        chunk = Chunk(
            doc_id,
            doc["text"],
            doc_id,
            {"title": str(doc.get("title") or ""), "source": name},
            count_tokens(doc["text"]),
        )
        kg.add_chunk(chunk)
        report.added["chunks"] += 1
        try:
            result = ExtractionResult.model_validate(doc.get("extraction") or {})
        except ValidationError as exc:
            report.fail(doc_id, f"invalid extraction in document {n}: {exc.error_count()} errors")
            continue
        apply_extraction(kg, chunk, result, normalizer, report)
    return report
