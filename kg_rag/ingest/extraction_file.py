"""Import of a saved extraction file: documents plus what an LLM extracted from each.

Format (``"format": "kg-rag-extractions"``)::

    {"documents": [{"id", "title", "text", "extraction": {"entities": [...], "relations": [...]}}]}

``extraction`` follows :class:`~kg_rag.ingest.extract.ExtractionResult` (a relation may add its ``predicate``);
``docs/extraction.md`` documents every field. The demo corpus ships in this format so the demo runs with no LLM;
it is also how an extraction run can be kept and replayed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from kg_rag.errors import InputError
from kg_rag.ingest.extract import ExtractionResult, ParsedRelation, apply_extraction
from kg_rag.jsonio import load_json
from kg_rag.model import Chunk, KnowledgeGraph
from kg_rag.model.change import replace_documents
from kg_rag.model.relation_types import RelationTyper
from kg_rag.model.report import IngestReport
from kg_rag.tokens import count_tokens

FORMAT = "kg-rag-extractions"


class SavedExtraction(ExtractionResult):
    """A document's ``extraction`` in a file: relations may carry the ``predicate`` they were read from (as the NLP
    extractor's do), which is stored and, for a relation without a ``type``, types it."""

    relations: list[ParsedRelation] = Field(default_factory=list)  # type: ignore[assignment]


def check_extraction_payload(payload: Any, name: str = "extractions") -> dict[str, Any]:
    """The parsed file, when it has the format's shape (``{"documents": [...]}``); cheap, so a caller can check
    before it creates anything."""
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise InputError(f'{name}: expected {{"documents": [...]}} in the {FORMAT} format')
    return payload


def import_extraction_file(
    kg: KnowledgeGraph,
    data: str | Path | dict[str, Any],
    *,
    typer: RelationTyper | None = None,
    report: IngestReport | None = None,
    source: str | None = None,
) -> IngestReport:
    """Add each document as one chunk (id = document id) and merge its extraction.

    A document id already in ``kg`` replaces that document (what the old version said and the new one does
    not is forgotten). The same id twice in one file is an error that names the ids, raised before ``kg`` is
    touched. ``source`` names already parsed ``data`` (its file) in messages and document records.
    """
    typer = typer or RelationTyper()
    report = report if report is not None else IngestReport()
    name = str(data) if isinstance(data, (str, Path)) else source or "extractions"
    payload = check_extraction_payload(load_json(data) if isinstance(data, (str, Path)) else data, name)
    ids = Counter(str(d["id"]) for d in payload["documents"] if isinstance(d, dict) and d.get("id"))
    duplicates = sorted(i for i, n in ids.items() if n > 1)
    if duplicates:
        shown = ", ".join(repr(d) for d in duplicates[:5]) + (" ..." if len(duplicates) > 5 else "")
        raise InputError(f"{name}: {len(duplicates)} document ids occur more than once: {shown}")
    fragment = KnowledgeGraph()
    fragment_report = IngestReport()
    for n, doc in enumerate(payload["documents"]):
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not doc.get("id"):
            fragment_report.skip("bad_document", example=f"document {n}")
            continue
        doc_id = str(doc["id"])
        title = str(doc.get("title") or "")
        fragment.add_document(
            doc_id,
            source=name,
            title=title or None,
            content_hash=hashlib.sha256(doc["text"].encode("utf-8", "surrogatepass")).hexdigest(),
        )
        chunk = Chunk(doc_id, doc["text"], doc_id, {"title": title, "source": name}, count_tokens(doc["text"]))
        fragment.add_chunk(chunk)
        fragment_report.added["chunks"] += 1
        try:
            result = SavedExtraction.model_validate(doc.get("extraction") or {})
        except ValidationError as exc:
            errors = exc.error_count()
            fragment_report.fail(
                doc_id, f"invalid extraction in document {n}: {errors} error{'s' if errors != 1 else ''}"
            )
            continue
        apply_extraction(fragment, chunk, result, typer, fragment_report)
    replace_documents(kg, fragment, report)
    return report.merge(fragment_report)
