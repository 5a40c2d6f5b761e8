"""The demo corpus: a dozen short documents with clearly directional relations (superseding directives, a
reporting line, decisions and their consequences) and the graph extracted from them, shipped as a file so
the demo runs with no LLM."""

from __future__ import annotations

import json
from pathlib import Path

from kg_rag.model.graph import KnowledgeGraph

DEMO_CORPUS = Path(__file__).parent / "_data" / "demo" / "demo_corpus.json"
DEMO_QUESTIONS = (
    "Which directive replaced Directive 2019-03?",
    "Who does Lars Eriksen ultimately report to?",
    "What caused the freeze on new storage buckets, and what did the freeze block?",
    "Which regulation did Statute 2021 revoke, and which policy had implemented it?",
)


def demo_graph() -> KnowledgeGraph:
    """The demo documents and their extracted graph, ready to wrap in a retriever."""
    from kg_rag.ingest.extraction_file import import_extraction_file

    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    return kg


def write_demo_corpus(folder: Path) -> Path:
    """Write the demo documents (one Markdown file each) and their extracted graph; returns the graph file."""
    data = json.loads(DEMO_CORPUS.read_text(encoding="utf-8"))
    docs_dir = folder / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    for doc in data["documents"]:
        (docs_dir / f"{doc['id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
    graph_file = folder / "extractions.json"
    graph_file.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return graph_file
