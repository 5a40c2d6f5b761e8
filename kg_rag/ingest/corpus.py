"""Import of a HippoRAG-format corpus (``[{"title", "text"}]``) with its graph extracted by an extractor — the
NLP extractor (``kg-rag index --corpus FILE --extractor nlp``) or a chat model — rather than read from an OpenIE
file.

Passages are documents identified by their position (``passage-NNNNN``), as for :func:`import_openie`, and a
passage's title names what it is about (``"titled"`` in the chunk's metadata: HippoRAG's passages are ``title`` +
newline + ``text``, so the title is part of what was written, whether or not the text repeats it); a passage
already stored with the same text and extracted by the same extractor is not extracted again, a changed one
replaces its old version, and relations are typed over the whole corpus afterwards (variants merged, rare
predicates backed off).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.ingest.extract import apply_extraction
from kg_rag.ingest.extraction_schema import schema_key_of
from kg_rag.ingest.openie import add_passages, clash_check
from kg_rag.jsonio import load_json
from kg_rag.model.change import replace_documents
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.report import IngestReport

logger = logging.getLogger(__name__)


def import_corpus(
    kg: KnowledgeGraph,
    corpus: str | Path | Sequence[dict[str, Any]],
    extractor: Any,
    *,
    report: IngestReport | None = None,
    progress: bool = False,
    name: str | None = None,
) -> IngestReport:
    """Add the corpus passages to ``kg`` and extract their entities and relations with ``extractor`` (anything
    with ``extract(chunks) -> ExtractionRun`` and a ``typer``). ``name`` names an already parsed ``corpus``.
    A passage whose extraction fails is kept as a chunk and recorded for a retry, as for documents."""
    report = report if report is not None else IngestReport()
    passages = load_json(corpus) if isinstance(corpus, (str, Path)) else corpus
    source = str(corpus) if isinstance(corpus, (str, Path)) else (name or "corpus")
    if not isinstance(passages, list):
        raise InputError(f"{source}: expected a list of {{title, text}} passages")
    clash_check(kg, passages, source)
    key = schema_key_of(extractor)

    def unchanged(_: int, cid: str, text: str) -> bool:
        doc, chunk = kg.docs.get(cid), kg.chunks.get(cid)
        return (
            doc is not None
            and chunk is not None
            and chunk.text == text
            and doc.metadata.get("extracted") is True
            and doc.metadata.get("schema") == key
            and cid not in report.failures
        )

    fragment = KnowledgeGraph()
    with kg.lock:
        added = add_passages(
            fragment, passages, source, report, {"extracted": True, "schema": key}, unchanged, {"titled": True}
        )
    chunks = [chunk for _, chunk in added]
    run = extractor.extract(chunks, progress=progress)
    for chunk in chunks:
        if chunk.id in run.results:
            apply_extraction(fragment, chunk, run.results[chunk.id], extractor.typer, report)
        elif chunk.id in run.failures:
            report.fail(chunk.id, run.failures[chunk.id])
    report.added["chunks_extracted"] += len(run.results)
    replace_documents(kg, fragment, report)
    counts = kg.retype(extractor.typer)  # corpus-level types over every stored predicate
    logger.info("corpus import: %d passages extracted, %d failed; %s", len(run.results), len(run.failures), counts)
    return report
